//! Typing on a wlroots compositor (sway, Hyprland, river) through a virtual
//! keyboard (`zwp_virtual_keyboard_v1`) whose keymap gives every character
//! to type a key of its own, on the key's only level: no Shift, no AltGr,
//! nothing the app must combine.
//!
//! enigo's Wayland typing maps characters onto the seat's layout, with
//! Shift and AltGr sent as modifier events, and re-uploads its keymap key
//! by key. Chromium on Wayland (every Electron app) read those keys with the
//! layout it had and dropped the modifiers: "Köln: Zürich!" arrived as
//! "ln rich" (crates/platform/tests/paste_wayland_apps.rs). Here a text's
//! characters are bound first, in one keymap upload, and typed once the
//! compositor has it and the apps have had a moment to read it.
//!
//! The keymap is uploaded again for every text: a compositor applies its
//! own layout settings to every keyboard, virtual ones included, whenever
//! they change (sway's `input type:keyboard xkb_layout`), which silently
//! replaces ours. Line breaks and tabs are the real Enter and Tab keys.

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsFd, FromRawFd};
use std::time::{Duration, Instant};

use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_keyboard, wl_registry, wl_seat};
use wayland_client::{Connection, Dispatch, EventQueue, QueueHandle};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};

/// The keys characters are bound to, as evdev codes: the main block's
/// character keys, the space bar, the keypad and a few more that no app
/// treats as anything but a character. Apps know other keys by their code
/// whatever the keymap says: Chromium took characters bound to the codes
/// of Ctrl, Alt, Backspace or F1 as those keys (no character arrived), and
/// GTK took F1's for Help.
const CHARACTER_KEYS: [std::ops::RangeInclusive<u32>; 9] = [
    2..=13,    // 1 … =
    16..=27,   // Q … ]
    30..=41,   // A … `
    43..=53,   // \ … /
    57..=57,   // space
    71..=83,   // the keypad's 7 … .
    86..=86,   // the key left of Z on ISO keyboards
    117..=117, // the keypad's =
    121..=121, // the keypad's ,
];

/// Line breaks and tabs go to the real Enter and Tab keys (xkb codes;
/// evdev's 28 and 15), bound in every keymap: apps that read those keys by
/// their code then do what the key does.
const ENTER: u32 = 36;
const TAB: u32 = 23;

/// The key a line break or a tab is typed with.
fn fixed_key(c: char) -> Option<u32> {
    match c {
        '\n' => Some(ENTER),
        '\t' => Some(TAB),
        _ => None,
    }
}

/// How many characters one keymap binds: one per character key. A text
/// with more distinct characters is typed in pieces, a keymap each.
const MAX_BOUND: usize = 64;

