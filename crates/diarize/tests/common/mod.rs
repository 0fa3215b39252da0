//! Real speech for the diarization tests and benchmark: pyannote's sample call with its
//! reference, and a longer conversation assembled from recordings of five people.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use utter_diarize::der::{parse_rttm, Segment};
use utter_diarize::SpeakerModels;

const RATE: f64 = 16_000.0;
pub const LIBRIVOX: &str = "/usr/share/pocketsphinx/test/data/librivox";
pub const ASTERISK: &str = "/usr/share/asterisk/sounds";

/// Where scripts/speaker-models.sh puts the weights and the sample call
/// (`$UTTER_SPEAKER_MODELS` overrides it). Missing files fail the test: CI must have them.
pub fn speakers_dir() -> PathBuf {
    let dir = std::env::var_os("UTTER_SPEAKER_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/utter/speakers")
        });
    for f in [
        "segmentation-3.0.bin",
        "campplus_cn_en_common.pt",
        "sample.wav",
        "sample.rttm",
    ] {
        assert!(
            dir.join(f).is_file(),
            "{} is missing: run scripts/speaker-models.sh (scripts/bootstrap.sh test and npm test do)",
            dir.join(f).display()
        );
    }
    dir
}

pub fn segmentation_path() -> PathBuf {
    speakers_dir().join("segmentation-3.0.bin")
}

pub fn embedding_path() -> PathBuf {
    speakers_dir().join("campplus_cn_en_common.pt")
}

/// The models, loaded once per test binary.
pub fn models() -> &'static SpeakerModels {
    static MODELS: OnceLock<SpeakerModels> = OnceLock::new();
    MODELS.get_or_init(|| {
        SpeakerModels::load(&segmentation_path(), &embedding_path()).expect("speaker models load")
    })
}

pub fn load_wav(path: &Path) -> Vec<f32> {
    let mut r = hound::WavReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec = r.spec();
    assert_eq!(
        (spec.sample_rate, spec.channels, spec.bits_per_sample),
        (16000, 1, 16),
        "{}",
        path.display()
    );
    r.samples::<i16>()
        .map(|s| s.unwrap() as f32 / 32768.0)
        .collect()
}

/// pyannote's 30 s two-person call and its reference turns.
pub fn sample() -> (Vec<f32>, Vec<Segment>) {
    let dir = speakers_dir();
    let rttm = std::fs::read_to_string(dir.join("sample.rttm")).unwrap();
    (load_wav(&dir.join("sample.wav")), parse_rttm(&rttm))
}

/// An Asterisk voice prompt (G.722) decoded to 16 kHz with ffmpeg.
pub fn asterisk(voice: &str, name: &str) -> Vec<f32> {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("prompt.wav");
    utter_test_support::call::asterisk_prompt(&format!("{voice}/{name}"), &wav);
    load_wav(&wav)
}

/// `pcm` without its leading and trailing silence (10 ms frames 40 dB under the loudest).
pub fn trim(pcm: &[f32]) -> &[f32] {
    let rms: Vec<f32> = pcm
        .chunks(160)
        .map(|c| (c.iter().map(|v| v * v).sum::<f32>() / c.len() as f32).sqrt())
        .collect();
    let peak = rms.iter().cloned().fold(0.0, f32::max);
    let loud = |r: &&f32| **r > peak * 0.01;
    let first = rms.iter().position(|r| loud(&r)).unwrap_or(0);
    let last = rms
        .iter()
        .rposition(|r| loud(&r))
        .unwrap_or(rms.len().saturating_sub(1));
    &pcm[first * 160..((last + 1) * 160).min(pcm.len())]
}

/// `clip` scaled to an RMS of 0.05 (−26 dBFS), as a meeting recorder's gain control would.
fn level(clip: &[f32]) -> Vec<f32> {
    let rms = (clip.iter().map(|v| v * v).sum::<f32>() / clip.len().max(1) as f32).sqrt();
    clip.iter().map(|v| v * 0.05 / rms.max(1e-6)).collect()
}

