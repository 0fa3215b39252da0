//! The keys that drive a dictation: toggle, hold then latch, Escape to
//! cancel, a hotkey that is taken or unparsable, and `utter ptt`.

use std::time::Duration;

use serde_json::Value;
use utter_core::text::word_error_rate;

use crate::common::wav_files;
use crate::harness::dictate::{ptt, Dictate, Take, HOTKEY};
use crate::harness::serial;
use crate::harness::speech::{clip, truth};
use crate::harness::x11::{desktop, Target};

#[test]
fn toggle_mode_with_stdout_output() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let dictate = Dictate::start(d, tmp.path(), &["--mode", "toggle", "--output", "stdout"]);
    let ev = Take::toggle(d, &clip(3))
        .spoken(|dictate| dictate.no_event("recording_stopped", Duration::from_millis(300)))
        .run(&dictate);
    let line = dictate
        .lines
        .recv_timeout(Duration::from_secs(5))
        .expect("a stdout line");
    assert_eq!(line, ev["text"].as_str().unwrap());
    assert!(word_error_rate(&truth(3), &line) <= 0.15, "{line}");
    dictate.stop();
}

#[test]
fn hold_then_latch_keeps_recording_after_release_and_types_the_text() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let target = Target::open(d, "TypeTargetLatch");
    let dictate = Dictate::start(d, tmp.path(), &["--output", "type"]);
    // Held, latched, let go: the speech comes after the key is up, and a
    // second tap stops it.
    let ev = Take::keys(
        d,
        &clip(4),
        || d.xdotool(&["keydown", HOTKEY]),
        || d.xdotool(&["key", HOTKEY]),
    )
    .started(|dictate| {
        d.xdotool(&["key", "ctrl+shift+l"]);
        dictate.expect("latched", Duration::from_secs(5));
        d.xdotool(&["keyup", HOTKEY]);
    })
    .spoken(|dictate| dictate.no_event("recording_stopped", Duration::from_millis(300)))
    .run(&dictate);
    let typed = target.submit(d);
    assert_eq!(typed, ev["text"].as_str().unwrap());
    assert!(word_error_rate(&truth(4), &typed) <= 0.15, "{typed}");
    dictate.stop();
}

#[test]
fn cancel_discards_the_dictation_but_keeps_its_audio() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let target = Target::open(d, "PasteTargetCancel");
    let dictate = Dictate::start(d, tmp.path(), &["--output", "paste"]);
    d.xdotool(&["keydown", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    d.speak(&clip(1));
    d.xdotool(&["key", "Escape"]);
    dictate.expect("cancelled", Duration::from_secs(5));
    d.xdotool(&["keyup", HOTKEY]);
    dictate.no_event("text_delivered", Duration::from_secs(3));
    assert_eq!(target.submit(d), "", "nothing was pasted");
    let wavs = wav_files(tmp.path());
    assert_eq!(wavs.len(), 1, "the audio is kept on disk");
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(wavs[0].with_extension("json")).unwrap())
            .unwrap();
    assert_eq!(record["status"], "cancelled");
    dictate.stop();
}

#[test]
fn a_taken_or_unparsable_hotkey_is_a_clear_error() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let first = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    // Bounded: a second dictation that wrongly gets the key would run forever.
    let second = d
        .cmd("timeout")
        .args(["30", env!("CARGO_BIN_EXE_utter")])
        .args(["dictate", "--output", "stdout", "--recordings-dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        second.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("cannot register hotkey `ctrl+shift+space`: it is already taken")
            && err.contains("hint: choose another with --hotkey"),
        "{err}"
    );
    first.stop();

    let bad = d
        .cmd(env!("CARGO_BIN_EXE_utter"))
        .args(["dictate", "--hotkey", "ctrl+banana", "--recordings-dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("cannot parse hotkey `ctrl+banana`"), "{err}");
}

#[test]
fn utter_ptt_press_and_release_drive_a_running_dictation() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    let ev = Take::keys(
        d,
        &clip(2),
        || assert_eq!(ptt(d, "press").0, Some(0)),
        || assert_eq!(ptt(d, "release").0, Some(0)),
    )
    .run(&dictate);
    let text = ev["text"].as_str().unwrap();
    assert!(word_error_rate(&truth(2), text) <= 0.15, "{text}");
    let (code, err) = ptt(d, "jump");
    assert_eq!(code, Some(2), "{err}");
    dictate.stop();
    let (code, err) = ptt(d, "press");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no running `utter dictate` or Utter app"),
        "{err}"
    );
}
