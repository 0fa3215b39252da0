//! Pasting into the focused X11 window, the clipboard given back; and paste
//! output with no display at all.

use std::process::Command;

use utter_core::text::word_error_rate;

use crate::harness::dictate::{Dictate, Take};
use crate::harness::serial;
use crate::harness::speech::truth;
use crate::harness::x11::{desktop, Target};

#[test]
fn push_to_talk_pastes_25_s_of_speech_into_the_focused_window_and_restores_the_clipboard() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let _owner = d.set_clipboard("previous clipboard ✓");
    let target = Target::open(d, "PasteTargetPTT");
    let dictate = Dictate::start(d, tmp.path(), &["--output", "paste"]);

    let delivered = Take::hotkey(d, &d.fixtures.join("speech-25s.wav")).run(&dictate);
    assert!(
        delivered["segments"].as_u64().unwrap() >= 2,
        "eager segments: {delivered}"
    );

    let pasted = target.submit(d);
    let reference: Vec<String> = (0..5).map(truth).collect();
    let wer = word_error_rate(&reference.join(" "), &pasted);
    assert!(wer <= 0.15, "WER {wer}: {pasted}");
    assert_eq!(
        d.clipboard(),
        "previous clipboard ✓",
        "the clipboard is restored"
    );
    dictate.stop();
}

#[test]
fn without_a_display_paste_output_is_a_clear_error_and_nothing_touches_x11() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["dictate", "--output", "paste", "--recordings-dir"])
        .arg(tmp.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("there is no display to paste into"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: `--output stdout` prints the text instead"),
        "{stderr}"
    );
    // No hotkey manager (and its X11 thread) is created just to release nothing.
    assert!(!stderr.contains("x11 connection"), "{stderr}");
}
