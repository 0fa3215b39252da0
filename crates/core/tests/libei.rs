//! The paste keystroke through libei (GNOME and KDE on Wayland) against an
//! EIS server built in this test with reis's server side: what the desktop's
//! compositor runs at the other end of the RemoteDesktop portal's socket. No
//! GNOME or KDE runs here, so the portal's own dialog is not covered.
#![cfg(all(unix, not(target_os = "macos")))]

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use reis::eis;
use reis::handshake::EisHandshaker;
use reis::request::{DeviceCapability, EisRequest, EisRequestConverter};
use reis::PendingRequestResult;
use utter_core::platform::output::ei_keys::{EiError, EiKeyboard};
use utter_core::platform::output::PasteKeys;
use xkbcommon::xkb;

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

/// Serves one client: a seat with a keyboard (with `keymap`, if any) that is
/// resumed once bound; returns the keys received until emulation stops.
fn serve(socket: UnixStream, keymap: Option<(std::fs::File, u32)>) -> JoinHandle<Vec<Key>> {
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

#[test]
fn ctrl_v_uses_the_desktops_layout() {
    let (client, server) = UnixStream::pair().unwrap();
    let received = serve(server, Some(keymap_file("us", "dvorak")));
    let mut keyboard = EiKeyboard::over(client, None).unwrap();
    keyboard.press(PasteKeys::Standard).unwrap();
    // On Dvorak, `v` is typed by the key that is `.` on QWERTY.
    assert_eq!(
        received.join().unwrap(),
        [(CTRL, true), (DOT, true), (DOT, false), (CTRL, false)]
    );
}

#[test]
fn without_a_keymap_the_us_codes_are_sent_in_chord_order() {
    let (client, server) = UnixStream::pair().unwrap();
    let received = serve(server, None);
    let mut keyboard = EiKeyboard::over(client, None).unwrap();
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
