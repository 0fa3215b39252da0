//! `utter doctor` in the X11 session and as a Wayland one.

use crate::harness::serial;
use crate::harness::x11::desktop;

#[test]
fn doctor_says_what_works_in_this_session() {
    let _guard = serial();
    let d = desktop();
    // Nothing plays into the virtual microphone: digital silence, as from a null device.
    let silent = d
        .cmd(env!("CARGO_BIN_EXE_utter"))
        .arg("doctor")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&silent.stdout);
    assert!(
        report.contains("no  microphone") && report.contains("only digital silence"),
        "{report}"
    );
    // Speech plays into it: a microphone that hears.
    let mut player = d.play(&d.fixtures.join("speech-25s.wav"));
    let x11 = d
        .cmd(env!("CARGO_BIN_EXE_utter"))
        .arg("doctor")
        .output()
        .unwrap();
    let _ = player.kill();
    let _ = player.wait();
    let report = String::from_utf8_lossy(&x11.stdout);
    assert_eq!(x11.status.code(), Some(0), "{report}");
    for line in [
        "ok  session     X11",
        "ok  hotkey",
        "ok  paste",
        "ok  model",
        "ok  vad",
        "ok  microphone",
        "ok  other audio",
    ] {
        assert!(report.contains(line), "`{line}` in:\n{report}");
    }
    let wayland = d
        .cmd(env!("CARGO_BIN_EXE_utter"))
        .arg("doctor")
        .env("WAYLAND_DISPLAY", "wayland-utter-test")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&wayland.stdout);
    assert!(
        report.contains("no  hotkey      this is a Wayland session")
            && report.contains("bind `utter ptt press`"),
        "the CLI's hint follows the core's reason: {report}"
    );
    assert!(report.contains("no  paste"), "{report}");
    assert!(report.contains("ok  clipboard"), "{report}");
}
