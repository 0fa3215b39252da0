//! Benchmark (not a test): where the time of one dictation window run goes.
//! For each 16 kHz mono WAV, the engine's own mel / encoder / decoder times
//! for a plain run, a run with the text so far as a transcript prefix (minus
//! its last 4 words, as dictation does), and the same text as a prompt.
//!
//!   cargo run -p utter-core --example bench_window_run -- A.wav B.wav ...
//!
//! Each variant runs 3 times; the last run is printed (the first warm up).

use std::path::Path;
use std::time::Instant;

use transcribe_cpp::{Model, RunOptions, Session, TimestampKind};
use utter_models::ModelStore;

fn timed(
    session: &mut Session,
    pcm: &[f32],
    options: &RunOptions,
) -> (f64, transcribe_cpp::Transcript) {
    let mut last = None;
    for _ in 0..3 {
        let t = Instant::now();
        let transcript = session.run(pcm, options).expect("engine run");
        last = Some((t.elapsed().as_secs_f64() * 1000.0, transcript));
    }
    last.expect("three runs")
}

fn main() {
    utter_engine::quiet_native_logs();
    let store = ModelStore::new(utter_base::paths::models_dir());
    let (name, model_path) = store.resolve_speech(None).expect("default model installed");
    let model = Model::load(&model_path).expect("model loads");
    let mut session = model.session().expect("session");
    println!("model {name}; times in ms (wall / mel / encoder / decoder)");
    println!("| audio | words | plain | with prefix | with prompt |");
    println!("|---:|---:|---|---|---|");
    for file in std::env::args().skip(1) {
        let mut reader = hound::WavReader::open(Path::new(&file)).expect("a WAV file");
        assert_eq!(
            reader.spec().sample_rate,
            16_000,
            "{file}: 16 kHz mono expected"
        );
        let pcm: Vec<f32> = reader
            .samples::<i16>()
            .map(|s| f32::from(s.expect("sample")) / 32768.0)
            .collect();
        let auto = RunOptions {
            timestamps: TimestampKind::Auto,
            ..Default::default()
        };
        let (plain_ms, plain) = timed(&mut session, &pcm, &auto);
        let words: Vec<&str> = plain.text.split_whitespace().collect();
        let so_far = words[..words.len().saturating_sub(4)].join(" ");
        let (prefix_ms, prefixed) = timed(
            &mut session,
            &pcm,
            &RunOptions {
                prefix: Some(so_far.clone()),
                ..auto.clone()
            },
        );
        let (prompt_ms, prompted) = timed(
            &mut session,
            &pcm,
            &RunOptions {
                prompt: Some(so_far),
                ..auto.clone()
            },
        );
        let cell = |ms: f64, t: &transcribe_cpp::Transcript| {
            let x = &t.timings;
            format!(
                "{ms:.0} / {:.0} / {:.0} / {:.0}",
                x.mel_ms, x.encode_ms, x.decode_ms
            )
        };
        println!(
            "| {:.1} s | {} | {} | {} | {} |",
            pcm.len() as f64 / 16_000.0,
            words.len(),
            cell(plain_ms, &plain),
            cell(prefix_ms, &prefixed),
            cell(prompt_ms, &prompted)
        );
    }
}
