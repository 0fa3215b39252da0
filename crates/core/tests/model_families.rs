//! The other real models, end to end: Moonshine tiny/base (converted here
//! from ONNX Runtime files) and multilingual Whisper base, on real speech —
//! English from LibriVox and the Moonshine wheel's own recording, French and
//! Spanish from Debian's Asterisk prompts (recorded by voice artists, with
//! the scripts they read). `npm test` installs all of them.

mod common;

use std::path::{Path, PathBuf};

use utter_core::text::{normalize_words, word_edit_distance};
use utter_engine::{Engine, EngineConfig, RunCost, RunParams, Timestamps};

fn model(name: &str) -> PathBuf {
    let store = common::store();
    let entry = store.find(name).unwrap().unwrap_or_else(|| {
        panic!("`{name}` is not installed: run `npm test` (it installs it) or `utter models install {name}`")
    });
    store.path_of(&entry)
}

fn engine(name: &str) -> Engine {
    Engine::start(EngineConfig::new(model(name))).unwrap()
}

fn wer(truth: &str, heard: &str) -> f64 {
    let (r, h) = (normalize_words(truth), normalize_words(heard));
    word_edit_distance(&r, &h) as f64 / r.len() as f64
}

fn run(engine: &Engine, pcm: Vec<f32>, params: RunParams) -> utter_engine::Utterance {
    engine.transcribe(vec![pcm], params).unwrap().remove(0)
}

/// WER of `name` over the five LibriVox clips.
fn librivox_wer(name: &str) -> f64 {
    let engine = engine(name);
    let (mut errors, mut words) = (0.0, 0usize);
    for (path, truth) in common::librivox_clips() {
        let u = run(&engine, common::load_pcm(&path), RunParams::default());
        let n = normalize_words(&truth).len();
        errors += wer(&truth, &u.text) * n as f64;
        words += n;
        eprintln!("{name} {}: {}", path.display(), u.text);
    }
    errors / words as f64
}

/// The recording Moonshine's own package tests itself with.
fn beckett_wav(dir: &Path) -> PathBuf {
    let wheel = utter_models::packaged::MOONSHINE_TINY_EN.wheels[0];
    let cached = wheel.cached_path(&utter_base::paths::cache_dir());
    utter_models::defaults::unpack_member(&cached, "moonshine_voice/assets/beckett.wav", dir)
        .expect("the moonshine-voice wheel is cached by `utter models install moonshine-tiny-en`")
}

#[test]
fn moonshine_tiny_reports_what_it_is_and_transcribes_its_own_test_recording() {
    let engine = engine("moonshine-tiny-en");
    let info = engine.info();
    assert_eq!(info.arch, "moonshine");
    assert_eq!(info.languages, vec!["en".to_string()]);
    assert_eq!(info.run_cost, RunCost::GrowsWithAudio, "no 30 s padding");
    assert_eq!(info.timestamps, Timestamps::None);
    assert!(info.max_audio_ms > 0, "Moonshine states its input limit");
    assert!(!info.translates && !info.detects_language && !info.takes_vocabulary);

    let dir = tempfile::tempdir().unwrap();
    let pcm = common::load_pcm(&beckett_wav(dir.path()));
    let u = run(&engine, pcm, RunParams::default());
    eprintln!("moonshine tiny: {}", u.text);
    let truth = "Ever tried, ever failed, no matter, try again, fail again, fail better.";
    assert!(wer(truth, &u.text) <= 0.1, "{}", u.text);
    assert!(!u.truncated);
}

#[test]
fn moonshine_base_transcribes_librivox() {
    let w = librivox_wer("moonshine-base-en");
    eprintln!("moonshine base LibriVox WER {:.1}%", w * 100.0);
    assert!(w <= 0.12, "WER {w}");
}

#[test]
fn whisper_base_is_as_good_as_tiny_en_on_librivox_or_better_within_2_points() {
    let base = librivox_wer("whisper-base");
    let tiny = librivox_wer("whisper-tiny.en");
    eprintln!(
        "LibriVox WER: whisper base {:.1}%, tiny.en {:.1}%",
        base * 100.0,
        tiny * 100.0
    );
    assert!(base <= tiny + 0.02, "base {base} vs tiny.en {tiny}");
}

