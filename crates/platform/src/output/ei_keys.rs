//! Key presses through libei, where a Wayland desktop offers apps no virtual
//! keyboard (GNOME, KDE): the paste keystroke, or the text typed key by key,
//! on an emulated keyboard on the socket that the
//! RemoteDesktop portal hands over ([`crate::remote_desktop`]), or on
//! `$LIBEI_SOCKET` when one is set (libei's convention, e.g. a test server).
//!
//! libei sends evdev key codes, so which code types `v` depends on the layout:
//! they are looked up in the keymap the desktop sends with the keyboard (on
//! Dvorak, V is the key that is `.` on QWERTY). Without a keymap the US layout
//! is assumed.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use reis::ei;
use reis::event::{DeviceCapability, EiEvent, EiEventConverter};
use reis::handshake::EiHandshaker;
use reis::PendingRequestResult;
use xkbcommon::xkb;

use super::PasteKeys;
use utter_ports::output::{EditKey, Submit};

/// How long the desktop may take to offer a resumed keyboard.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a burst of key events may wait for room in the socket.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the user has to answer the desktop's "allow remote control?" dialog.
pub const PERMISSION_TIMEOUT: Duration = Duration::from_secs(120);

/// evdev codes (linux/input-event-codes.h) for a layout-less fallback.
mod evdev {
    pub const LEFT_CTRL: u32 = 29;
    pub const LEFT_SHIFT: u32 = 42;
    pub const V: u32 = 47;
    pub const INSERT: u32 = 110;
    pub const ENTER: u32 = 28;
    pub const BACKSPACE: u32 = 14;
    pub const TAB: u32 = 15;
    pub const ESC: u32 = 1;
}

/// Why libei key presses are not available.
#[derive(Debug, thiserror::Error)]
pub enum EiError {
    #[error("the RemoteDesktop portal: {0}")]
    Portal(#[from] crate::portal::PortalError),
    #[error("the libei socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("the libei protocol: {0}")]
    Protocol(String),
    #[error("the keyboard's keymap: {0}")]
    Keymap(String),
    #[error("the desktop disconnected the emulated keyboard{0}")]
    Disconnected(String),
    #[error("the desktop offered no keyboard within {READY_TIMEOUT:?}")]
    NoKeyboard,
    #[error(
        "the desktop's permission dialog was not answered within {0:?}; restart the dictation \
         (or Utter) to be asked again"
    )]
    NotAnswered(Duration),
    #[error("the desktop's keyboard layout has no key for {0:?}; use paste output for this text")]
    NoKeyFor(char),
}

/// A keyboard emulated through libei, kept for the sink's lifetime.
pub struct EiKeyboard {
    context: ei::Context,
    events: EiEventConverter,
    keyboard: Option<reis::event::Device>,
    codes: KeyCodes,
    resumed: bool,
    /// The seat's active layout and Caps Lock, as the desktop last reported them.
    layout: u32,
    caps_lock: bool,
    sequence: u32,
    /// The portal session (when it came from the portal) ends with this.
    _portal: Option<zbus::blocking::Connection>,
    /// Made by [`EiKeyboard::connect`], so it can connect again when the
    /// desktop drops it (the user stopped sharing the keyboard, the portal
    /// restarted): the kept permission makes that silent.
    reconnects: bool,
}

impl EiKeyboard {
    /// `$LIBEI_SOCKET` when set, else the RemoteDesktop portal (which may ask
    /// the user once, waiting up to [`PERMISSION_TIMEOUT`] for the answer).
    pub fn connect() -> Result<Self, EiError> {
        Self::connect_within(PERMISSION_TIMEOUT)
    }

