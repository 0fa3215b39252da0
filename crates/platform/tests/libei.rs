//! The paste keystroke through libei (GNOME and KDE on Wayland) against an
//! EIS server built in this test with reis's server side: what the desktop's
//! compositor runs at the other end of the RemoteDesktop portal's socket; and
//! the RemoteDesktop portal client against a fake portal on a private bus. No
//! GNOME or KDE runs here, so their real dialog and EIS servers are not covered.
#![cfg(desktop_linux)]

#[path = "support/fake_portal.rs"]
mod fake_portal;
#[path = "support/session_bus.rs"]
mod session_bus;

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fake_portal::{request_path, respond, session_created, token, PATH};
use reis::eis;
use reis::handshake::EisHandshaker;
use reis::request::{DeviceCapability, EisRequest, EisRequestConverter};
use reis::PendingRequestResult;
use session_bus::private_session_bus;
use utter_platform::output::ei_keys::{EiError, EiKeyboard};
use utter_platform::output::PasteKeys;
use xkbcommon::xkb;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedFd, OwnedObjectPath, OwnedValue};

/// evdev codes (linux/input-event-codes.h).
const CTRL: u32 = 29;
const SHIFT: u32 = 42;
const V: u32 = 47;
/// The key that types `v` on Dvorak (`.` on QWERTY).
const DOT: u32 = 52;

/// A key as the server received it: (evdev code, pressed).
type Key = (u32, bool);

fn wait_readable(fd: &impl AsRawFd, deadline: Instant) {
    let left = deadline.saturating_duration_since(Instant::now());
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ready = unsafe { libc::poll(&mut pfd, 1, left.as_millis() as i32) };
    assert!(ready > 0, "the client sent nothing in time");
}

/// A keymap for `layout`/`variant`, compiled by xkbcommon, in a file to pass by fd.
fn keymap_file(layout: &str, variant: &str) -> (std::fs::File, u32) {
    let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
    let map = xkb::Keymap::new_from_names(
        &context,
        "evdev",
        "pc105",
        layout,
        variant,
        None,
        xkb::KEYMAP_COMPILE_NO_FLAGS,
    )
    .expect("xkeyboard-config has the layout");
    let mut text = map.get_as_string(xkb::KEYMAP_FORMAT_TEXT_V1).into_bytes();
    text.push(0);
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(&text).unwrap();
    (file, text.len() as u32)
}

/// The seat's modifier state as the desktop reports it: (locked, group).
type Modifiers = (u32, u32);

/// Serves one client: a seat with a keyboard (with `keymap`, if any) that is
/// resumed once bound; returns the keys received until emulation stops.
fn serve(socket: UnixStream, keymap: Option<(std::fs::File, u32)>) -> JoinHandle<Vec<Key>> {
    serve_with(socket, keymap, None)
}