/// How long apps get to read a new keymap before its keys come: the
/// compositor acknowledges the upload, the apps do not (Chromium takes
/// keys that come before it has read the keymap with the old one).
const KEYMAP_SETTLE: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum VirtualKeyboardError {
    #[error("no Wayland connection: {0}")]
    Connect(String),
    #[error("the compositor offers no {0}")]
    Missing(&'static str),
    #[error("the Wayland connection failed: {0}")]
    Protocol(String),
    #[error("the keymap could not be handed over: {0}")]
    Keymap(#[source] std::io::Error),
}

/// A virtual keyboard of its own, kept for the sink's life: apps bind a
/// keyboard when it appears, so one made for a single text would be gone
/// before they listen.
pub struct VirtualKeyboard {
    _conn: Connection,
    queue: EventQueue<State>,
    keyboard: ZwpVirtualKeyboardV1,
    /// The characters the uploaded keymap binds, and their keycodes.
    bound: HashMap<char, u32>,
    started: Instant,
}

struct State;

impl VirtualKeyboard {
    pub fn connect() -> Result<Self, VirtualKeyboardError> {
        let conn = Connection::connect_to_env()
            .map_err(|e| VirtualKeyboardError::Connect(e.to_string()))?;
        let (globals, mut queue) = registry_queue_init::<State>(&conn)
            .map_err(|e| VirtualKeyboardError::Protocol(e.to_string()))?;
        let qh = queue.handle();
        let seat: wl_seat::WlSeat = globals
            .bind(&qh, 1..=8, ())
            .map_err(|_| VirtualKeyboardError::Missing("seat"))?;
        let manager: ZwpVirtualKeyboardManagerV1 = globals
            .bind(&qh, 1..=1, ())
            .map_err(|_| VirtualKeyboardError::Missing("virtual keyboard protocol"))?;
        let keyboard = manager.create_virtual_keyboard(&seat, &qh, ());
        queue
            .roundtrip(&mut State)
            .map_err(|e| VirtualKeyboardError::Protocol(e.to_string()))?;
        Ok(Self {
            _conn: conn,
            queue,
            keyboard,
            bound: HashMap::new(),
            started: Instant::now(),
        })
    }

    /// Types `text`, each character one press and release of its own key.
    pub fn type_text(&mut self, text: &str) -> Result<(), VirtualKeyboardError> {
        // Ours may have been replaced since the last text (see above).
        self.bound.clear();
        for piece in pieces(text) {
            self.bind(piece)?;
            for c in piece.chars() {
                let Some(keycode) = fixed_key(c).or_else(|| self.bound.get(&c).copied()) else {
                    continue; // no keysym: a control character typing cannot give
                };
                // The protocol's keys are evdev codes, xkb's less 8.
                let time = self.started.elapsed().as_millis() as u32;
                self.keyboard
                    .key(time, keycode - 8, wl_keyboard::KeyState::Pressed.into());
                self.keyboard
                    .key(time, keycode - 8, wl_keyboard::KeyState::Released.into());
            }
            self.queue
                .roundtrip(&mut State)
                .map_err(|e| VirtualKeyboardError::Protocol(e.to_string()))?;
        }
        Ok(())
    }

    /// Makes sure the keymap binds every character of `piece` (at most
    /// MAX_BOUND distinct ones), uploading a new one only where it lacks one.
    fn bind(&mut self, piece: &str) -> Result<(), VirtualKeyboardError> {
        let missing: Vec<char> = distinct(piece)
            .filter(|c| !self.bound.contains_key(c) && bindable(*c))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if self.bound.len() + missing.len() > MAX_BOUND {
            self.bound.clear();
            let all: Vec<char> = distinct(piece).filter(|c| bindable(*c)).collect();
            return self.upload(all);
        }
        let mut chars: Vec<(char, u32)> = self.bound.iter().map(|(c, k)| (*c, *k)).collect();
        chars.sort_by_key(|(_, k)| *k);
        let mut all: Vec<char> = chars.into_iter().map(|(c, _)| c).collect();
        all.extend(missing);
        self.upload(all)
    }

    /// Uploads a keymap binding `chars` to [`keycodes`], in that order (characters bound before keep their keys).
    fn upload(&mut self, chars: Vec<char>) -> Result<(), VirtualKeyboardError> {
        let keymap = keymap(&chars);
        let file = keymap_file(&keymap).map_err(VirtualKeyboardError::Keymap)?;
        self.keyboard.keymap(
            wl_keyboard::KeymapFormat::XkbV1.into(),
            file.as_fd(),
            keymap.len() as u32 + 1,
        );
        // No modifier of an earlier keymap may stay in force.
        self.keyboard.modifiers(0, 0, 0, 0);
        self.queue
            .roundtrip(&mut State)
            .map_err(|e| VirtualKeyboardError::Protocol(e.to_string()))?;
        self.bound = chars.into_iter().zip(keycodes()).collect::<HashMap<_, _>>();
        std::thread::sleep(KEYMAP_SETTLE);
        Ok(())
    }
}

impl Drop for VirtualKeyboard {
    fn drop(&mut self) {
        self.keyboard.destroy();
        let _ = self.queue.roundtrip(&mut State);
    }
}

/// The xkb keycodes characters are bound to, in order (evdev's plus 8).
fn keycodes() -> impl Iterator<Item = u32> {
    CHARACTER_KEYS.into_iter().flatten().map(|evdev| evdev + 8)
}

/// `text` cut where it holds MAX_BOUND distinct characters.
fn pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if seen.insert(c) && seen.len() > MAX_BOUND {
            pieces.push(&text[start..i]);
            start = i;
            seen.clear();
            seen.insert(c);
        }
    }
    pieces.push(&text[start..]);
    pieces
}

fn distinct(text: &str) -> impl Iterator<Item = char> + '_ {
    let mut seen = std::collections::HashSet::new();
    text.chars().filter(move |c| seen.insert(*c))
}

