//! `utter transcribe --speakers` end to end: the real binary, the real default speech
//! model and the speaker models installed as users install them (`utter models install
//! speakers`, which scripts/bootstrap.sh runs), on pyannote's real two-person call
//! (scripts/speaker-models.sh puts it in ~/.cache/utter/speakers with its reference turns).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

fn speakers_dir() -> PathBuf {
    std::env::var_os("UTTER_SPEAKER_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/utter/speakers")
        })
}

/// The call; missing, the test fails (CI must have it).
fn sample() -> String {
    let wav = speakers_dir().join("sample.wav");
    assert!(
        wav.is_file(),
        "{} is missing: run scripts/speaker-models.sh (scripts/bootstrap.sh test does)",
        wav.display()
    );
    wav.to_string_lossy().into_owned()
}

/// The reference turns: (start s, end s, speaker).
fn reference() -> Vec<(f64, f64, String)> {
    let rttm = std::fs::read_to_string(speakers_dir().join("sample.rttm")).unwrap();
    rttm.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let start: f64 = f.get(3)?.parse().ok()?;
            let dur: f64 = f.get(4)?.parse().ok()?;
            Some((start, start + dur, f.get(7)?.to_string()))
        })
        .collect()
}

fn utter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(args)
        .output()
        .expect("utter runs")
}

fn transcribe(args: &[&str]) -> String {
    let mut all = vec!["transcribe", "--speakers"];
    all.extend_from_slice(args);
    let out = utter(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "utter {all:?}: {stderr}\n(the speaker models are installed by `utter models install speakers`; scripts/bootstrap.sh test runs it)"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every assignment of `from` to distinct members of `to` (all of them when `to` is as long).
fn mappings(from: &[String], to: &[String]) -> Vec<BTreeMap<String, String>> {
    let Some((first, rest)) = from.split_first() else {
        return vec![BTreeMap::new()];
    };
    let mut out = Vec::new();
    for target in to {
        let left: Vec<String> = to.iter().filter(|t| *t != target).cloned().collect();
        for mut m in mappings(rest, &left) {
            m.insert(first.clone(), target.clone());
            out.push(m);
        }
    }
    if out.is_empty() {
        // More hypothesis speakers than reference ones: the extra are always wrong.
        for mut m in mappings(rest, to) {
            m.insert(first.clone(), String::new());
            out.push(m);
        }
    }
    out
}

#[test]
fn the_sample_call_has_two_speakers_and_most_words_go_to_the_one_who_said_them() {
    let json: serde_json::Value =
        serde_json::from_str(&transcribe(&["--format", "json", &sample()])).unwrap();
    let speakers: Vec<String> = json["speakers"]
        .as_array()
        .expect("a speakers list")
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(speakers, ["Speaker 1", "Speaker 2"]);
    // (words, midpoint s, speaker) per segment.
    let segments: Vec<(usize, f64, String)> = json["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let (start, end) = (s["start"].as_f64().unwrap(), s["end"].as_f64().unwrap());
            assert!(start <= end && end <= 30.5, "{s}");
            let speaker = s["speaker"]
                .as_str()
                .unwrap_or_else(|| panic!("no speaker: {s}"));
            (
                s["text"].as_str().unwrap().split_whitespace().count(),
                (start + end) / 2.0,
                speaker.to_string(),
            )
        })
        .collect();
    let words: usize = segments.iter().map(|s| s.0).sum();
    assert!(words >= 60, "{words} words: {json}");
    let reference = reference();
    let mut ref_speakers: Vec<String> = reference.iter().map(|r| r.2.clone()).collect();
    ref_speakers.sort();
    ref_speakers.dedup();
    // The share of words whose segment's middle lies in a turn of the speaker they were
    // given, under the best naming of the speakers.
    let best = mappings(&speakers, &ref_speakers)
        .into_iter()
        .map(|m| {
            segments
                .iter()
                .filter(|(_, mid, who)| {
                    reference
                        .iter()
                        .any(|(a, b, r)| a <= mid && mid <= b && m[who] == *r)
                })
                .map(|s| s.0)
                .sum::<usize>()
        })
        .max()
        .unwrap();
    let share = best as f64 / words as f64;
    println!(
        "sample.wav: {best} of {words} words ({:.1} %) attributed to the speaker who said them, {} segments",
        share * 100.0,
        segments.len()
    );
    // Measured: 73 of 73 words (whisper tiny.en, each speaker span transcribed on its own).
    assert!(
        share >= 0.95,
        "only {:.1} % of the words attributed right: {json}",
        share * 100.0
    );
}

#[test]
fn markdown_subtitles_and_text_carry_the_speakers() {
    let wav = sample();
    let md = transcribe(&["--format", "md", &wav]);
    assert!(md.starts_with("**Speaker 1** [00:00:0"), "{md}");
    assert!(md.contains("\n\n**Speaker 2** [00:00:"), "{md}");
    // Consecutive segments of one speaker are one paragraph.
    let labels: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("**"))
        .map(|l| &l[..13])
        .collect();
    assert!(labels.windows(2).all(|p| p[0] != p[1]), "{md}");
    let srt = transcribe(&["--format", "srt", &wav]);
    assert!(
        srt.contains(" --> ") && srt.contains("\nSpeaker 1: "),
        "{srt}"
    );
    assert!(srt.contains("\nSpeaker 2: "), "{srt}");
    let vtt = transcribe(&["--format", "vtt", &wav]);
    assert!(
        vtt.starts_with("WEBVTT\n") && vtt.contains("\n<v Speaker 1>"),
        "{vtt}"
    );
    assert!(vtt.contains("\n<v Speaker 2>"), "{vtt}");
    // A known count is obeyed: one speaker says everything; named, the
    // name replaces the label, and a name with no speaker is said.
    let out = utter(&[
        "transcribe",
        "--speakers",
        "--num-speakers",
        "1",
        "--speaker-names",
        "Anna,Ben",
        "--format",
        "srt",
        &wav,
    ]);
    let one = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        one.contains("\nAnna: ") && !one.contains("Speaker"),
        "{one}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 of the --speaker-names had no speaker"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn speakers_without_the_speaker_models_say_how_to_install_them() {
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["transcribe", "--speakers", &sample()])
        .env("UTTER_MODELS_DIR", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("speaker models are not installed")
            && err.contains("utter models install speakers"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    // --num-speakers means nothing without --speakers.
    let out = utter(&["transcribe", "--num-speakers", "2", &sample()]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 44: `--speaker-model` takes a model with the engine's diarization
/// role (Sortformer, whose weights are not obtainable here); a speech model
/// given instead is refused by name, with the role it lacks, before any
/// transcription.
#[test]
fn a_speaker_model_without_the_diarization_role_is_refused_by_name() {
    let out = utter(&[
        "transcribe",
        "--speakers",
        "--speaker-model",
        "whisper-tiny.en",
        &sample(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("cannot tell speakers apart") && stderr.contains("Sortformer"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    let missing = utter(&[
        "transcribe",
        "--speakers",
        "--speaker-model",
        "no-such-model",
        &sample(),
    ]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no model `no-such-model`"));
}
