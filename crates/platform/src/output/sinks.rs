//! The four [`TextSink`]s. Each owns its OS handles for the process's
//! lifetime (on X11 the clipboard's contents live as long as their owner).

use enigo::{Direction, Enigo, Key, Keyboard, Settings};

use super::paste_watch::{PasteWatch, Selection, Selections};
use super::{
    finish, Delivered, Delivery, DesktopError, EditKey, Outcome, OutputConfig, OutputEnv,
    OutputError, PasteFallback, PasteKeys, Submit, TextSink,
};
use crate::desktop::DesktopSession;

// A copy of the whole clipboard (every type or format: an image, rich text,
// files) taken before a paste and given back after it.
#[cfg(desktop_linux)]
use super::wayland_clipboard::Snapshot as WholeClipboard;
#[cfg(not(desktop_linux))]
use utter_clipboard::Snapshot as WholeClipboard;

fn clipboard() -> Result<arboard::Clipboard, OutputError> {
    arboard::Clipboard::new().map_err(OutputError::Clipboard)
}

/// The key simulator for `session`. On Wayland it speaks the
/// virtual-keyboard protocol only (wlroots compositors: sway, Hyprland...);
/// it fails where the compositor lacks it (GNOME, KDE), and the caller falls
/// back to the clipboard. It lives as long as its sink, which keeps a virtual
/// keyboard on the seat: apps bind their keyboard when one appears, so a
/// keyboard created just for one paste is gone before they are ready.
pub(super) fn input(session: &DesktopSession) -> Result<Enigo, OutputError> {
    let mut settings = Settings::default();
    if session.is_wayland() {
        // Otherwise enigo also connects to XWayland's $DISPLAY and XTest types
        // every key a second time; an unparsable display name stops that.
        settings.x11_display = Some("utter:no-x11".into());
    }
    Enigo::new(&settings).map_err(|e| OutputError::Input(e.into()))
}

fn set_text(clipboard: &mut arboard::Clipboard, text: &str) -> Result<(), OutputError> {
    clipboard
        .set_text(text.to_string())
        .map_err(OutputError::Clipboard)
}

/// The dictated text on the clipboard for a paste. `transient`: it is gone
/// again in a moment (the previous clipboard comes back), so it is marked for
/// clipboard history and managers to skip: Windows' documented
/// ExcludeClipboardContentFromMonitorProcessing format (Win+V history, cloud
/// clipboard and clipboard monitors), and on macOS nspasteboard.org's
/// org.nspasteboard.TransientType. Not on Linux yet.
fn set_paste_text(
    clipboard: &mut arboard::Clipboard,
    text: &str,
    transient: bool,
) -> Result<(), OutputError> {
    #[cfg(windows)]
    if transient {
        use arboard::SetExtWindows;
        return clipboard
            .set()
            .exclude_from_monitoring()
            .text(text.to_string())
            .map_err(OutputError::Clipboard);
    }
    set_text(clipboard, text)?;
    #[cfg(target_os = "macos")]
    if transient {
        utter_clipboard::mark_transient();
    }
    #[cfg(not(any(windows, target_os = "macos")))]
    let _ = transient;
    Ok(())
}

/// Prints each dictation as a line (scripts, `--output stdout`).
pub struct StdoutSink;

impl TextSink for StdoutSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", finish(text, how.trailing_space));
        let _ = out.flush();
        Ok(Delivered::Printed.into())
    }
}

/// Leaves the text on the clipboard.
pub struct ClipboardSink {
    clipboard: arboard::Clipboard,
}

impl ClipboardSink {
    pub fn new() -> Result<Self, OutputError> {
        Ok(Self {
            clipboard: clipboard()?,
        })
    }
}

impl TextSink for ClipboardSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        set_text(&mut self.clipboard, &finish(text, how.trailing_space))?;
        Ok(Delivered::OnClipboard.into())
    }
}

/// Types the text as key presses (apps that block paste).
pub struct TypeSink {
    keyboard: KeySender,
}

impl TypeSink {
    pub fn new(session: &DesktopSession) -> Result<Self, OutputError> {
        Ok(Self {
            keyboard: keyboard(session)?,
        })
    }
}

