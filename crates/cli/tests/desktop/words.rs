//! Every word arrives: speech with pauses, another model family, the first
//! and last words at the press and the release, and the live text while
//! speaking.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use utter_core::text::word_error_rate;

use crate::harness::dictate::{Dictate, Take, HOTKEY};
use crate::harness::serial;
use crate::harness::speech::{
    clip, clip_samples, plain_words, speech_with_pauses, truth, write_fixture,
};
use crate::harness::x11::{desktop, Desktop};

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

/// `clip(i)` without its leading and trailing silence, and its first and
/// last words.
fn trimmed_clip(d: &Desktop, i: usize) -> (PathBuf, String, String) {
    let out = d.fixtures.join(format!("trimmed-{i}.wav"));
    let ok = Command::new("sox")
        .arg(clip(i))
        .arg(&out)
        .args([
            "silence", "1", "0.02", "1%", "reverse", "silence", "1", "0.02", "1%", "reverse",
        ])
        .status()
        .unwrap()
        .success();
    assert!(ok, "sox trims {}", clip(i).display());
    let words = plain_words(&truth(i));
    (out, words[0].clone(), words.last().unwrap().clone())
}

/// Where speech starts in a recording (the first 10 ms louder than -30 dBFS).
fn speech_onset_ms(wav: &Path) -> f64 {
    let mut reader = hound::WavReader::open(wav).unwrap();
    let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    let frame = 160;
    let loud = samples
        .chunks(frame)
        .position(|c| c.iter().map(|&s| (s as f64).abs()).fold(0.0, f64::max) > 1000.0)
        .unwrap_or(0);
    (loud * frame) as f64 / 16.0
}

/// With the default settings, speech that starts at the instant of the key
/// press keeps its first word, and speech that ends at the instant of the
/// release keeps its last word, every time. How close to the press the
/// speech starts is measured in each recording: the ready microphone keeps
/// 300 ms from before the press at its start, so the onset's distance from
/// 300 ms is the speech's start relative to the press.
#[test]
fn with_default_settings_the_first_and_last_words_survive_speech_at_the_press_and_release() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    std::thread::sleep(Duration::from_secs(1)); // the ready mic fills its pre-roll
    const PRE_ROLL_MS: f64 = 300.0;
    // Calibrate: how long after paplay starts does its sound reach the mic?
    let (calibration, ..) = trimmed_clip(d, 0);
    let started = Instant::now();
    let player = d
        .cmd("paplay")
        .args(["--latency-msec=20", "--device=vmic_sink"])
        .arg(&calibration)
        .spawn()
        .unwrap();
    let pressed_after = started.elapsed().as_secs_f64() * 1000.0;
    d.xdotool(&["keydown", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    let mut player = player;
    player.wait().unwrap();
    d.xdotool(&["keyup", HOTKEY]);
    dictate.delivered(Duration::from_secs(60));
    let wav = dictate.seen("recording_started").pop().unwrap()["audio_path"]
        .as_str()
        .unwrap()
        .to_string();
    let latency_ms = (speech_onset_ms(Path::new(&wav)) - PRE_ROLL_MS + pressed_after).max(0.0);
    eprintln!("paplay → mic: {latency_ms:.0} ms");

    let mut report = Vec::new();
    // Clip 2 is left out: whisper tiny.en reads its opening "unless" as "one
    // less" or "not lest" now and then even with all of its audio (a misheard
    // word, not a clipped one; tests/bench/first_word.py).
    for take in 0..10 {
        let i = [0, 1, 3, 4][take % 4];
        let (file, first, last) = trimmed_clip(d, i);
        let mut player = d
            .cmd("paplay")
            .args(["--latency-msec=20", "--device=vmic_sink"])
            .arg(&file)
            .spawn()
            .unwrap();
        // Press when the first sound reaches the microphone.
        std::thread::sleep(Duration::from_secs_f64(latency_ms / 1000.0));
        d.xdotool(&["keydown", HOTKEY]);
        let started = dictate.expect("recording_started", Duration::from_secs(5));
        player.wait().unwrap();
        // paplay exits once its last sample has played: release then.
        d.xdotool(&["keyup", HOTKEY]);
        let delivered = dictate.delivered(Duration::from_secs(60));
        let words = plain_words(delivered["text"].as_str().unwrap());
        let onset =
            speech_onset_ms(Path::new(started["audio_path"].as_str().unwrap())) - PRE_ROLL_MS;
        report.push(format!(
            "take {take}: speech at {onset:+.0} ms from the press: {words:?}"
        ));
        assert_eq!(
            words.first(),
            Some(&first),
            "take {take}: the first word\n{}",
            report.join("\n")
        );
        assert_eq!(
            words.last(),
            Some(&last),
            "take {take}: the last word\n{}",
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
    dictate.stop();
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
