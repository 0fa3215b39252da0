//! Key presses through libei, where a Wayland desktop offers apps no virtual
//! keyboard (GNOME, KDE): the paste keystroke, or the text typed key by key,
//! on an emulated keyboard on the socket that the
//! RemoteDesktop portal hands over ([`crate::platform::remote_desktop`]), or on
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

/// How long the desktop may take to offer a resumed keyboard.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the user has to answer the desktop's "allow remote control?" dialog.
pub const PERMISSION_TIMEOUT: Duration = Duration::from_secs(120);

/// evdev codes (linux/input-event-codes.h) for a layout-less fallback.
mod evdev {
    pub const LEFT_CTRL: u32 = 29;
    pub const LEFT_SHIFT: u32 = 42;
    pub const V: u32 = 47;
    pub const INSERT: u32 = 110;
}

/// Why libei key presses are not available.
#[derive(Debug, thiserror::Error)]
pub enum EiError {
    #[error("the RemoteDesktop portal: {0}")]
    Portal(#[from] crate::platform::portal::PortalError),
    #[error("the libei socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("the libei protocol: {0}")]
    Protocol(String),
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
    sequence: u32,
    /// The portal session (when it came from the portal) ends with this.
    _portal: Option<zbus::blocking::Connection>,
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
        if let Some(path) = std::env::var_os("LIBEI_SOCKET") {
            return Self::over(UnixStream::connect(path)?, None);
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        std::thread::Builder::new()
            .name("utter-remote-desktop".into())
            .spawn(move || {
                let _ = tx.send(crate::platform::remote_desktop::connect_keyboard());
            })?;
        let remote = rx
            .recv_timeout(timeout)
            .map_err(|_| EiError::NotAnswered(timeout))??;
        Self::over(UnixStream::from(remote.eis), Some(remote.connection))
    }

    /// Handshakes on `socket` and waits for a resumed keyboard.
    pub fn over(
        socket: UnixStream,
        portal: Option<zbus::blocking::Connection>,
    ) -> Result<Self, EiError> {
        let context = ei::Context::new(socket)?;
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut handshaker = EiHandshaker::new("Utter", ei::handshake::ContextType::Sender);
        let handshake = loop {
            wait_readable(&context, deadline)?;
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
            codes: KeyCodes::us(),
            resumed: false,
            sequence: 0,
            _portal: portal,
        };
        // Handshake messages may have carried the first events too.
        keyboard.dispatch()?;
        while !(keyboard.keyboard.is_some() && keyboard.resumed) {
            wait_readable(&keyboard.context, deadline).map_err(|_| EiError::NoKeyboard)?;
            read(&keyboard.context)?;
            keyboard.dispatch()?;
        }
        Ok(keyboard)
    }

    /// Presses and releases the paste chord.
    pub fn press(&mut self, keys: PasteKeys) -> Result<(), EiError> {
        let chord = self.codes.chord(keys);
        let presses = chord.iter().map(|&code| (code, true));
        let releases = chord.iter().rev().map(|&code| (code, false));
        self.send(&presses.chain(releases).collect::<Vec<_>>())
    }

    /// Types `text` key by key, Shift held for the characters that need it.
    /// Nothing is typed when a character has no key in the desktop's layout.
    pub fn type_text(&mut self, text: &str) -> Result<(), EiError> {
        let mut keys = Vec::new();
        for c in text.chars() {
            let (code, shift) = self.codes.stroke(c).ok_or(EiError::NoKeyFor(c))?;
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
        // Answer pings and follow pauses that came while we were idle.
        read(&self.context)?;
        self.dispatch()?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while !(self.keyboard.is_some() && self.resumed) {
            wait_readable(&self.context, deadline).map_err(|_| EiError::NoKeyboard)?;
            read(&self.context)?;
            self.dispatch()?;
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
        for &(code, pressed) in keys {
            let state = if pressed {
                ei::keyboard::KeyState::Press
            } else {
                ei::keyboard::KeyState::Released
            };
            keyboard.key(code, state);
            device.device().frame(serial, now_us());
        }
        device.device().stop_emulating(serial);
        self.context
            .flush()
            .map_err(|e| EiError::Io(std::io::Error::from(e)))?;
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
    /// keysym → (evdev code, with Shift).
    typed: HashMap<u32, (u32, bool)>,
}

impl KeyCodes {
    /// The US layout: from xkeyboard-config when installed, else the paste
    /// keys alone.
    fn us() -> Self {
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        match xkb::Keymap::new_from_names(
            &context,
            "evdev",
            "pc105",
            "us",
            "",
            None,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        ) {
            Some(map) => Self::in_keymap(&map),
            None => Self {
                ctrl: evdev::LEFT_CTRL,
                shift: evdev::LEFT_SHIFT,
                v: evdev::V,
                insert: evdev::INSERT,
                typed: HashMap::new(),
            },
        }
    }

    fn from_keymap(keymap: &reis::event::Keymap) -> Result<Self, EiError> {
        use std::os::unix::fs::FileExt;
        // Read rather than map it: the text may end in a NUL (as Wayland's
        // keymaps do), which xkbcommon's buffer parser refuses.
        let file = std::fs::File::from(keymap.fd.try_clone()?);
        let mut text = vec![0; keymap.size as usize];
        file.read_exact_at(&mut text, 0)?;
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        text.truncate(end);
        let text = String::from_utf8(text)
            .map_err(|_| EiError::Protocol("the keyboard's keymap is not text".into()))?;
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let map = xkb::Keymap::new_from_string(
            &context,
            text,
            xkb::KEYMAP_FORMAT_TEXT_V1,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .ok_or_else(|| EiError::Protocol("the keyboard's keymap does not compile".into()))?;
        Ok(Self::in_keymap(&map))
    }

    /// Looks each key up by what it types in the first layout: at the first
    /// level (no modifier), or else at the second (Shift).
    pub fn in_keymap(map: &xkb::Keymap) -> Self {
        // Unshifted keys first, and the lowest code for a keysym on two keys.
        let mut typed = HashMap::new();
        for level in [0, 1] {
            for code in map.min_keycode().raw()..=map.max_keycode().raw() {
                for sym in map.key_get_syms_by_level(xkb::Keycode::new(code), 0, level) {
                    // xkb codes are evdev codes + 8.
                    typed.entry(sym.raw()).or_insert((code - 8, level == 1));
                }
            }
        }
        let find = |sym: xkb::Keysym, fallback: u32| {
            typed
                .get(&sym.raw())
                .filter(|(_, shift)| !shift)
                .map_or(fallback, |&(code, _)| code)
        };
        Self {
            ctrl: find(xkb::Keysym::Control_L, evdev::LEFT_CTRL),
            shift: find(xkb::Keysym::Shift_L, evdev::LEFT_SHIFT),
            v: find(xkb::Keysym::v, evdev::V),
            insert: find(xkb::Keysym::Insert, evdev::INSERT),
            typed,
        }
    }

    /// The key (and whether Shift) that types `c`.
    pub fn stroke(&self, c: char) -> Option<(u32, bool)> {
        let sym = match c {
            '\n' => xkb::Keysym::Return,
            '\t' => xkb::Keysym::Tab,
            c => xkb::utf32_to_keysym(c as u32),
        };
        self.typed.get(&sym.raw()).copied()
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

/// Waits until the socket has data, or fails at `deadline`.
fn wait_readable(context: &ei::Context, deadline: Instant) -> Result<(), EiError> {
    let left = deadline.saturating_duration_since(Instant::now());
    let mut fd = libc::pollfd {
        fd: context.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let ready = unsafe { libc::poll(&mut fd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
    match ready {
        n if n > 0 => Ok(()),
        0 => Err(EiError::NoKeyboard),
        _ => Err(std::io::Error::last_os_error().into()),
    }
}