impl TextSink for TypeSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        self.keyboard.type_text(&finish(text, how.trailing_space))?;
        Ok(Delivered::Typed.into())
    }

    fn press_submit(&mut self, key: Submit) -> Result<(), DesktopError> {
        Ok(self.keyboard.press_submit(key)?)
    }

    fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), DesktopError> {
        Ok(self.keyboard.press_keys(key, times)?)
    }
}

/// What presses keys: the paste chord, or the text typed.
enum KeySender {
    /// X11 (XTest), a wlroots virtual keyboard, Windows.
    Enigo(Box<EnigoKeys>),
    /// GNOME and KDE on Wayland: libei through the RemoteDesktop portal.
    #[cfg(desktop_linux)]
    Libei(Box<super::ei_keys::EiKeyboard>),
}

impl KeySender {
    fn press_submit(&mut self, key: Submit) -> Result<(), OutputError> {
        match self {
            KeySender::Enigo(keys) => submit_chord(keys.current()?, key),
            #[cfg(desktop_linux)]
            KeySender::Libei(keyboard) => keyboard
                .press_submit(key)
                .map_err(|e| OutputError::Input(e.into())),
        }
    }

    fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), OutputError> {
        match self {
            KeySender::Enigo(keys) => click_times(keys.current()?, key, times),
            #[cfg(desktop_linux)]
            KeySender::Libei(keyboard) => keyboard
                .press_keys(key, times)
                .map_err(|e| OutputError::Input(e.into())),
        }
    }

    fn type_text(&mut self, text: &str) -> Result<(), OutputError> {
        match self {
            // enigo types Unicode text without the layout lookup on every
            // platform, so this may run on the service thread.
            KeySender::Enigo(keys) => keys.type_text(text),
            #[cfg(desktop_linux)]
            KeySender::Libei(keyboard) => keyboard
                .type_text(text)
                .map_err(|e| OutputError::Input(e.into())),
        }
    }
}

/// enigo, made again when the X11 keyboard layout changed under it (it
/// reads the keymap once, when made).
struct EnigoKeys {
    /// `None` between dropping a stale one and making its successor: the old
    /// one must give its spare keycodes back first, or the new one would
    /// take them for keys of the layout.
    enigo: Option<Enigo>,
    session: DesktopSession,
    #[cfg(desktop_linux)]
    layout: Option<super::x11_layout::LayoutWatch>,
    /// wlroots Wayland: what types text (enigo presses the paste keys).
    #[cfg(desktop_linux)]
    typing: Option<super::wayland_keys::VirtualKeyboard>,
}

impl EnigoKeys {
    fn new(session: &DesktopSession) -> Result<Self, OutputError> {
        let enigo = input(session)?;
        #[cfg(desktop_linux)]
        let layout = (*session == DesktopSession::X11)
            .then(super::x11_layout::LayoutWatch::start)
            .and_then(|watch| {
                watch
                    .map_err(|e| tracing::warn!("a keyboard layout change will go unnoticed: {e}"))
                    .ok()
            });
        // Made with the sink, not at the first text: apps bind a keyboard
        // when it appears.
        #[cfg(desktop_linux)]
        let typing = session
            .is_wayland()
            .then(super::wayland_keys::VirtualKeyboard::connect)
            .and_then(|keyboard| {
                keyboard
                    .map_err(|e| tracing::warn!("typing goes through enigo's keyboard: {e}"))
                    .ok()
            });
        Ok(Self {
            enigo: Some(enigo),
            session: session.clone(),
            #[cfg(desktop_linux)]
            layout,
            #[cfg(desktop_linux)]
            typing,
        })
    }

    /// The simulator for the layout in use now.
    fn current(&mut self) -> Result<&mut Enigo, OutputError> {
        // A new layout, or the keymap loaded again (the same `setxkbmap`, a
        // desktop's layout switcher) and with it enigo's spare keycodes
        // emptied: enigo still believed them bound, and every capital and
        // accented letter it typed on one after that went missing.
        #[cfg(desktop_linux)]
        if self.layout.as_mut().is_some_and(|layout| {
            let change = layout.check();
            change.layout || change.spare_freed
        }) {
            tracing::info!("the keyboard mapping changed: reading it again");
            // Dropped first: it gives back the keycodes it holds...
            self.enigo = None;
            // ...which is no change for the next look to act on.
            if let Some(layout) = self.layout.as_mut() {
                layout.check();
            }
        }
        if self.enigo.is_none() {
            self.enigo = Some(input(&self.session)?);
        }
        Ok(self.enigo.as_mut().expect("made above"))
    }

