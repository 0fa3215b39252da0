//! When Utter quits, the clipboard it was serving back (the user's copy,
//! restored after a paste: on X11 it lives in Utter's clipboard thread) is
//! handed to the clipboard manager, where one runs: MATE's settings daemon,
//! whose clipboard plugin is GNOME's implementation of freedesktop's
//! ClipboardManager spec (`SAVE_TARGETS`), on a private Xvfb and D-Bus
//! session. Its own test binary: DISPLAY and the session bus
//! are the whole process's. Linux only.
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::time::Duration;

use utter_platform::output::{open_sink, Delivered, OutputConfig, OutputEnv, PasteKeys};

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/session_bus.rs"]
mod session_bus;
#[path = "support/x11_apps.rs"]
mod x11_apps;
use paste_matrix::delivery;
use session_bus::private_session_bus;
use utter_test_support::desktop::png;
use utter_test_support::x11_clipboard::{clipboard, clipboard_offers, copy};
use x11_apps::{focus, start_xvfb, wait_until, CatTerminal, Killed};

/// Whether some client owns CLIPBOARD_MANAGER: a clipboard manager runs.
fn manager_runs() -> bool {
    use x11rb::protocol::xproto::ConnectionExt as _;
    let Ok((conn, _)) = x11rb::connect(None) else {
        return false;
    };
    let atom = conn
        .intern_atom(false, b"CLIPBOARD_MANAGER")
        .unwrap()
        .reply()
        .unwrap()
        .atom;
    let owner = conn
        .get_selection_owner(atom)
        .unwrap()
        .reply()
        .unwrap()
        .owner;
    owner != x11rb::NONE
}

#[test]
fn when_utter_quits_the_clipboard_manager_keeps_the_users_image() {
    let dir = tempfile::tempdir().unwrap();
    let (_xvfb, _display) = start_xvfb();
    let _bus = Killed(private_session_bus());
    let _manager = Killed(
        Command::new("mate-settings-daemon")
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xfsettingsd is installed (apt install xfce4-settings)"),
    );
    wait_until(
        "xfsettingsd's clipboard manager",
        Duration::from_secs(20),
        manager_runs,
    );

    let image = png(dir.path());
    let user_copy = copy(&image, "image/png");
    let xterm = CatTerminal::xterm(dir.path());
    focus(&xterm.window);
    {
        let (mut sink, _) =
            open_sink(&OutputConfig::default(), &OutputEnv::detect(None)).expect("a paste sink");
        let outcome = sink
            .deliver("dictated", &delivery(PasteKeys::ShiftInsert))
            .expect("pasted");
        assert_eq!(outcome.delivered, Delivered::Pasted);
        wait_until("the text in xterm", Duration::from_secs(5), || {
            xterm.text() == "dictated"
        });
        // Utter serves the image back now: xclip, the user's copy, is gone.
        wait_until("the image back", Duration::from_secs(3), || {
            clipboard_offers("image/png")
        });
        drop(user_copy);
    } // The sink goes, as when Utter quits.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while clipboard("image/png") != image && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        clipboard("image/png") == image,
        "the image is not on the clipboard after Utter went; it offers {:?}",
        String::from_utf8_lossy(&clipboard("TARGETS"))
    );
}
