//! Benchmark (not a test): file transcription strategies on the same audio,
//! interleaved in one process so machine noise hits them alike.
//!
//!   cargo run --release -p utter-core --example bench_transcribe -- FILE [ROUNDS]
//!
//! Prints model load time, the per-call floor on a 2 s clip, and for each
//! strategy the median wall time and its ratio to the plain single-call run.

use std::path::PathBuf;
use std::time::Instant;

use utter_core::transcribe::{transcribe_file, FileOptions, Segmentation};
use utter_engine::vad::SpeechDetector;
use utter_engine::{Engine, EngineConfig, RunParams};
use utter_models::ModelStore;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    utter_engine::quiet_native_logs();
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(args.next().expect("usage: bench_transcribe FILE [ROUNDS]"));
    let rounds: usize = args
        .next()
        .map_or(3, |r| r.parse().expect("ROUNDS is a number"));
    let store = ModelStore::new(utter_base::paths::models_dir());
    let (name, model_path) = store.resolve_speech(None).expect("default model installed");
    let vad_path = store.path_of(&store.vad().unwrap().expect("VAD installed"));

    let t = Instant::now();
    let engine = Engine::start(EngineConfig::new(model_path)).unwrap();
    println!(
        "model load (worker start to ready): {:.0} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    let mut vad = SpeechDetector::load(&vad_path).unwrap();
    let single = [engine];
    let engine = &single[0];
    let mp = store.resolve_speech(None).unwrap().1;
    let pair: Vec<Engine> = (0..2)
        .map(|_| {
            Engine::start(EngineConfig {
                threads: utter_engine::cpu::Threads::Fixed(1),
                ..EngineConfig::new(mp.clone())
            })
            .unwrap()
        })
        .collect();

    let mut pcm = Vec::new();
    let report = utter_core::audio::decode_file(&file, |p| pcm.extend_from_slice(p)).unwrap();
    println!("file: {} ({:.1} s)", file.display(), report.decoded_secs);

    let clip: Vec<f32> = pcm[..32_000].to_vec();
    let mut floor = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        engine
            .transcribe(vec![clip.clone()], RunParams::default())
            .unwrap();
        floor.push(t.elapsed().as_secs_f64());
    }
    println!(
        "per-call floor, 2 s clip: median {:.0} ms",
        median(floor) * 1000.0
    );

    type Strategy<'a> = (&'a str, Box<dyn Fn(&mut SpeechDetector) -> usize + 'a>);
    let strategies: Vec<Strategy> = vec![
        (
            "plain: one engine call on the whole file",
            Box::new(|_| {
                let out = engine
                    .transcribe(vec![pcm.clone()], RunParams::default())
                    .unwrap();
                out[0].text.split_whitespace().count()
            }),
        ),
        (
            "utter transcribe (default): VAD + packed windows, 1 worker",
            Box::new(|vad| {
                let options = FileOptions {
                    batch_size: 1,
                    ..Default::default()
                };
                let t = transcribe_file(
                    &single,
                    Segmentation::Vad(vad),
                    &file,
                    &name,
                    &options,
                    |_| {},
                )
                .unwrap();
                t.text().split_whitespace().count()
            }),
        ),
        (
            "utter transcribe --workers 2 --threads 1",
            Box::new(|vad| {
                let options = FileOptions {
                    batch_size: 1,
                    ..Default::default()
                };
                let t = transcribe_file(
                    &pair,
                    Segmentation::Vad(vad),
                    &file,
                    &name,
                    &options,
                    |_| {},
                )
                .unwrap();
                t.text().split_whitespace().count()
            }),
        ),
        (
            "utter transcribe --no-vad: fixed 30 s windows, 2 workers",
            Box::new(|_| {
                let options = FileOptions {
                    batch_size: 1,
                    ..Default::default()
                };
                let t = transcribe_file(&pair, Segmentation::Fixed, &file, &name, &options, |_| {})
                    .unwrap();
                t.text().split_whitespace().count()
            }),
        ),
    ];
    let mut times = vec![Vec::new(); strategies.len()];
    let mut words = vec![0; strategies.len()];
    for round in 0..rounds {
        for (i, (_, run)) in strategies.iter().enumerate() {
            let t = Instant::now();
            words[i] = run(&mut vad);
            times[i].push(t.elapsed().as_secs_f64());
        }
        eprintln!("round {} done", round + 1);
    }
    let base = median(times[0].clone());
    println!(
        "{:<62} {:>9} {:>7} {:>6}",
        "strategy", "median s", "ratio", "words"
    );
    for (i, (label, _)) in strategies.iter().enumerate() {
        let m = median(times[i].clone());
        println!("{label:<62} {m:>9.2} {:>7.2} {:>6}", m / base, words[i]);
    }
}