    fn type_text(&mut self, text: &str) -> Result<(), OutputError> {
        #[cfg(desktop_linux)]
        if let Some(keyboard) = self.typing.as_mut() {
            return keyboard
                .type_text(text)
                .map_err(|e| OutputError::Input(e.into()));
        }
        #[cfg(desktop_linux)]
        if let Some(layout) = self.layout.as_ref() {
            let held = layout.hold_first_group();
            let typed = self.type_on_x11(text);
            if let (Some(layout), Some(held)) = (self.layout.as_ref(), held) {
                layout.restore_group(held);
            }
            return typed;
        }
        self.current()?.text(text).map_err(input_error)
    }

    /// Presses the paste keys. On X11 Ctrl+V goes to the real V key, in
    /// the layout group that has `v` (locked for the chord, the user's
    /// group back after): with a Russian layout first, enigo found no `v`
    /// in the first group and bound a spare keycode to it, which Chromium
    /// took for no shortcut at all, and with a second group active its V
    /// key read as `м`.
    fn press_paste_keys(&mut self, keys: PasteKeys, wayland: bool) -> Result<(), OutputError> {
        #[cfg(desktop_linux)]
        if self.layout.is_some() && keys != PasteKeys::ShiftInsert {
            // Made again first if the layout changed (the watch then holds
            // the new mapping).
            self.current()?;
            let layout = self.layout.as_ref().expect("checked above");
            if let Some((keycode, group)) = layout.key_in_any_group('v') {
                let held = layout.hold_group(group);
                let shift = keys == PasteKeys::CtrlShiftV;
                let pressed = raw_chord(self.current()?, shift, keycode);
                if let (Some(layout), Some(held)) = (self.layout.as_ref(), held) {
                    layout.restore_group(held);
                }
                return pressed;
            }
        }
        press(self.current()?, keys, wayland)
    }

    /// Types on X11, in the first layout group, characters the layout lacks
    /// bound ahead (see [`EnigoKeys::bind_ahead`]).
    #[cfg(desktop_linux)]
    fn type_on_x11(&mut self, text: &str) -> Result<(), OutputError> {
        for piece in pieces_to_bind(text, BIND_AT_ONCE) {
            self.bind_ahead(piece)?;
            self.current()?.text(piece).map_err(input_error)?;
        }
        Ok(())
    }

    /// On X11 enigo binds a spare keycode for each character the layout
    /// lacks just before pressing it, and an app that re-reads its keymap
    /// off its event loop (Chromium) can take the press first and drop the
    /// character: "ça" arrived as "a". So the characters are bound before
    /// typing — by releasing their keys, which are not down, so no app sees
    /// an event — and the keys pressed once the apps have had time to
    /// re-read the keymap: X11 has no acknowledgement to wait for. Paid once
    /// per character: enigo keeps its bindings until it runs out of keys.
    #[cfg(desktop_linux)]
    fn bind_ahead(&mut self, piece: &str) -> Result<(), OutputError> {
        let mut bound = false;
        // Twice at most: enigo gives back all its keys when it runs out,
        // characters bound earlier in the pass among them.
        for _ in 0..2 {
            let missing: Vec<char> = match &self.layout {
                Some(layout) => distinct(piece)
                    .filter(|&c| !c.is_control() && !layout.has_key_for(c))
                    .collect(),
                None => return Ok(()),
            };
            let enigo = self.current()?;
            for c in missing {
                enigo
                    .key(Key::Unicode(c), Direction::Release)
                    .map_err(input_error)?;
            }
            let change = self.layout.as_mut().map(|l| l.check()).unwrap_or_default();
            // A freed key bound again to another character reads as a
            // changed key: enigo's doing within this pass, not a new layout.
            bound |= change.spare_bound || change.layout;
            if !change.spare_freed && !change.layout {
                break;
            }
        }
        if bound {
            std::thread::sleep(KEYMAP_SETTLE);
        }
        Ok(())
    }
}

/// How long apps get to re-read the keymap after enigo bound keys. No app
/// documents its figure; a keymap compile takes a few milliseconds, and
/// this is paid once per new character, not per key.
#[cfg(desktop_linux)]
const KEYMAP_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// At most this many distinct characters are bound ahead at once: fewer
/// than the spare keycodes an X server has (38 on Xvfb's evdev keymaps),
/// so none is given back before it is typed.
#[cfg(desktop_linux)]
const BIND_AT_ONCE: usize = 16;