    /// [`EiKeyboard::connect`], giving the user `timeout` to answer the
    /// desktop's dialog. An unanswered dialog must not hold up the dictation
    /// forever: the caller falls back to the clipboard and says why. (The
    /// portal call itself cannot be cancelled; its thread ends when the
    /// dialog does, and the session it may get is dropped.)
    pub fn connect_within(timeout: Duration) -> Result<Self, EiError> {
        // libei's convention (a relative path is under $XDG_RUNTIME_DIR).
        if let Some(context) = ei::Context::connect_to_env()? {
            return Self::start(context, None, true);
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        std::thread::Builder::new()
            .name("utter-remote-desktop".into())
            .spawn(move || {
                let _ = tx.send(crate::remote_desktop::connect_keyboard());
            })?;
        let remote = match rx.recv_timeout(timeout) {
            Ok(answer) => answer?,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                return Err(EiError::NotAnswered(timeout))
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(EiError::Protocol(
                    "the RemoteDesktop portal call stopped without an answer".into(),
                ))
            }
        };
        let context = ei::Context::new(UnixStream::from(remote.eis))?;
        Self::start(context, Some(remote.connection), true)
    }

    /// Handshakes on `socket` and waits for a resumed keyboard.
    pub fn over(
        socket: UnixStream,
        portal: Option<zbus::blocking::Connection>,
    ) -> Result<Self, EiError> {
        Self::start(ei::Context::new(socket)?, portal, false)
    }