/// Asterisk's prompts: (voice folder, prompt, the script it was read from).
const FRENCH_BUSY: (&str, &str, &str) = (
    "fr_CA_f_June",
    "demo-abouttotry",
    "Je vais maintenant tenter une connection Inter-Asterisk Exchange avec un serveur de \
     démonstration situé chez Digium. Pour que cela fonctionne vous devez être connecté à \
     Internet. Veuillez attendre pendant que je tente d'établir la connexion.",
);
const SPANISH_BUSY: (&str, &str, &str) = (
    "es_MX_f_Allison",
    "tt-allbusy",
    "Todos los representantes de la casa se encuentran ocupados asistiendo a otros \
     vendedores por telefono. Por favor espere y su llamada sera atendida en el orden que \
     fue recibida.",
);

/// A prompt as 16 kHz PCM (G.722 in the package, decoded by ffmpeg).
fn asterisk_prompt((voice, name, _): (&str, &str, &str)) -> Vec<f32> {
    let src = format!("/usr/share/asterisk/sounds/{voice}/{name}.g722");
    assert!(
        Path::new(&src).is_file(),
        "{src} is missing: apt install asterisk-core-sounds-fr-g722 asterisk-core-sounds-es-g722 (npm test does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("prompt.wav");
    let status = std::process::Command::new("ffmpeg")
        .args([
            "-v", "error", "-f", "g722", "-i", &src, "-ar", "16000", "-ac", "1",
        ])
        .arg(&wav)
        .status()
        .expect("ffmpeg is installed");
    assert!(status.success());
    common::load_pcm(&wav)
}

/// Accents and case aside (the scripts leave some accents out).
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'à' | 'â' | 'á' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'î' | 'ï' => 'i',
            'ó' | 'ô' => 'o',
            'ú' | 'ù' | 'û' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            c => c,
        })
        .collect::<String>()
        .to_lowercase()
}

#[test]
fn whisper_base_detects_french_and_transcribes_it() {
    let engine = engine("whisper-base");
    assert!(engine.info().detects_language && engine.info().translates);
    let u = run(&engine, asterisk_prompt(FRENCH_BUSY), RunParams::default());
    eprintln!("detected {:?}: {}", u.language, u.text);
    assert_eq!(u.language.as_deref(), Some("fr"));
    let w = wer(&plain(FRENCH_BUSY.2), &plain(&u.text));
    eprintln!("French WER {:.1}%", w * 100.0);
    assert!(w <= 0.35, "WER {w}: {}", u.text);
}

#[test]
fn whisper_base_honours_a_forced_language_and_translates_to_english() {
    let engine = engine("whisper-base");
    let pcm = asterisk_prompt(SPANISH_BUSY);
    let spanish = run(
        &engine,
        pcm.clone(),
        RunParams {
            language: Some("es".into()),
            ..Default::default()
        },
    );
    eprintln!("es: {}", spanish.text);
    let w = wer(&plain(SPANISH_BUSY.2), &plain(&spanish.text));
    assert!(w <= 0.35, "WER {w}: {}", spanish.text);

    let english = run(
        &engine,
        pcm,
        RunParams {
            language: Some("es".into()),
            translate: true,
            ..Default::default()
        },
    );
    eprintln!("translated: {}", english.text);
    let words = normalize_words(&english.text);
    let english_words = [
        "the", "all", "are", "please", "wait", "your", "call", "busy", "order",
    ];
    let found = english_words
        .iter()
        .filter(|w| words.iter().any(|x| x == *w))
        .count();
    assert!(found >= 4, "not English: {}", english.text);
    assert!(
        !words
            .iter()
            .any(|w| ["todos", "los", "por", "favor"].contains(&w.as_str())),
        "still Spanish: {}",
        english.text
    );
}

#[test]
fn english_only_models_refuse_another_language_by_name() {
    for name in ["whisper-tiny.en", "moonshine-tiny-en"] {
        let engine = engine(name);
        let err = engine.info().check_language(Some("fr")).unwrap_err();
        assert!(
            err.to_string().contains("does not support language `fr`"),
            "{err}"
        );
        assert!(engine.info().check_language(Some("en")).is_ok());
        assert!(!engine.info().translates, "{name}");
    }
}