/// `text` cut into consecutive pieces of at most `most` distinct characters.
#[cfg(desktop_linux)]
fn pieces_to_bind(text: &str, most: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if !seen.contains(&c) && seen.len() == most {
            pieces.push(&text[start..at]);
            start = at;
            seen.clear();
        }
        seen.insert(c);
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[cfg(desktop_linux)]
fn distinct(text: &str) -> impl Iterator<Item = char> + '_ {
    let mut seen = std::collections::HashSet::new();
    text.chars().filter(move |c| seen.insert(*c))
}

fn input_error(e: enigo::InputError) -> OutputError {
    OutputError::Input(e.into())
}

/// enigo where it works; on Wayland without a virtual keyboard, libei.
fn keyboard(session: &DesktopSession) -> Result<KeySender, OutputError> {
    match EnigoKeys::new(session) {
        Ok(keys) => Ok(KeySender::Enigo(Box::new(keys))),
        #[cfg(desktop_linux)]
        Err(virtual_keyboard) if session.is_wayland() => {
            match super::ei_keys::EiKeyboard::connect() {
                Ok(keyboard) => {
                    tracing::info!("key presses go through libei (the RemoteDesktop portal)");
                    Ok(KeySender::Libei(Box::new(keyboard)))
                }
                Err(libei) => Err(OutputError::Input(super::InputError::NoWaylandKeyboard {
                    virtual_keyboard: virtual_keyboard.reason(),
                    libei: libei.to_string(),
                })),
            }
        }
        Err(e) => Err(e),
    }
}

/// Clipboard + paste keystroke, previous clipboard restored afterwards.
pub struct PasteSink {
    config: OutputConfig,
    env: OutputEnv,
    clipboard: arboard::Clipboard,
    /// Off macOS, the simulator lives with the sink (on macOS it is made on
    /// the main thread for each paste).
    keyboard: Option<KeySender>,
    #[cfg(desktop_linux)]
    x11: X11Clipboard,
}

/// Utter's own X11 clipboard owner (see `x11_clipboard`), started at the
/// first paste on X11 and kept: it serves the restored clipboard afterwards.
#[cfg(desktop_linux)]
enum X11Clipboard {
    NotStarted,
    Running(super::x11_clipboard::Owner),
    /// It could not start or its connection died: pastes go through arboard.
    Unavailable,
}

impl PasteSink {
    pub fn new(config: OutputConfig, env: OutputEnv) -> Result<Self, OutputError> {
        let keyboard = if cfg!(target_os = "macos") {
            None
        } else {
            Some(keyboard(&env.session)?)
        };
        Ok(Self {
            config,
            env,
            clipboard: clipboard()?,
            keyboard,
            #[cfg(desktop_linux)]
            x11: X11Clipboard::NotStarted,
        })
    }

    /// The paste app did not read the text in time: the configured fallback.
    fn not_read_notice(&self, delivered: Delivered) -> String {
        let keys = match self.config.paste_keys {
            PasteKeys::Standard if cfg!(target_os = "macos") => "Cmd+V",
            PasteKeys::Standard => "Ctrl+V",
            PasteKeys::ShiftInsert => "Shift+Insert",
            PasteKeys::CtrlShiftV => "Ctrl+Shift+V",
        };
        match delivered {
            Delivered::TypedAfterUnreadPaste => {
                "the app did not take the paste, so the text was typed instead".to_string()
            }
            _ => format!(
                "the app did not take the paste: the text is on the clipboard, press {keys} \
                 to paste it (it is in History too)"
            ),
        }
    }

    /// Types `text` after a paste nobody read (the `type` fallback).
    fn type_instead(&mut self, text: &str) -> Result<(), OutputError> {
        match self.keyboard.as_mut() {
            Some(keyboard) => keyboard.type_text(text),
            None => keyboard(&self.env.session)?.type_text(text),
        }
    }