    fn start(
        context: ei::Context,
        portal: Option<zbus::blocking::Connection>,
        reconnects: bool,
    ) -> Result<Self, EiError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut handshaker = EiHandshaker::new("Utter", ei::handshake::ContextType::Sender);
        let handshake = loop {
            if !wait(&context, libc::POLLIN, deadline)? {
                return Err(EiError::Protocol(format!(
                    "the desktop did not finish the handshake within {READY_TIMEOUT:?}"
                )));
            }
            read(&context)?;
            let mut done = None;
            while let Some(event) = next_message(&context)? {
                done = handshaker
                    .handle_event(event)
                    .map_err(|e| EiError::Protocol(format!("handshake: {e:?}")))?;
                if done.is_some() {
                    break;
                }
            }
            if let Some(done) = done {
                break done;
            }
        };
        let events = EiEventConverter::new(&context, handshake);
        let mut keyboard = Self {
            context,
            events,
            keyboard: None,
            // Set with the keyboard (DeviceAdded), before any key is sent.
            codes: KeyCodes::evdev(),
            resumed: false,
            layout: 0,
            caps_lock: false,
            sequence: 0,
            _portal: portal,
            reconnects,
        };
        // Handshake messages may have carried the first events too.
        keyboard.dispatch()?;
        keyboard.wait_for_keyboard(deadline)?;
        Ok(keyboard)
    }

    /// Presses and releases the paste chord.
    pub fn press(&mut self, keys: PasteKeys) -> Result<(), EiError> {
        let chord = self.codes.chord(keys);
        let presses = chord.iter().map(|&code| (code, true));
        let releases = chord.iter().rev().map(|&code| (code, false));
        self.send(&presses.chain(releases).collect::<Vec<_>>())
    }

    /// Presses and releases the submit key (Return, with Ctrl or Shift).
    pub fn press_submit(&mut self, key: Submit) -> Result<(), EiError> {
        let chord = match key {
            Submit::None => return Ok(()),
            Submit::Enter => vec![self.codes.enter],
            Submit::CtrlEnter => vec![self.codes.ctrl, self.codes.enter],
            Submit::ShiftEnter => vec![self.codes.shift, self.codes.enter],
        };
        let presses = chord.iter().map(|&code| (code, true));
        let releases = chord.iter().rev().map(|&code| (code, false));
        self.send(&presses.chain(releases).collect::<Vec<_>>())
    }

    /// Clicks an edit command's key `times` times.
    pub fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), EiError> {
        let code = match key {
            EditKey::Backspace => self.codes.backspace,
            EditKey::Enter => self.codes.enter,
            EditKey::Tab => self.codes.tab,
            EditKey::Escape => self.codes.escape,
        };
        let clicks: Vec<(u32, bool)> = (0..times)
            .flat_map(|_| [(code, true), (code, false)])
            .collect();
        self.send(&clicks)
    }

    /// Types `text` key by key, Shift held for the characters that need it.
    /// Nothing is typed when a character has no key in the desktop's layout.
    pub fn type_text(&mut self, text: &str) -> Result<(), EiError> {
        let mut keys = Vec::new();
        for c in text.chars() {
            let (code, shift) = self
                .codes
                .stroke(c, self.layout, self.caps_lock)
                .ok_or(EiError::NoKeyFor(c))?;
            if shift {
                keys.push((self.codes.shift, true));
            }
            keys.extend([(code, true), (code, false)]);
            if shift {
                keys.push((self.codes.shift, false));
            }
        }
        self.send(&keys)
    }

    /// Sends `keys` (evdev code, pressed) in order, each in its own frame.
    fn send(&mut self, keys: &[(u32, bool)]) -> Result<(), EiError> {
        if let Err(e) = self.ready() {
            if !self.reconnects {
                return Err(e);
            }
            // Nothing was sent yet, so trying again cannot type anything twice.
            tracing::warn!("the libei keyboard: {e}; connecting again");
            *self = Self::connect()?;
            self.ready()?;
        }
        let Some(device) = &self.keyboard else {
            return Err(EiError::NoKeyboard);
        };
        let Some(keyboard) = device.interface::<ei::Keyboard>() else {
            return Err(EiError::NoKeyboard);
        };
        let serial = self.events.connection().serial();
        device.device().start_emulating(serial, self.sequence);
        self.sequence = self.sequence.wrapping_add(1);
        let deadline = Instant::now() + WRITE_TIMEOUT;
        for (i, &(code, pressed)) in keys.iter().enumerate() {
            let state = if pressed {
                ei::keyboard::KeyState::Press
            } else {
                ei::keyboard::KeyState::Released
            };
            keyboard.key(code, state);
            device.device().frame(serial, now_us());
            // A long text would overrun the socket's buffer in one go.
            if i % 64 == 63 {
                flush(&self.context, deadline)?;
            }
        }
        device.device().stop_emulating(serial);
        flush(&self.context, deadline)
    }

    /// Answers pings and follows pauses that came while we were idle, and
    /// waits for the keyboard to be there and resumed.
    fn ready(&mut self) -> Result<(), EiError> {
        read(&self.context)?;
        self.dispatch()?;
        self.wait_for_keyboard(Instant::now() + READY_TIMEOUT)
    }

    /// Reads events until the keyboard is there and resumed, or `deadline`.
    fn wait_for_keyboard(&mut self, deadline: Instant) -> Result<(), EiError> {
        while !(self.keyboard.is_some() && self.resumed) {
            if !wait(&self.context, libc::POLLIN, deadline)? {
                return Err(EiError::NoKeyboard);
            }
            read(&self.context)?;
            self.dispatch()?;
        }
        Ok(())
    }

    /// Handles every event read so far.
    fn dispatch(&mut self) -> Result<(), EiError> {
        while let Some(event) = next_message(&self.context)? {
            self.events
                .handle_event(event)
                .map_err(|e| EiError::Protocol(format!("{e:?}")))?;
        }
        while let Some(event) = self.events.next_event() {
            match event {
                EiEvent::SeatAdded(seat) => {
                    seat.seat.bind_capabilities(&[DeviceCapability::Keyboard]);
                }
                EiEvent::DeviceAdded(added)
                    if added.device.has_capability(DeviceCapability::Keyboard) =>
                {
                    self.codes = match added.device.keymap().map(KeyCodes::from_keymap) {
                        Some(Ok(codes)) => codes,
                        Some(Err(e)) => {
                            tracing::warn!("the keyboard's keymap: {e}; assuming a US layout");
                            KeyCodes::us()
                        }
                        None => KeyCodes::us(),
                    };
                    self.keyboard = Some(added.device);
                    self.resumed = false;
                }
                EiEvent::DeviceRemoved(removed)
                    if Some(&removed.device) == self.keyboard.as_ref() =>
                {
                    self.keyboard = None;
                }
                EiEvent::DevicePaused(paused) if Some(&paused.device) == self.keyboard.as_ref() => {
                    self.resumed = false;
                }
                EiEvent::DeviceResumed(resumed)
                    if Some(&resumed.device) == self.keyboard.as_ref() =>
                {
                    self.resumed = true;
                }
                EiEvent::KeyboardModifiers(mods)
                    if Some(&mods.device) == self.keyboard.as_ref() =>
                {
                    self.layout = mods.group;
                    self.caps_lock = mods.locked & self.codes.caps_mask != 0;
                }
                EiEvent::Disconnected(why) => {
                    return Err(EiError::Disconnected(format!(
                        " ({:?}: {})",
                        why.reason, why.explanation
                    )));
                }
                _ => {}
            }
        }
        let _ = self.context.flush();
        Ok(())
    }
}

