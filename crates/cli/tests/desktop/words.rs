//! Every word arrives: speech with pauses, another model family, the last
//! word at the release, and the live text while speaking. (Speech from the
//! instant of the press to the instant of the release, in both microphone
//! modes: `tests/mic_edges.rs`.)

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use utter_core::text::word_error_rate;

use crate::harness::dictate::{Dictate, Take, HOTKEY};
use crate::harness::serial;
use crate::harness::speech::{clip_samples, plain_words, speech_with_pauses, truth, write_fixture};
use crate::harness::x11::desktop;

/// Another family live: Moonshine tiny (no 30 s padding, no transcript
/// prefix: each eager run decodes its whole window) dictating speech with
/// pauses, as a person dictates.
#[test]
fn push_to_talk_with_moonshine_tiny_delivers_the_speech_within_15_percent_wer() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let (file, reference) = speech_with_pauses(d, &[0, 1, 2]);
    let dictate = Dictate::start(
        d,
        tmp.path(),
        &["--output", "stdout", "--model", "moonshine-tiny-en"],
    );
    let delivered = Take::hotkey(d, &file).run(&dictate);
    let text = delivered["text"].as_str().unwrap();
    let wer = word_error_rate(&reference, text);
    eprintln!("moonshine tiny dictation, WER {wer:.3}: {text}");
    assert!(wer <= 0.15, "WER {wer}: {text}");
    dictate.stop();
}

#[test]
fn a_release_during_the_last_word_keeps_the_last_word() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    // "...in his power to do for them", cut where the sound of "them" ends.
    let mut pcm = clip_samples(0);
    let last_sound = pcm.iter().rposition(|s| s.unsigned_abs() > 800).unwrap();
    pcm.truncate(last_sound + 1);
    let wav = write_fixture(d, "ends-on-its-last-syllable.wav", &pcm);
    // The default post-roll (400 ms) keeps it; with `--post-roll-ms 0` the
    // text ends "...to do for him."
    let dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    d.xdotool(&["keydown", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    // The key goes up while "them" is still being spoken: 200 ms before
    // the file ends (later still in the audio, which starts after paplay does).
    let playing = Instant::now();
    let mut player = d.play(&wav);
    let length = Duration::from_secs_f64(pcm.len() as f64 / 16_000.0);
    std::thread::sleep((length - Duration::from_millis(200)).saturating_sub(playing.elapsed()));
    d.xdotool(&["keyup", HOTKEY]);
    assert!(player.wait().unwrap().success());
    let delivered = dictate.delivered(Duration::from_secs(60));
    let text = delivered["text"].as_str().unwrap().to_string();
    dictate.stop();
    let last = utter_core::text::normalize_words(&text).pop();
    assert_eq!(
        last.as_deref(),
        Some("them"),
        "the last word is kept: {text}"
    );
    assert!(word_error_rate(&truth(0), &text) <= 0.15, "{text}");
}

#[test]
fn a_37_s_dictation_with_pauses_reads_like_the_whole_file_transcript() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let (wav, reference) = speech_with_pauses(d, &[0, 1, 2, 3, 4, 2]);
    let dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    // Released right after the last syllable: the post-roll keeps it.
    let delivered = Take::hotkey(d, &wav).run(&dictate);
    let dictated = delivered["text"].as_str().unwrap().to_string();
    dictate.stop();

    let whole = Command::new(env!("CARGO_BIN_EXE_utter"))
        .arg("transcribe")
        .arg(&wav)
        .output()
        .unwrap();
    assert!(whole.status.success());
    let whole = String::from_utf8_lossy(&whole.stdout).trim().to_string();
    let (wer_dictated, wer_whole) = (
        word_error_rate(&reference, &dictated),
        word_error_rate(&reference, &whole),
    );
    eprintln!("dictated WER {wer_dictated:.3}, whole file {wer_whole:.3}");
    // The benchmark's target is +1 point over the total; one dictation of
    // ~75 words gets one word of slack.
    assert!(
        wer_dictated <= wer_whole + 0.015,
        "dictated WER {wer_dictated:.3} vs whole file {wer_whole:.3}\n dictated: {dictated}\n whole: {whole}"
    );
    let last = utter_core::text::normalize_words(&dictated).pop();
    assert_eq!(
        last.as_deref(),
        Some("disposed"),
        "the last word is not cut: {dictated}"
    );
}

/// While a 25 s dictation is spoken, `partial_text` events come before the
/// release, and what they call settled is how the final text begins.
#[test]
fn live_text_arrives_while_speaking_and_its_settled_words_begin_the_final_text() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    let delivered = Take::hotkey(d, &d.fixtures.join("speech-25s.wav")).run(&dictate);
    let stopped_at = dictate.seen("recording_stopped")[0]["t_ms"]
        .as_f64()
        .unwrap();
    let partials = dictate.seen("partial_text");
    let before_release: Vec<&Value> = partials
        .iter()
        .filter(|p| p["t_ms"].as_f64().unwrap() < stopped_at)
        .collect();
    assert!(
        before_release.len() >= 2,
        "live text while speaking: {partials:?}"
    );
    let last = before_release.last().unwrap();
    assert!(
        !last["settled"].as_str().unwrap().is_empty(),
        "some words settled while speaking: {last}"
    );
    let final_words = plain_words(delivered["text"].as_str().unwrap());
    for p in &partials {
        let settled = plain_words(p["settled"].as_str().unwrap());
        assert!(
            final_words.starts_with(&settled),
            "settled {settled:?} does not begin the final text {final_words:?}"
        );
    }
    dictate.stop();
}