    /// The X11 paste through our own clipboard owner; `None` where it cannot
    /// run (the arboard path then pastes).
    #[cfg(desktop_linux)]
    fn deliver_x11(&mut self, text: &str, how: &Delivery) -> Result<Option<Outcome>, OutputError> {
        if matches!(self.x11, X11Clipboard::NotStarted) {
            self.x11 = match super::x11_clipboard::Owner::start() {
                Ok(owner) => X11Clipboard::Running(owner),
                Err(e) => {
                    tracing::warn!("no clipboard owner of our own ({e}): pasting through arboard");
                    X11Clipboard::Unavailable
                }
            };
        }
        let X11Clipboard::Running(owner) =
            std::mem::replace(&mut self.x11, X11Clipboard::Unavailable)
        else {
            return Ok(None);
        };
        let primary = Selections::for_keys(how.paste_keys, &self.env.session).primary;
        let started = match owner.paste(text, primary, self.config.restore_clipboard) {
            Ok(started) => started,
            Err(e) => {
                tracing::warn!("cannot take the clipboard ({e}): pasting through arboard");
                return Ok(None);
            }
        };
        // Said before the keys go out: a fast app (xterm) reads the
        // selection before the thread would see a message sent after them.
        let _ = owner.keys_sent();
        let result = self.press_paste_keys(how.paste_keys);
        let outcome = result.and_then(|()| {
            let lost = lost_notice(&started.lost);
            if let Some(after) = owner.wait_read(self.config.paste_timeout) {
                tracing::debug!("the paste was read {after:?} after the keys");
                return Ok(Outcome {
                    delivered: Delivered::Pasted,
                    notice: lost,
                });
            }
            tracing::warn!("the app did not read the paste in time");
            let delivered = match self.config.paste_fallback {
                PasteFallback::Clipboard => {
                    owner.not_read(true).map_err(|_| owner_gone())?;
                    Delivered::LeftOnClipboard
                }
                PasteFallback::Type => {
                    owner.not_read(false).map_err(|_| owner_gone())?;
                    self.type_instead(text)?;
                    Delivered::TypedAfterUnreadPaste
                }
            };
            Ok(Outcome {
                delivered,
                notice: Some(self.not_read_notice(delivered)),
            })
        });
        self.x11 = X11Clipboard::Running(owner);
        outcome.map(Some)
    }

    /// A copy of the whole clipboard before a paste on Wayland (data-control
    /// compositors), macOS and Windows; `None` where the previous text is
    /// all we give back (X11 pastes through `deliver_x11`, which keeps the
    /// whole clipboard itself).
    fn whole_snapshot(&self) -> Option<WholeClipboard> {
        if !self.config.restore_clipboard {
            return None;
        }
        #[cfg(desktop_linux)]
        if !self.env.session.is_wayland() {
            return None;
        }
        match WholeClipboard::take() {
            Ok(copy) if !copy.is_empty() => Some(copy),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!("{e}: only the clipboard's text will come back");
                None
            }
        }
    }

    fn press_paste_keys(&mut self, keys: PasteKeys) -> Result<(), OutputError> {
        match self.keyboard.as_mut() {
            Some(KeySender::Enigo(enigo_keys)) => {
                return enigo_keys.press_paste_keys(keys, self.env.session.is_wayland())
            }
            #[cfg(desktop_linux)]
            Some(KeySender::Libei(keyboard)) => {
                return keyboard
                    .press(keys)
                    .map_err(|e| OutputError::Input(e.into()))
            }
            None => {}
        }
        // macOS: enigo maps Key::Unicode('v') to a key code through TIS
        // (TISCopyCurrentKeyboardInputSource), which must run on the main
        // thread; the layout-aware lookup keeps Cmd+V right on Dvorak & co.
        match &self.env.main_thread {
            Some(main) => main
                .call(move || {
                    input(&DesktopSession::MacOs)
                        .and_then(|mut enigo| press(&mut enigo, keys, false))
                })
                .map_err(|e| OutputError::Input(e.into()))?,
            None => {
                input(&DesktopSession::MacOs).and_then(|mut enigo| press(&mut enigo, keys, false))
            }
        }
    }
}

/// The copy keystroke (Cmd+C on macOS, Ctrl+C elsewhere) to the focused
/// app, for reading its selection where there is no PRIMARY selection. On
/// macOS it runs on the main thread, as the paste keystroke does.
#[cfg_attr(desktop_linux, allow(dead_code))]
pub(super) fn press_copy_keys(env: &OutputEnv) -> Result<(), OutputError> {
    let session = env.session.clone();
    let copy = move || {
        let mut enigo = input(&session)?;
        let modifier = if cfg!(target_os = "macos") {
            Key::Meta
        } else {
            Key::Control
        };
        chord(&mut enigo, &[modifier], Key::Unicode('c'))
    };
    match (&env.main_thread, cfg!(target_os = "macos")) {
        (Some(main), true) => main.call(copy).map_err(|e| OutputError::Input(e.into()))?,
        _ => copy(),
    }
}