/// The evdev codes of the keys a paste needs, and of every character the
/// layout types at its first two levels, in the desktop's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyCodes {
    pub ctrl: u32,
    pub shift: u32,
    pub v: u32,
    pub insert: u32,
    pub enter: u32,
    pub backspace: u32,
    pub tab: u32,
    pub escape: u32,
    /// The Caps Lock modifier's bit in the desktop's modifier masks.
    caps_mask: u32,
    /// Per layout of the keymap: keysym → (evdev code, with Shift).
    typed: Vec<HashMap<u32, (u32, bool)>>,
}

impl KeyCodes {
    /// The US layout: from xkeyboard-config when installed, else the paste
    /// keys alone.
    fn us() -> Self {
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        xkb::Keymap::new_from_names(
            &context,
            "evdev",
            "pc105",
            "us",
            "",
            None,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .map_or_else(Self::evdev, |map| Self::in_keymap(&map))
    }

    /// The paste keys' US evdev codes, nothing typeable: what a keyboard has
    /// until its keymap is known.
    fn evdev() -> Self {
        Self {
            ctrl: evdev::LEFT_CTRL,
            shift: evdev::LEFT_SHIFT,
            v: evdev::V,
            insert: evdev::INSERT,
            enter: evdev::ENTER,
            backspace: evdev::BACKSPACE,
            tab: evdev::TAB,
            escape: evdev::ESC,
            // xkb's usual modifier order puts Lock second.
            caps_mask: 1 << 1,
            typed: Vec::new(),
        }
    }

    fn from_keymap(keymap: &reis::event::Keymap) -> Result<Self, EiError> {
        use std::os::unix::fs::FileExt;
        let unreadable = |e: std::io::Error| EiError::Keymap(e.to_string());
        // Read rather than map it: the text may end in a NUL (as Wayland's
        // keymaps do), which xkbcommon's buffer parser refuses.
        let file = std::fs::File::from(keymap.fd.try_clone().map_err(unreadable)?);
        let mut text = vec![0; keymap.size as usize];
        file.read_exact_at(&mut text, 0).map_err(unreadable)?;
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        text.truncate(end);
        let text = String::from_utf8(text).map_err(|_| EiError::Keymap("not text".into()))?;
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let map = xkb::Keymap::new_from_string(
            &context,
            text,
            xkb::KEYMAP_FORMAT_TEXT_V1,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .ok_or_else(|| EiError::Keymap("it does not compile".into()))?;
        Ok(Self::in_keymap(&map))
    }

    /// Looks each key up by what it types in each layout: at the first level
    /// (no modifier), or else at the second (Shift). The paste keys come from
    /// the first layout.
    pub fn in_keymap(map: &xkb::Keymap) -> Self {
        let typed: Vec<HashMap<u32, (u32, bool)>> = (0..map.num_layouts())
            .map(|layout| {
                // Unshifted keys first, and the lowest code for a keysym on two keys.
                let mut typed = HashMap::new();
                for level in [0, 1] {
                    for code in map.min_keycode().raw()..=map.max_keycode().raw() {
                        // xkb codes are evdev codes + 8.
                        let Some(evdev) = code.checked_sub(8) else {
                            continue;
                        };
                        for sym in map.key_get_syms_by_level(xkb::Keycode::new(code), layout, level)
                        {
                            typed.entry(sym.raw()).or_insert((evdev, level == 1));
                        }
                    }
                }
                typed
            })
            .collect();
        let find = |sym: xkb::Keysym, fallback: u32| {
            typed
                .first()
                .and_then(|t| t.get(&sym.raw()))
                .filter(|(_, shift)| !shift)
                .map_or(fallback, |&(code, _)| code)
        };
        let caps = map.mod_get_index(xkb::MOD_NAME_CAPS);
        Self {
            ctrl: find(xkb::Keysym::Control_L, evdev::LEFT_CTRL),
            shift: find(xkb::Keysym::Shift_L, evdev::LEFT_SHIFT),
            v: find(xkb::Keysym::v, evdev::V),
            insert: find(xkb::Keysym::Insert, evdev::INSERT),
            enter: find(xkb::Keysym::Return, evdev::ENTER),
            backspace: find(xkb::Keysym::BackSpace, evdev::BACKSPACE),
            tab: find(xkb::Keysym::Tab, evdev::TAB),
            escape: find(xkb::Keysym::Escape, evdev::ESC),
            caps_mask: if caps < 32 { 1 << caps } else { 0 },
            typed,
        }
    }

    /// The key that types `c` in `layout`, and whether Shift must be held for
    /// it (with Caps Lock on, letters need the opposite of what they would).
    pub fn stroke(&self, c: char, layout: u32, caps_lock: bool) -> Option<(u32, bool)> {
        let sym = match c {
            '\n' => xkb::Keysym::Return,
            '\t' => xkb::Keysym::Tab,
            c => xkb::utf32_to_keysym(c as u32),
        };
        let table = self
            .typed
            .get(layout as usize)
            .or_else(|| self.typed.first())?;
        let (code, shift) = *table.get(&sym.raw())?;
        let cased = c.to_lowercase().ne(c.to_uppercase());
        Some((code, shift ^ (caps_lock && cased)))
    }

    /// The keys to hold, in order, for `keys`.
    pub fn chord(&self, keys: PasteKeys) -> Vec<u32> {
        match keys {
            PasteKeys::Standard => vec![self.ctrl, self.v],
            PasteKeys::CtrlShiftV => vec![self.ctrl, self.shift, self.v],
            PasteKeys::ShiftInsert => vec![self.shift, self.insert],
        }
    }
}

/// A frame's time: CLOCK_MONOTONIC in microseconds, as libei's `ei_now()`.
fn now_us() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000 + now.tv_nsec as u64 / 1_000
}

/// Reads what the socket holds (it is non-blocking).
fn read(context: &ei::Context) -> Result<(), EiError> {
    match context.read() {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(EiError::Disconnected(" (the socket closed)".into()))
        }
        Err(e) => Err(e.into()),
    }
}

