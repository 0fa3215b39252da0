//! Benchmark (not a test): what one engine call costs across the process
//! boundary. The same clip goes through an engine in a thread and one in a
//! worker process (started from the `utter` binary), interleaved call by
//! call, so machine noise hits both alike.
//!
//!   cargo build -p utter-cli
//!   cargo run -p utter-core --example bench_engine_boundary -- target/debug/utter CLIP.wav [CALLS]
//!
//! Prints the median wall time per call of each and their difference.

use std::path::PathBuf;
use std::time::Instant;

use utter_engine::{Engine, EngineConfig, EngineHost, RunParams};
use utter_models::ModelStore;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    utter_engine::quiet_native_logs();
    let mut args = std::env::args().skip(1);
    let usage = "usage: bench_engine_boundary UTTER_BIN CLIP.wav [CALLS]";
    let exe = PathBuf::from(args.next().expect(usage));
    let clip = PathBuf::from(args.next().expect(usage));
    let calls: usize = args
        .next()
        .map_or(20, |n| n.parse().expect("CALLS is a number"));
    let store = ModelStore::new(utter_base::paths::models_dir());
    let (_, model_path) = store.resolve_speech(None).expect("default model installed");

    // Decoded to 16 kHz mono, as the engine takes it.
    let mut pcm = Vec::new();
    utter_core::audio::decode::decode_file(&clip, |p| pcm.extend_from_slice(p))
        .expect("a readable clip");
    let seconds = pcm.len() as f64 / 16_000.0;

    let thread = Engine::start(EngineConfig {
        host: EngineHost::Thread,
        ..EngineConfig::new(model_path.clone())
    })
    .expect("engine in a thread");
    let process = Engine::start(EngineConfig {
        host: EngineHost::Process {
            exe,
            idle_unload: None,
        },
        ..EngineConfig::new(model_path)
    })
    .expect("engine in a worker process");

    let (mut in_thread, mut in_process) = (Vec::new(), Vec::new());
    for i in 0..calls + 2 {
        let order: [(&Engine, bool); 2] = if i % 2 == 0 {
            [(&thread, false), (&process, true)]
        } else {
            [(&process, true), (&thread, false)]
        };
        for (engine, is_process) in order {
            let t = Instant::now();
            engine
                .transcribe(vec![pcm.clone()], RunParams::default())
                .expect("a transcript");
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            // The first two rounds warm both up.
            if i >= 2 {
                if is_process {
                    in_process.push(ms)
                } else {
                    in_thread.push(ms)
                }
            }
        }
    }
    let (t, p) = (median(in_thread), median(in_process));
    println!(
        "{calls} calls of a {seconds:.1} s clip each, interleaved: thread {t:.1} ms, worker process {p:.1} ms, difference {:+.1} ms ({:+.1} %)",
        p - t,
        (p / t - 1.0) * 100.0
    );
}