/// Ctrl (and Shift) held, the key `keycode` clicked, the mods let go
/// (even when the click failed).
#[cfg(desktop_linux)]
fn raw_chord(enigo: &mut Enigo, shift: bool, keycode: u8) -> Result<(), OutputError> {
    let mods: &[Key] = if shift {
        &[Key::Control, Key::Shift]
    } else {
        &[Key::Control]
    };
    for m in mods {
        enigo.key(*m, Direction::Press).map_err(input_error)?;
    }
    let result = enigo
        .raw(u16::from(keycode), Direction::Click)
        .map_err(input_error);
    for m in mods.iter().rev() {
        enigo.key(*m, Direction::Release).map_err(input_error)?;
    }
    result
}

/// Holds `mods`, clicks `key`, lets the mods go (even when the click failed).
fn chord(enigo: &mut Enigo, mods: &[Key], key: Key) -> Result<(), OutputError> {
    let err = |e: enigo::InputError| OutputError::Input(e.into());
    for m in mods {
        enigo.key(*m, Direction::Press).map_err(err)?;
    }
    let result = enigo.key(key, Direction::Click).map_err(err);
    for m in mods.iter().rev() {
        enigo.key(*m, Direction::Release).map_err(err)?;
    }
    result
}

/// Clicks an edit command's key `times` times.
fn click_times(enigo: &mut Enigo, key: EditKey, times: usize) -> Result<(), OutputError> {
    let key = match key {
        EditKey::Backspace => Key::Backspace,
        EditKey::Enter => Key::Return,
        EditKey::Tab => Key::Tab,
        EditKey::Escape => Key::Escape,
    };
    for _ in 0..times {
        enigo.key(key, Direction::Click).map_err(input_error)?;
    }
    Ok(())
}

/// The submit key (Return, with Ctrl — Cmd on macOS — or Shift).
fn submit_chord(enigo: &mut Enigo, key: Submit) -> Result<(), OutputError> {
    let command = if cfg!(target_os = "macos") {
        Key::Meta
    } else {
        Key::Control
    };
    let mods: &[Key] = match key {
        Submit::None => return Ok(()),
        Submit::Enter => &[],
        Submit::CtrlEnter => &[command],
        Submit::ShiftEnter => &[Key::Shift],
    };
    chord(enigo, mods, Key::Return)
}

fn press(enigo: &mut Enigo, keys: PasteKeys, wayland: bool) -> Result<(), OutputError> {
    let modifier = if cfg!(target_os = "macos") {
        Key::Meta
    } else {
        Key::Control
    };
    let (mods, key): (Vec<Key>, Key) = match keys {
        PasteKeys::Standard => (vec![modifier], Key::Unicode('v')),
        #[cfg(not(target_os = "macos"))]
        PasteKeys::ShiftInsert => (vec![Key::Shift], Key::Insert),
        // Mac keyboards have no Insert key (enigo has no Key::Insert there);
        // `open_sink` refuses these keys on macOS before any paste.
        #[cfg(target_os = "macos")]
        PasteKeys::ShiftInsert => return Err(super::OutputUnavailable::NoInsertKey.into()),
        // enigo's Wayland backend looks a character up under the modifiers
        // already held, where Shift makes the V key produce `V`: asking for `v`
        // there remaps another key and the app sees no Ctrl+Shift+V.
        PasteKeys::CtrlShiftV => (
            vec![Key::Control, Key::Shift],
            Key::Unicode(if wayland { 'V' } else { 'v' }),
        ),
    };
    chord(enigo, &mods, key)
}