fn next_message(context: &ei::Context) -> Result<Option<ei::Event>, EiError> {
    loop {
        return match context.pending_event() {
            None => Ok(None),
            Some(PendingRequestResult::Request(event)) => Ok(Some(event)),
            Some(PendingRequestResult::ParseError(e)) => Err(EiError::Protocol(format!("{e:?}"))),
            // An object we already dropped: nothing to do with it.
            Some(PendingRequestResult::InvalidObject(_)) => continue,
        };
    }
}

/// Waits until the socket is ready for `events` (POLLIN, POLLOUT); false at `deadline`.
fn wait(context: &ei::Context, events: libc::c_short, deadline: Instant) -> Result<bool, EiError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut fd = libc::pollfd {
            fd: context.as_raw_fd(),
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready =
            unsafe { libc::poll(&mut fd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        match ready {
            n if n > 0 => return Ok(true),
            0 => return Ok(false),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e.into());
                }
            }
        }
    }
}

/// Sends everything queued, waiting for room in the socket (it is non-blocking).
fn flush(context: &ei::Context, deadline: Instant) -> Result<(), EiError> {
    loop {
        let Err(e) = context.flush().map_err(std::io::Error::from) else {
            return Ok(());
        };
        if e.kind() != std::io::ErrorKind::WouldBlock {
            return Err(e.into());
        }
        if !wait(context, libc::POLLOUT, deadline)? {
            return Err(EiError::Protocol(
                "the desktop stopped reading key events".into(),
            ));
        }
    }
}
