//! Diarizes a 16 kHz mono WAV, prints the turns, the time taken (real-time factor) and,
//! given a reference RTTM, the diarization error rate.
//!
//! cargo run --release -p utter-diarize --example diarize_bench -- AUDIO.wav [REF.rttm] [STEP_S] [THRESHOLD]
//! Models: $UTTER_SPEAKER_MODELS or ~/.cache/utter/speakers (scripts/speaker-models.sh).

use std::path::PathBuf;
use std::time::Instant;

use utter_diarize::der::{der, parse_rttm, Segment};
use utter_diarize::{diarize, DiarizeOptions, SpeakerModels};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wav = args
        .first()
        .expect("usage: diarize_bench AUDIO.wav [REF.rttm] [STEP_S] [THRESHOLD]");
    let dir = std::env::var_os("UTTER_SPEAKER_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/utter/speakers")
        });
    let t = Instant::now();
    let models = SpeakerModels::load(
        &dir.join("segmentation-3.0.bin"),
        &dir.join("campplus_cn_en_common.pt"),
    )
    .unwrap_or_else(|e| panic!("{e} (run scripts/speaker-models.sh)"));
    let load_s = t.elapsed().as_secs_f64();
    let mut reader = hound::WavReader::open(wav).expect("a WAV file");
    let spec = reader.spec();
    assert_eq!(
        (spec.sample_rate, spec.channels),
        (16000, 1),
        "16 kHz mono expected"
    );
    let pcm: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Int => reader
            .samples::<i32>()
            .map(|s| s.unwrap() as f32 / (1u32 << (spec.bits_per_sample - 1)) as f32)
            .collect(),
        hound::SampleFormat::Float => reader.samples::<f32>().map(Result::unwrap).collect(),
    };
    let mut opts = DiarizeOptions::default();
    if let Some(s) = args.get(2) {
        opts.step_s = s.parse().unwrap();
    }
    if let Some(s) = args.get(3) {
        opts.threshold = s.parse().unwrap();
    }
    let t = Instant::now();
    let turns = diarize(&models, &pcm, &opts).expect("diarization");
    let secs = t.elapsed().as_secs_f64();
    let audio_s = pcm.len() as f64 / 16000.0;
    for turn in &turns {
        println!(
            "{:8.2} {:8.2}  Speaker {}",
            turn.start_s,
            turn.end_s,
            turn.speaker + 1
        );
    }
    let speakers = turns.iter().map(|t| t.speaker + 1).max().unwrap_or(0);
    println!(
        "audio {audio_s:.1} s, {speakers} speakers, models loaded in {load_s:.2} s, diarized in {secs:.2} s: \
         {:.2} s per minute of audio (RTF {:.3}), step {} s, threshold {}, {} threads",
        secs / audio_s * 60.0,
        secs / audio_s,
        opts.step_s,
        opts.threshold,
        opts.threads
    );
    if let Some(rttm) = args.get(1).filter(|a| a.ends_with(".rttm")) {
        let reference = parse_rttm(&std::fs::read_to_string(rttm).unwrap());
        let hyp: Vec<Segment> = turns
            .iter()
            .map(|t| Segment {
                start: t.start_s,
                end: t.end_s,
                speaker: t.speaker.to_string(),
            })
            .collect();
        for collar in [0.0, 0.25] {
            let d = der(&reference, &hyp, collar);
            println!(
                "DER {:.1} % (collar {collar} s): missed {:.2} s, false alarm {:.2} s, confusion {:.2} s of {:.2} s",
                d.der * 100.0, d.missed, d.false_alarm, d.confusion, d.reference
            );
        }
    }
}