impl TextSink for PasteSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        let text = finish(text, how.trailing_space);
        #[cfg(desktop_linux)]
        if self.env.session == DesktopSession::X11 {
            if let Some(outcome) = self.deliver_x11(&text, how)? {
                return Ok(outcome);
            }
        }
        Ok(self.deliver_through_arboard(&text, how)?)
    }

    fn press_submit(&mut self, key: Submit) -> Result<(), DesktopError> {
        if let Some(keyboard) = self.keyboard.as_mut() {
            return Ok(keyboard.press_submit(key)?);
        }
        // macOS: made on the main thread, as the paste keystroke is.
        let pressed = match &self.env.main_thread {
            Some(main) => main
                .call(move || {
                    input(&DesktopSession::MacOs).and_then(|mut e| submit_chord(&mut e, key))
                })
                .map_err(|e| OutputError::Input(e.into()))?,
            None => input(&DesktopSession::MacOs).and_then(|mut e| submit_chord(&mut e, key)),
        };
        Ok(pressed?)
    }

    fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), DesktopError> {
        if let Some(keyboard) = self.keyboard.as_mut() {
            return Ok(keyboard.press_keys(key, times)?);
        }
        // macOS: on the main thread, as the paste keystroke.
        let click =
            move || input(&DesktopSession::MacOs).and_then(|mut e| click_times(&mut e, key, times));
        let pressed = match &self.env.main_thread {
            Some(main) => main.call(click).map_err(|e| OutputError::Input(e.into()))?,
            None => click(),
        };
        Ok(pressed?)
    }
}

impl PasteSink {
    /// The paste where we do not own the clipboard ourselves (Wayland, macOS,
    /// Windows, or X11 when our owner cannot start): arboard sets the text,
    /// and gives the previous *text* back.
    fn deliver_through_arboard(
        &mut self,
        text: &str,
        how: &Delivery,
    ) -> Result<Outcome, OutputError> {
        // xterm and rxvt paste the PRIMARY selection on Shift+Insert, other
        // X11 apps the clipboard: serve both, restore both.
        let selections = Selections::for_keys(how.paste_keys, &self.env.session);
        // On Wayland, macOS and Windows the whole clipboard (every type: an
        // image, rich text, files) is copied first; elsewhere here (GNOME
        // without data-control, X11 when our owner cannot start), only its
        // text.
        let mut whole = self.whole_snapshot();
        let mut previous = if self.config.restore_clipboard {
            Previous {
                clipboard: self.clipboard.get_text().ok(),
                primary: selections
                    .primary
                    .then(|| primary::get(&mut self.clipboard))
                    .flatten(),
            }
        } else {
            Previous::default()
        };
        // Restore only after the target app has read our text: restoring on a
        // timer pastes the OLD clipboard when the target is slow (a known
        // failure of other dictation apps).
        let (watch_used, read) = {
            let watch = PasteWatch::serve(text, &self.env.session, selections);
            if watch.is_none() {
                set_paste_text(&mut self.clipboard, text, self.config.restore_clipboard)?;
                if selections.primary {
                    primary::set(&mut self.clipboard, text)?;
                }
            }
            self.press_paste_keys(how.paste_keys)?;
            let pressed = std::time::Instant::now();
            let read = match &watch {
                Some(w) => {
                    let read = w.wait_consumed(self.config.paste_timeout);
                    if read {
                        tracing::debug!("the paste was read after {:?}", pressed.elapsed());
                    } else {
                        tracing::warn!("the target app did not read the clipboard in time");
                    }
                    Some(read)
                }
                None => {
                    PasteWatch::fallback_wait(&self.env.session);
                    None
                }
            };
            if read == Some(false) && self.config.paste_fallback == PasteFallback::Clipboard {
                // Leave the text for the user to paste by hand.
                previous = Previous::default();
                whole = None;
            }
            // Hand the selections back: the previous clipboard, or our text if
            // there was none (so it stays pasteable after our server stops).
            let restored_whole = whole.as_mut().is_some_and(|copy| match copy.restore() {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!("{e}; giving back only its text");
                    false
                }
            });
            if !restored_whole {
                set_text(
                    &mut self.clipboard,
                    previous.clipboard.as_deref().unwrap_or(text),
                )?;
            }
            if selections.primary {
                primary::set(
                    &mut self.clipboard,
                    previous.primary.as_deref().unwrap_or(text),
                )?;
            }
            (watch.is_some(), read)
            // Our selection server, if any, stops here.
        };
        #[cfg(desktop_linux)]
        if let Some(copy) = &whole {
            // Make sure it stuck (a clipboard manager may re-take the
            // selection with our text); offer it again if not.
            for attempt in 1..=3 {
                if copy.is_offered() {
                    break;
                }
                tracing::warn!(
                    "the clipboard did not keep what it held; offering it again ({attempt})"
                );
                if let Err(e) = copy.restore() {
                    tracing::warn!("{e}");
                }
            }
        }
        if watch_used && whole.is_none() {
            // Make sure it stuck (see `PasteWatch::holds`); set it again if not.
            let clipboard = previous.clipboard.as_deref().unwrap_or(text);
            for attempt in 1..=3 {
                if PasteWatch::holds(&self.env.session, Selection::Clipboard, clipboard) {
                    break;
                }
                tracing::warn!(
                    "the clipboard did not keep the restored text; setting it again ({attempt})"
                );
                set_text(&mut self.clipboard, clipboard)?;
            }
            let primary_text = previous.primary.as_deref().unwrap_or(text);
            for attempt in 1..=3 {
                if !selections.primary
                    || PasteWatch::holds(&self.env.session, Selection::Primary, primary_text)
                {
                    break;
                }
                tracing::warn!(
                    "the primary selection did not keep the restored text; setting it again ({attempt})"
                );
                primary::set(&mut self.clipboard, primary_text)?;
            }
        }
        let lost = whole.as_ref().and_then(|copy| lost_notice(copy.lost()));
        let delivered = match (read, self.config.paste_fallback) {
            (Some(true), _) => {
                return Ok(Outcome {
                    delivered: Delivered::Pasted,
                    notice: lost,
                })
            }
            (None, _) => {
                return Ok(Outcome {
                    delivered: Delivered::PasteUnconfirmed,
                    notice: lost,
                })
            }
            (Some(false), PasteFallback::Clipboard) => Delivered::LeftOnClipboard,
            (Some(false), PasteFallback::Type) => {
                self.type_instead(text)?;
                Delivered::TypedAfterUnreadPaste
            }
        };
        Ok(Outcome {
            delivered,
            notice: Some(self.not_read_notice(delivered)),
        })
    }
}

