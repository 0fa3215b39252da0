//! Diarization benchmark: time per minute of audio, DER against the reference, peak memory.
//!
//! cargo run --release -p utter-diarize --example diarize_bench -- sample|conversation|AUDIO.wav [REF.rttm]
//!   UTTER_DIARIZE_STEP=2.5 UTTER_DIARIZE_THRESHOLD=0.6 UTTER_DIARIZE_THREADS=2 override the defaults;
//!   UTTER_DIARIZE_REPEAT=N tiles the audio N times (a long-recording check; DER not scored).
//! `sample` is pyannote's 30 s call, `conversation` the 5-voice one the tests build
//! (tests/common); models from $UTTER_SPEAKER_MODELS or ~/.cache/utter/speakers.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use utter_diarize::der::{der, parse_rttm};
use utter_diarize::{diarize, DiarizeOptions, SpeakerModels};

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let what = args.first().map(String::as_str).unwrap_or("sample");
    let (mut pcm, mut reference) = match what {
        "sample" => common::sample(),
        "conversation" => common::conversation(),
        wav => {
            let rttm = args
                .get(1)
                .map(|r| parse_rttm(&std::fs::read_to_string(r).unwrap()));
            (
                common::load_wav(std::path::Path::new(wav)),
                rttm.unwrap_or_default(),
            )
        }
    };
    if let Some(n) = env::<usize>("UTTER_DIARIZE_REPEAT") {
        pcm = pcm.repeat(n);
        reference.clear();
    }
    let t = Instant::now();
    let models = SpeakerModels::load(&common::segmentation_path(), &common::embedding_path())
        .expect("models");
    let load_s = t.elapsed().as_secs_f64();
    let mut opts = DiarizeOptions::default();
    opts.step_s = env("UTTER_DIARIZE_STEP").unwrap_or(opts.step_s);
    opts.threshold = env("UTTER_DIARIZE_THRESHOLD").unwrap_or(opts.threshold);
    opts.threads = env("UTTER_DIARIZE_THREADS").unwrap_or(opts.threads);
    let t = Instant::now();
    let turns = diarize(&models, &pcm, &opts).expect("diarization");
    let secs = t.elapsed().as_secs_f64();
    let audio_s = pcm.len() as f64 / 16000.0;
    if std::env::var_os("UTTER_DIARIZE_TURNS").is_some() {
        for turn in &turns {
            println!(
                "{:8.2} {:8.2}  Speaker {}",
                turn.start_s,
                turn.end_s,
                turn.speaker + 1
            );
        }
    }
    let speakers = turns.iter().map(|t| t.speaker + 1).max().unwrap_or(0);
    let mut refs: Vec<&str> = reference.iter().map(|s| s.speaker.as_str()).collect();
    refs.sort();
    refs.dedup();
    println!(
        "{what}: {audio_s:.1} s of audio, {speakers} speakers found ({} in the reference); models loaded in {load_s:.2} s; \
         diarized in {secs:.2} s = {:.2} s per minute of audio (RTF {:.3}); step {} s, threshold {}, {} threads",
        refs.len(),
        secs / audio_s * 60.0,
        secs / audio_s,
        opts.step_s,
        opts.threshold,
        opts.threads
    );
    if !reference.is_empty() {
        let hyp = common::hypothesis(&turns);
        for collar in [0.0, 0.25] {
            let d = der(&reference, &hyp, collar);
            println!(
                "  DER {:.1} % (collar {collar} s): missed {:.2} s, false alarm {:.2} s, confusion {:.2} s of {:.2} s",
                d.der * 100.0,
                d.missed,
                d.false_alarm,
                d.confusion,
                d.reference
            );
        }
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(hwm) = status.lines().find(|l| l.starts_with("VmHWM")) {
        println!(
            "  peak memory (whole process, audio included): {}",
            hwm.trim_start_matches("VmHWM:").trim()
        );
    }
}