/// [`serve`], reporting `modifiers` (Caps Lock, the active layout) once resumed.
fn serve_with(
    socket: UnixStream,
    keymap: Option<(std::fs::File, u32)>,
    modifiers: Option<Modifiers>,
) -> JoinHandle<Vec<Key>> {
    std::thread::spawn(move || {
        let context = eis::Context::new(socket).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut handshaker = EisHandshaker::new(&context, 1);
        let mut converter = None;
        while converter.is_none() {
            wait_readable(&context, deadline);
            context.read().unwrap();
            while let Some(PendingRequestResult::Request(request)) = context.pending_request() {
                if let Some(done) = handshaker.handle_request(request).unwrap() {
                    converter = Some(EisRequestConverter::new(&context, done, 1));
                    break;
                }
            }
        }
        let mut converter = converter.unwrap();
        let connection = converter.handle().clone();
        let seat = connection.add_seat(Some("default"), &[DeviceCapability::Keyboard]);
        connection.flush().unwrap();
        let mut keys = Vec::new();
        loop {
            wait_readable(&context, deadline);
            context.read().unwrap();
            while let Some(PendingRequestResult::Request(request)) = context.pending_request() {
                converter.handle_request(request).unwrap();
            }
            while let Some(request) = converter.next_request() {
                match request {
                    EisRequest::Bind(_) => {
                        let device = seat.add_device(
                            Some("utter test keyboard"),
                            eis::device::DeviceType::Virtual,
                            &[DeviceCapability::Keyboard],
                            |device| {
                                if let Some((file, size)) = &keymap {
                                    device.interface::<eis::Keyboard>().unwrap().keymap(
                                        eis::keyboard::KeymapType::Xkb,
                                        *size,
                                        file.as_fd(),
                                    );
                                }
                            },
                        );
                        device.resumed();
                        if let Some((locked, group)) = modifiers {
                            let keyboard = device.interface::<eis::Keyboard>().unwrap();
                            let serial = connection.with_next_serial(|serial| serial);
                            keyboard.modifiers(serial, 0, locked, 0, group);
                        }
                        connection.flush().unwrap();
                    }
                    EisRequest::KeyboardKey(key) => {
                        keys.push((key.key, key.state == eis::keyboard::KeyState::Press))
                    }
                    EisRequest::DeviceStopEmulating(_) => return keys,
                    _ => {}
                }
            }
        }
    })
}

/// A keyboard connected to a [`serve_with`] server, and that server.
fn connected(
    keymap: Option<(std::fs::File, u32)>,
    modifiers: Option<Modifiers>,
) -> (EiKeyboard, JoinHandle<Vec<Key>>) {
    let (client, server) = UnixStream::pair().unwrap();
    let received = serve_with(server, keymap, modifiers);
    (EiKeyboard::over(client, None).unwrap(), received)
}

#[test]
fn ctrl_v_uses_the_desktops_layout() {
    let (mut keyboard, received) = connected(Some(keymap_file("us", "dvorak")), None);
    keyboard.press(PasteKeys::Standard).unwrap();
    // On Dvorak, `v` is typed by the key that is `.` on QWERTY.
    assert_eq!(
        received.join().unwrap(),
        [(CTRL, true), (DOT, true), (DOT, false), (CTRL, false)]
    );
}

#[test]
fn without_a_keymap_the_us_codes_are_sent_in_chord_order() {
    let (mut keyboard, received) = connected(None, None);
    keyboard.press(PasteKeys::CtrlShiftV).unwrap();
    assert_eq!(
        received.join().unwrap(),
        [
            (CTRL, true),
            (SHIFT, true),
            (V, true),
            (V, false),
            (SHIFT, false),
            (CTRL, false)
        ]
    );
}

#[test]
fn text_is_typed_in_the_desktops_layout_with_shift_where_needed() {
    let (mut keyboard, received) = connected(Some(keymap_file("de", "")), None);
    // German layout: `z` and `y` trade places with US, `Ä` needs Shift.
    keyboard.type_text("zyÄ\n").unwrap();
    const Y: u32 = 21;
    const Z: u32 = 44;
    const APOSTROPHE: u32 = 40;
    const ENTER: u32 = 28;
    assert_eq!(
        received.join().unwrap(),
        [
            (Y, true),
            (Y, false),
            (Z, true),
            (Z, false),
            (SHIFT, true),
            (APOSTROPHE, true),
            (APOSTROPHE, false),
            (SHIFT, false),
            (ENTER, true),
            (ENTER, false),
        ]
    );
}

#[test]
fn typing_follows_the_active_layout_and_caps_lock() {
    const A: u32 = 30;
    const Y: u32 = 21;
    // "us,de" with German active (group 1) and Caps Lock on (Lock is modifier 1).
    let (mut keyboard, received) = connected(Some(keymap_file("us,de", ",")), Some((1 << 1, 1)));
    // `z` is on the Y key in German; Caps Lock makes a letter need Shift to stay lower-case.
    keyboard.type_text("zA").unwrap();
    assert_eq!(
        received.join().unwrap(),
        [
            (SHIFT, true),
            (Y, true),
            (Y, false),
            (SHIFT, false),
            (A, true),
            (A, false)
        ]
    );
}

