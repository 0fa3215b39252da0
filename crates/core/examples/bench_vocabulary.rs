//! Benchmark (not a test): what a vocabulary costs per engine call. Each
//! 16 kHz mono WAV is transcribed with 0, 20 and 100 vocabulary entries, and
//! with the 100 fitted to Utter's token budget as the app sends them,
//! interleaved round by round so machine noise hits all three alike; the
//! table gives the median wall time and decoder time per call, the ratio to
//! no vocabulary, and how many glossary tokens the model was given.
//!
//!   cargo run -p utter-core --example bench_vocabulary -- [ROUNDS] A.wav B.wav ...

use std::path::Path;
use std::time::Instant;

use transcribe_cpp::{Model, RunOptions, Session};
use utter_engine::fit_vocabulary;
use utter_models::ModelStore;

/// Realistic entries: product names, people, jargon (100 of them).
const WORDS: &[&str] = &[
    "Kubernetes",
    "PostgreSQL",
    "GitHub",
    "Tauri",
    "WebAssembly",
    "TypeScript",
    "Svelte",
    "rustc",
    "Clippy",
    "Dashwood",
    "Anna Åberg",
    "Siobhan",
    "Nguyen",
    "Grzegorz",
    "Aoife",
    "ill-disposed",
    "Terraform",
    "Ansible",
    "Grafana",
    "Prometheus",
    "OAuth",
    "JWT",
    "gRPC",
    "protobuf",
    "Kafka",
    "Redis",
    "nginx",
    "systemd",
    "Wayland",
    "PipeWire",
    "PulseAudio",
    "ALSA",
    "CUDA",
    "Vulkan",
    "Metal",
    "ggml",
    "whisper.cpp",
    "transcribe.cpp",
    "Silero",
    "LibriVox",
    "Utter",
    "Handy",
    "VoiceInk",
    "Superwhisper",
    "Wispr Flow",
    "OpenWhispr",
    "Buzz",
    "faster-whisper",
    "CTranslate2",
    "ONNX",
    "Hugging Face",
    "PyPI",
    "crates.io",
    "npm",
    "Debian",
    "Fedora",
    "Ubuntu",
    "macOS",
    "Windows",
    "Xvfb",
    "xdotool",
    "WebDriver",
    "Playwright",
    "Chromium",
    "WebKitGTK",
    "SQLite",
    "rusqlite",
    "serde",
    "tokio",
    "cpal",
    "arboard",
    "enigo",
    "symphonia",
    "rubato",
    "hound",
    "reqwest",
    "clap",
    "indicatif",
    "thiserror",
    "anyhow",
    "tracing",
    "postcard",
    "crossbeam",
    "rtrb",
    "zbus",
    "x11rb",
    "libei",
    "portal",
    "Kiran Patel",
    "Zoë Dubois",
    "Mariusz",
    "Oluwaseun",
    "Thandiwe",
    "Bartholomew",
    "Xiaoming",
    "Eilidh",
    "Saoirse",
    "Joaquín",
    "Ngozi",
    "Tomasz",
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    utter_engine::quiet_native_logs();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = match args.first().and_then(|a| a.parse::<usize>().ok()) {
        Some(n) => {
            args.remove(0);
            n
        }
        None => 5,
    };
    assert_eq!(WORDS.len(), 100);
    let store = ModelStore::new(utter_base::paths::models_dir());
    let (name, model_path) = store.resolve_speech(None).expect("default model installed");
    let model = Model::load(&model_path).expect("model loads");
    let mut session: Session = model.session().expect("session");
    let all: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
    let fitted = fit_vocabulary(&model, &all);
    let lists: [&[String]; 4] = [&[], &all[..20], &all, &fitted];
    let glossary_tokens = |words: &[String]| {
        model
            .tokenize(&format!(" Glossary: {}", words.join(", ")))
            .map_or(0, |t| t.len())
    };
    println!("model {name}; {rounds} rounds; median ms per call (wall / decoder), ratio of wall to no vocabulary");
    println!(
        "| audio | 0 entries | 20 entries ({} tokens) | 100 entries ({} tokens; the engine keeps what fits its slot) | 100 fitted by Utter ({} entries, {} tokens) |",
        glossary_tokens(lists[1]),
        glossary_tokens(lists[2]),
        fitted.len(),
        glossary_tokens(lists[3])
    );
    println!("|---|---|---|---|---|");
    for file in &args {
        let mut reader = hound::WavReader::open(Path::new(file)).expect("a WAV file");
        assert_eq!(
            reader.spec().sample_rate,
            16_000,
            "{file}: 16 kHz mono expected"
        );
        let pcm: Vec<f32> = reader
            .samples::<i16>()
            .map(|s| f32::from(s.expect("sample")) / 32768.0)
            .collect();
        let options = |words: &[String]| RunOptions {
            vocabulary: words.to_vec(),
            ..Default::default()
        };
        // One warm-up call per list, then the rounds, interleaved.
        let mut wall = vec![Vec::new(); lists.len()];
        let mut decode = vec![Vec::new(); lists.len()];
        for round in 0..=rounds {
            for (i, words) in lists.iter().enumerate() {
                let t = Instant::now();
                let out = session.run(&pcm, &options(words)).expect("engine run");
                if round > 0 {
                    wall[i].push(t.elapsed().as_secs_f64() * 1000.0);
                    decode[i].push(f64::from(out.timings.decode_ms));
                }
            }
        }
        let base = median(wall[0].clone());
        let cells: Vec<String> = (0..lists.len())
            .map(|i| {
                let w = median(wall[i].clone());
                format!(
                    "{w:.0} / {:.0} ({:.2}×)",
                    median(decode[i].clone()),
                    w / base
                )
            })
            .collect();
        println!(
            "| {} ({:.1} s) | {} |",
            Path::new(file).file_name().unwrap().to_string_lossy(),
            pcm.len() as f64 / 16_000.0,
            cells.join(" | ")
        );
    }
}
