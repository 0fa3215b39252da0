//! A live dictation driven the way the service drives one, for the core
//! tests that need the real engine on real speech: started with the plan
//! the service makes, fed as a microphone would, the key released, the text
//! waited for. Included by `coverage.rs` and `vocabulary_recheck.rs`.

use std::path::Path;
use std::time::{Duration, Instant};

use utter_core::dictation::events::DictationEvent;
use utter_core::dictation::plan::{plan, PlanDefaults};
use utter_core::dictation::recording::{Dictation, DictationConfig};
use utter_core::dictation::strategy::LiveStrategy;
use utter_engine::vad::SpeechDetector;
use utter_engine::{Engine, EngineConfig};
use utter_ports::output::OutputConfig;
use utter_postprocess::TextRules;

use super::common;

const RATE: usize = 16_000;

/// The default model and the voice detector.
pub fn models() -> (Engine, SpeechDetector) {
    let engine = Engine::start(EngineConfig::new(common::speech_model())).unwrap();
    let vad = SpeechDetector::load(&common::vad_model()).unwrap();
    (engine, vad)
}

/// A dictation recorded in `dir`, with the default settings but for
/// `vocabulary` (in its runs and its text rules), its strategy the model's.
pub fn start(
    engine: &Engine,
    vad: &mut SpeechDetector,
    dir: &Path,
    vocabulary: &[String],
) -> Dictation {
    let dictation = DictationConfig {
        vocabulary: vocabulary.to_vec(),
        ..DictationConfig::defaults()
    };
    let rules = TextRules::default().with_vocabulary(vocabulary);
    let defaults = PlanDefaults {
        dictation: &dictation,
        text_rules: &rules,
        output: &OutputConfig::default(),
        rewrite_mode: None,
    };
    Dictation::start(
        1,
        &dir.join("d.wav"),
        None,
        plan(&defaults, None, engine.info()),
        LiveStrategy::resolve(None, engine.info()).unwrap(),
        vad,
        engine,
    )
}

/// Plays `pcm` into `d` as a microphone would (10 ms chunks, `speed` times
/// real time: the eager runs overlap the speech as they do live), then
/// releases the key and waits for the text (a minute at most); returns how
/// long after the release it was ready.
pub fn play_and_release(
    d: &mut Dictation,
    engine: &Engine,
    vad: &mut SpeechDetector,
    pcm: &[f32],
    speed: f64,
    emit: &mut dyn FnMut(DictationEvent),
) -> Duration {
    let start = Instant::now();
    for (i, chunk) in pcm.chunks(RATE / 100).enumerate() {
        let due = Duration::from_secs_f64(i as f64 * 0.01 / speed);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        d.push_audio(chunk, vad, engine, emit);
        d.poll(engine, emit);
    }
    let released = Instant::now();
    d.finish_audio(vad, engine, emit);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !d.poll(engine, emit) {
        assert!(Instant::now() < deadline, "the dictation never finished");
        std::thread::sleep(Duration::from_millis(5));
    }
    released.elapsed()
}