#[test]
fn a_long_text_is_typed_whole_even_past_the_sockets_buffer() {
    let (mut keyboard, received) = connected(Some(keymap_file("us", "")), None);
    // ~10,000 key events: several times what a socket buffers at once.
    let text = "abc ".repeat(1250);
    keyboard.type_text(&text).unwrap();
    let keys = received.join().unwrap();
    assert_eq!(keys.len(), 2 * text.len());
    assert!(keys
        .chunks(2)
        .all(|k| k[0].0 == k[1].0 && k[0].1 && !k[1].1));
}

#[test]
fn a_character_the_layout_lacks_types_nothing_and_says_which() {
    let (mut keyboard, received) = connected(Some(keymap_file("us", "")), None);
    let err = keyboard.type_text("café").unwrap_err();
    assert!(matches!(err, EiError::NoKeyFor('é')), "{err}");
    assert!(err.to_string().contains("use paste output"), "{err}");
    // Nothing was sent for the characters before it either.
    keyboard.type_text("ok").unwrap();
    const O: u32 = 24;
    const K: u32 = 37;
    assert_eq!(
        received.join().unwrap(),
        [(O, true), (O, false), (K, true), (K, false)]
    );
}

#[test]
fn a_desktop_that_hangs_up_is_an_error_not_a_hang() {
    let (client, server) = UnixStream::pair().unwrap();
    drop(server);
    let started = Instant::now();
    let err = EiKeyboard::over(client, None).err().expect("no keyboard");
    assert!(
        matches!(err, EiError::Disconnected(_) | EiError::Io(_)),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// What the fake RemoteDesktop portal was asked, and its EIS servers.
#[derive(Default)]
struct RemoteDesktopState {
    /// `restore_token` of each SelectDevices (None: none sent).
    restore_tokens: Vec<Option<String>>,
    /// `types` and `persist_mode` of the last SelectDevices.
    selected: Option<(u32, u32)>,
    /// The user cancels the next Start in the dialog.
    cancel_next_start: bool,
    /// The user leaves the next Start's dialog unanswered.
    ignore_next_start: bool,
    starts: u32,
    servers: Vec<JoinHandle<Vec<Key>>>,
}

struct FakeRemoteDesktop(Arc<Mutex<RemoteDesktopState>>);

fn u32_option(options: &HashMap<String, OwnedValue>, key: &str) -> u32 {
    u32::try_from(&options[key]).unwrap()
}

#[zbus::interface(name = "org.freedesktop.portal.RemoteDesktop")]
impl FakeRemoteDesktop {
    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        2
    }

    #[zbus(property)]
    fn available_device_types(&self) -> u32 {
        1 | 2 // keyboard, pointer
    }

    async fn create_session(
        &self,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> OwnedObjectPath {
        session_created(&header, &emitter, &options, "utter_rd").await
    }

    async fn select_devices(
        &self,
        _session: OwnedObjectPath,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> OwnedObjectPath {
        {
            let mut state = self.0.lock().unwrap();
            state.selected = Some((
                u32_option(&options, "types"),
                u32_option(&options, "persist_mode"),
            ));
            let restore = options
                .get("restore_token")
                .map(|t| String::try_from(t.try_clone().unwrap()).unwrap());
            state.restore_tokens.push(restore);
        }
        let path = request_path(&header, &token(&options));
        respond(&emitter, &path, 0, HashMap::new()).await;
        path
    }

    async fn start(
        &self,
        _session: OwnedObjectPath,
        _parent_window: String,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> OwnedObjectPath {
        let path = request_path(&header, &token(&options));
        let (cancelled, ignored, token) = {
            let mut state = self.0.lock().unwrap();
            state.starts += 1;
            let cancelled = std::mem::take(&mut state.cancel_next_start);
            let ignored = std::mem::take(&mut state.ignore_next_start);
            (cancelled, ignored, format!("token-{}", state.starts))
        };
        if ignored {
            // No Response ever comes.
        } else if cancelled {
            respond(&emitter, &path, 1, HashMap::new()).await;
        } else {
            let answer = HashMap::from([
                ("devices", 1u32.into()),
                ("restore_token", token.as_str().into()),
            ]);
            respond(&emitter, &path, 0, answer).await;
        }
        path
    }

    #[zbus(name = "ConnectToEIS")]
    fn connect_to_eis(
        &self,
        _session: OwnedObjectPath,
        _options: HashMap<String, OwnedValue>,
    ) -> OwnedFd {
        let (client, server) = UnixStream::pair().unwrap();
        self.0.lock().unwrap().servers.push(serve(server, None));
        std::os::fd::OwnedFd::from(client).into()
    }
}

#[test]
fn the_remote_desktop_portal_hands_over_a_keyboard_and_asks_only_once() {
    let mut daemon = private_session_bus();
    let data = tempfile::tempdir().unwrap();
    // Only this test in this binary reads these.
    std::env::set_var("UTTER_DATA_DIR", data.path());
    std::env::remove_var("LIBEI_SOCKET");
    let state = Arc::new(Mutex::new(RemoteDesktopState::default()));
    let _portal = zbus::blocking::connection::Builder::session()
        .unwrap()
        .name("org.freedesktop.portal.Desktop")
        .unwrap()
        .serve_at(PATH, FakeRemoteDesktop(state.clone()))
        .unwrap()
        .build()
        .unwrap();
    utter_platform::remote_desktop::available().expect("the fake portal offers a keyboard");

    // The user says no in the desktop's dialog: a clear error, no token kept.
    state.lock().unwrap().cancel_next_start = true;
    let err = EiKeyboard::connect().err().expect("cancelled");
    assert!(err.to_string().contains("Start: not allowed"), "{err}");
    let token_file = data.path().join("remote-desktop-token");
    assert!(!token_file.exists());

    // The dialog is left unanswered: the wait ends with a message, not a hang.
    state.lock().unwrap().ignore_next_start = true;
    let err = EiKeyboard::connect_within(Duration::from_millis(500))
        .err()
        .expect("unanswered");
    assert!(matches!(err, EiError::NotAnswered(_)), "{err}");
    assert!(err.to_string().contains("to be asked again"), "{err}");

    // Granted: keyboard only, kept until revoked; Ctrl+V reaches the desktop.
    let mut keyboard = EiKeyboard::connect().unwrap();
    assert_eq!(state.lock().unwrap().selected, Some((1, 2)));
    keyboard.press(PasteKeys::Standard).unwrap();
    let server = state.lock().unwrap().servers.pop().unwrap();
    assert_eq!(
        server.join().unwrap(),
        [(CTRL, true), (V, true), (V, false), (CTRL, false)]
    );
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), "token-3");

    // The desktop drops the keyboard (this server hangs up after one paste):
    // the next paste connects again, silently thanks to the kept token.
    keyboard.press(PasteKeys::Standard).unwrap();
    let server = state.lock().unwrap().servers.pop().unwrap();
    assert_eq!(
        server.join().unwrap(),
        [(CTRL, true), (V, true), (V, false), (CTRL, false)]
    );
    assert_eq!(
        state
            .lock()
            .unwrap()
            .restore_tokens
            .last()
            .unwrap()
            .as_deref(),
        Some("token-3")
    );
    drop(keyboard);

    // The next start brings the token back, so the desktop need not ask again.
    let _again = EiKeyboard::connect().unwrap();
    assert_eq!(
        state.lock().unwrap().restore_tokens,
        [
            None,
            None,
            None,
            Some("token-3".to_string()),
            Some("token-4".to_string())
        ]
    );
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), "token-5");
    let _ = daemon.kill();
    let _ = daemon.wait();
}