/// A conversation of five real voices taking turns with 0.5 s pauses (about 2.5 min):
/// the two people of pyannote's sample call (their solo stretches, cut at the reference
/// turns), the LibriVox reader (pocketsphinx-testdata), and the English and French-Canadian
/// Asterisk voices (Allison, June). Returns the audio and its reference turns.
pub fn conversation() -> (Vec<f32>, Vec<Segment>) {
    let (call, _) = sample();
    let cut = |a: f64, b: f64| call[(a * RATE) as usize..(b * RATE) as usize].to_vec();
    let mut speakers: Vec<(&str, Vec<Vec<f32>>)> = vec![
        (
            "call-a",
            vec![
                cut(8.35, 9.92),
                cut(11.03, 14.49),
                cut(18.59, 21.49),
                cut(28.50, 30.0),
            ],
        ),
        (
            "call-b",
            vec![cut(14.70, 17.92), cut(21.78, 24.6), cut(24.6, 27.85)],
        ),
        (
            "librivox",
            ["0870", "0880", "0890", "0920", "0930"]
                .iter()
                .map(|n| {
                    trim(&load_wav(&Path::new(LIBRIVOX).join(format!(
                        "sense_and_sensibility_01_austen_64kb-{n}.wav"
                    ))))
                    .to_vec()
                })
                .collect(),
        ),
        ("allison", prompts("en_US_f_Allison", 36.0)),
        ("june", prompts("fr_CA_f_June", 36.0)),
    ];
    // Take turns: always the speaker with the most speech left, never twice in a row.
    let mut audio = Vec::new();
    let mut reference = Vec::new();
    let mut last = usize::MAX;
    let pause = vec![0.0f32; (0.5 * RATE) as usize];
    loop {
        let left = |s: &(&str, Vec<Vec<f32>>)| s.1.iter().map(Vec::len).sum::<usize>();
        let next = (0..speakers.len())
            .filter(|&i| i != last && !speakers[i].1.is_empty())
            .max_by_key(|&i| left(&speakers[i]));
        let Some(i) = next else { break };
        let clip = level(&speakers[i].1.remove(0));
        audio.extend_from_slice(&pause);
        let start = audio.len() as f64 / RATE;
        audio.extend_from_slice(&clip);
        reference.push(Segment {
            start,
            end: audio.len() as f64 / RATE,
            speaker: speakers[i].0.to_string(),
        });
        last = i;
    }
    audio.extend_from_slice(&pause);
    (audio, reference)
}

/// Trimmed prompts of one Asterisk voice, 1.5–5 s each, in name order, until `seconds`.
fn prompts(voice: &str, seconds: f64) -> Vec<Vec<f32>> {
    let dir = Path::new(ASTERISK).join(voice);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (apt install asterisk-core-sounds-en-g722 asterisk-core-sounds-fr-g722)",
                dir.display()
            )
        })
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".g722"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    let mut total = 0.0;
    for name in names {
        // G.722 is 8000 bytes a second: pick by size before decoding.
        let bytes = std::fs::metadata(dir.join(&name))
            .map(|m| m.len())
            .unwrap_or(0);
        if !(16_000..=40_000).contains(&bytes) {
            continue;
        }
        let clip = trim(&asterisk(voice, &name)).to_vec();
        let secs = clip.len() as f64 / RATE;
        if secs < 1.5 {
            continue;
        }
        total += secs;
        out.push(clip);
        if total >= seconds {
            break;
        }
    }
    out
}

/// Turns as DER segments.
pub fn hypothesis(turns: &[utter_diarize::SpeakerTurn]) -> Vec<Segment> {
    turns
        .iter()
        .map(|t| Segment {
            start: t.start_s,
            end: t.end_s,
            speaker: t.speaker.to_string(),
        })
        .collect()
}