/// Whether `c` is typed with a key of the pool (not Enter or Tab, and
/// not a control character no key gives).
fn bindable(c: char) -> bool {
    fixed_key(c).is_none() && keysym_name(c).is_some()
}

/// The keysym that types `c`, by name: the keysym of the character
/// (Unicode keysyms for the rest); none for control characters.
fn keysym_name(c: char) -> Option<String> {
    match c {
        c if c.is_control() => None,
        c => {
            let keysym = xkbcommon::xkb::utf32_to_keysym(c as u32);
            let name = xkbcommon::xkb::keysym_get_name(keysym);
            (!name.is_empty() && name != "NoSymbol").then_some(name)
        }
    }
}

/// An xkb keymap in which the n-th of `chars` is the n-th of [`keycodes`],
/// one level, one keysym, with Return and Tab on their own keys.
fn keymap(chars: &[char]) -> String {
    let last = keycodes().max().expect("some keys");
    let mut keycodes_section = String::new();
    let mut symbols = String::new();
    let named = chars
        .iter()
        .map(|c| keysym_name(*c).expect("only characters with a keysym are bound"));
    let fixed = [("Return".to_string(), ENTER), ("Tab".to_string(), TAB)];
    for (name, code) in named.zip(keycodes()).chain(fixed) {
        keycodes_section.push_str(&format!("    <K{code}> = {code};\n"));
        symbols.push_str(&format!("    key <K{code}> {{ [ {name} ] }};\n"));
    }
    format!(
        "xkb_keymap {{\nxkb_keycodes \"utter\" {{\n    minimum = 8;\n    maximum = {last};\n\
         {keycodes_section}}};\nxkb_types \"utter\" {{ include \"complete\" }};\n\
         xkb_compat \"utter\" {{ include \"complete\" }};\nxkb_symbols \"utter\" {{\n{symbols}}};\n}};\n"
    )
}

/// The keymap in a sealed-off memory file, NUL-terminated, as the protocol
/// hands keymaps over (a file descriptor and a size).
fn keymap_file(keymap: &str) -> std::io::Result<std::fs::File> {
    // SAFETY: memfd_create takes a NUL-terminated name and flags; the
    // returned descriptor is new and owned by the File made from it.
    let fd = unsafe { libc::memfd_create(c"utter-keymap".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(keymap.as_bytes())?;
    file.write_all(&[0])?;
    file.flush()?;
    Ok(file)
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<wl_seat::WlSeat, ()> for State {
    fn event(
        _: &mut Self,
        _: &wl_seat::WlSeat,
        _: wl_seat::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<ZwpVirtualKeyboardManagerV1, ()> for State {
    fn event(
        _: &mut Self,
        _: &ZwpVirtualKeyboardManagerV1,
        _: <ZwpVirtualKeyboardManagerV1 as wayland_client::Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<ZwpVirtualKeyboardV1, ()> for State {
    fn event(
        _: &mut Self,
        _: &ZwpVirtualKeyboardV1,
        _: <ZwpVirtualKeyboardV1 as wayland_client::Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keymap_binds_each_character_to_a_key_of_its_own_that_xkb_compiles() {
        let chars: Vec<char> = "Kö:ß€日".chars().collect();
        let text = keymap(&chars);
        let context = xkbcommon::xkb::Context::new(xkbcommon::xkb::CONTEXT_NO_FLAGS);
        let compiled = xkbcommon::xkb::Keymap::new_from_string(
            &context,
            text.clone(),
            xkbcommon::xkb::KEYMAP_FORMAT_TEXT_V1,
            xkbcommon::xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .unwrap_or_else(|| panic!("xkb compiles it:\n{text}"));
        let state = xkbcommon::xkb::State::new(&compiled);
        for (c, code) in chars.iter().zip(keycodes()) {
            let utf8 = state.key_get_utf8(code.into());
            let expected = if *c == '\n' {
                "\r".to_string()
            } else {
                c.to_string()
            };
            assert_eq!(utf8, expected, "keycode {code}");
        }
    }

    #[test]
    fn a_text_with_more_distinct_characters_than_a_keymap_binds_is_cut() {
        let text: String = (0..150u32)
            .map(|i| char::from_u32(0x4e00 + i).unwrap())
            .collect();
        let pieces = pieces(&text);
        assert_eq!(pieces.len(), 3);
        assert_eq!(keycodes().count(), MAX_BOUND);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| distinct(p).count() <= MAX_BOUND));
    }
}
