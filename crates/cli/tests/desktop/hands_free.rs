//! Hands-free stop on silence (`--stop-on-silence`) with real speech into
//! the virtual microphone: a toggled dictation ends by itself the
//! configured silence after the last word, and one in which nothing is
//! said is cancelled with the reason.

use std::path::Path;
use std::time::Duration;

use utter_core::text::word_error_rate;

use crate::harness::dictate::{Dictate, HOTKEY};
use crate::harness::serial;
use crate::harness::speech::{clip, truth};
use crate::harness::x11::{desktop, Desktop};

/// The dictation's voice-detector padding after each span (`DictationConfig`).
const PAD_MS: i64 = 300;

/// `utter dictate` in toggle mode with `--stop-on-silence SECONDS`, one
/// dictation started with a tap of the hotkey.
fn started_hands_free(d: &Desktop, dir: &Path, seconds: &str) -> Dictate {
    let dictate = Dictate::start(
        d,
        dir,
        &[
            "--mode",
            "toggle",
            "--output",
            "stdout",
            "--stop-on-silence",
            seconds,
        ],
    );
    d.xdotool(&["key", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    dictate
}

#[test]
fn a_toggled_dictation_ends_the_set_silence_after_the_last_word() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let dictate = started_hands_free(d, tmp.path(), "1.5");
    d.speak(&clip(3));
    // No second press: the silence after the speech ends it.
    let stopped = dictate.expect("recording_stopped", Duration::from_secs(10));
    let delivered = dictate.delivered(Duration::from_secs(60));
    let text = delivered["text"].as_str().unwrap();
    assert!(word_error_rate(&truth(3), text) <= 0.15, "{text}");
    assert!(
        !dictate.seen("stopping_on_silence").is_empty(),
        "the countdown was shown"
    );
    // The last word's end, as the voice detector put it (its span's end
    // less the padding), to the stop: the configured 1.5 s, give or take
    // the detector's frames and the microphone's chunks.
    let last_word_ms = dictate
        .seen("segment_closed")
        .iter()
        .map(|s| s["end_ms"].as_i64().unwrap() - PAD_MS)
        .max()
        .expect("speech was heard");
    let silence_ms = stopped["audio_ms"].as_i64().unwrap() - last_word_ms;
    eprintln!("stopped {silence_ms} ms after the last word (set: 1500)");
    assert!(
        (1200..=1800).contains(&silence_ms),
        "stopped {silence_ms} ms after the last word, not 1500 ± 300"
    );
    dictate.stop();
}

#[test]
fn a_hands_free_dictation_with_nothing_said_is_cancelled_and_says_why() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let dictate = started_hands_free(d, tmp.path(), "1");
    // Other notices (the desktop's) may come first.
    let said_why = (0..5).any(|_| {
        let notice = dictate.expect("notice", Duration::from_secs(15));
        notice["message"]
            .as_str()
            .unwrap()
            .contains("nothing was said within 10 s")
    });
    assert!(said_why, "{:?}", dictate.seen("notice"));
    dictate.expect("cancelled", Duration::from_secs(5));
    dictate.no_event("text_delivered", Duration::from_millis(500));
    dictate.stop();
}