#[cfg(desktop_linux)]
fn owner_gone() -> OutputError {
    OutputError::ClipboardOwner("the clipboard thread has ended (the display went away?)")
}

/// The notice for clipboard types that could not be kept across a paste.
fn lost_notice(lost: &[String]) -> Option<String> {
    (!lost.is_empty()).then(|| {
        format!(
            "part of what you had copied could not be kept, it is gone from the clipboard: {}",
            lost.join(", ")
        )
    })
}

/// What the selections held before a paste.
#[derive(Default)]
struct Previous {
    clipboard: Option<String>,
    primary: Option<String>,
}

/// The X11 PRIMARY selection through arboard (Linux only; nothing elsewhere,
/// where `Selections::primary` is never set).
mod primary {
    use super::OutputError;

    #[cfg(desktop_linux)]
    pub fn get(clipboard: &mut arboard::Clipboard) -> Option<String> {
        use arboard::{GetExtLinux, LinuxClipboardKind};
        clipboard
            .get()
            .clipboard(LinuxClipboardKind::Primary)
            .text()
            .ok()
    }

    #[cfg(desktop_linux)]
    pub fn set(clipboard: &mut arboard::Clipboard, text: &str) -> Result<(), OutputError> {
        use arboard::{LinuxClipboardKind, SetExtLinux};
        clipboard
            .set()
            .clipboard(LinuxClipboardKind::Primary)
            .text(text.to_string())
            .map_err(OutputError::Clipboard)
    }

    #[cfg(not(desktop_linux))]
    pub fn get(_: &mut arboard::Clipboard) -> Option<String> {
        None
    }

    #[cfg(not(desktop_linux))]
    pub fn set(_: &mut arboard::Clipboard, _: &str) -> Result<(), OutputError> {
        Ok(())
    }
}

#[cfg(all(test, desktop_linux))]
mod tests {
    use super::*;

    #[test]
    fn pieces_hold_at_most_so_many_distinct_characters_and_lose_none() {
        let text = "abcabc déjà vu — «ça» 日本";
        for most in 1..8 {
            let pieces = pieces_to_bind(text, most);
            assert_eq!(pieces.concat(), text);
            for piece in &pieces {
                assert!(distinct(piece).count() <= most, "{piece:?} under {most}");
            }
        }
        assert_eq!(pieces_to_bind("abcabc", 3), vec!["abcabc"]);
        assert_eq!(pieces_to_bind("abcd", 2), vec!["ab", "cd"]);
        assert!(pieces_to_bind("", 4).is_empty());
    }
}
