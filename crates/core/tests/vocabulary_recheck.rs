//! Issue 40, the confidence-aware vocabulary: a listed word the engine
//! heard as an ordinary one ("clubs" as "close") is fixed where the engine
//! was unsure of it, and an ordinary word it heard clearly stays, in a
//! dictation and in a file. Real engine (whisper tiny.en, the default
//! model), real speech: pocketsphinx's card recording and an Asterisk prompt.

mod common;
#[path = "support/live.rs"]
mod live;

use std::path::{Path, PathBuf};
use std::time::Duration;

use utter_core::dictation::events::DictationEvent;
use utter_core::transcribe::{transcribe_file, FileOptions, Segmentation};
use utter_engine::vad::SpeechDetector;
use utter_engine::Engine;
use utter_postprocess::TextRules;

/// "eight of spades four of clubs seven of hearts": whisper tiny.en writes
/// "four of close".
const CARDS: &str = "/usr/share/pocketsphinx/test/data/cards/005.wav";

/// "close parenthesis", said clearly (Asterisk's voice artist).
fn close_parenthesis(dir: &Path) -> PathBuf {
    let wav = dir.join("ascii41.wav");
    utter_test_support::call::asterisk_prompt("en_US_f_Allison/letters/ascii41.g722", &wav);
    wav
}

fn words(text: &str) -> Vec<String> {
    utter_core::text::normalize_words(text)
}

/// A dictation of `pcm` (played at twice real time, the key released after
/// it, 300 ms of silence around it) with `vocabulary` as the user's words:
/// its text, and how long after the release it came (a recheck is one more
/// decode).
fn dictate(
    engine: &Engine,
    vad: &mut SpeechDetector,
    pcm: &[f32],
    vocabulary: &[&str],
) -> (String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let vocabulary: Vec<String> = vocabulary.iter().map(|s| s.to_string()).collect();
    let mut d = live::start(engine, vad, dir.path(), &vocabulary);
    let mut errors = Vec::new();
    let mut emit = |e: DictationEvent| {
        if let DictationEvent::Error { message } = e {
            errors.push(message);
        }
    };
    let padded = [vec![0.0; 4_800], pcm.to_vec(), vec![0.0; 4_800]].concat();
    let waited = live::play_and_release(&mut d, engine, vad, &padded, 2.0, &mut emit);
    assert!(errors.is_empty(), "{errors:?}");
    (d.text(), waited)
}

fn transcribe(
    engine: &Engine,
    vad: &mut SpeechDetector,
    wav: &Path,
    vocabulary: &[&str],
) -> String {
    let vocabulary: Vec<String> = vocabulary.iter().map(|s| s.to_string()).collect();
    let options = FileOptions {
        language: Some("en".into()),
        rules: TextRules::default().with_vocabulary(&vocabulary),
        vocabulary,
        ..FileOptions::default()
    };
    let t = transcribe_file(
        std::slice::from_ref(engine),
        Segmentation::Vad(vad),
        wav,
        "whisper-tiny.en",
        &options,
        |_| {},
    )
    .unwrap();
    // The rules' text: what the user gets.
    t.text()
}

#[test]
fn a_listed_word_heard_as_a_common_word_is_fixed_where_the_engine_doubted_it() {
    let (engine, mut vad) = live::models();
    let cards = common::load_pcm(Path::new(CARDS));

    // Without the vocabulary the engine writes an ordinary word for "clubs"
    // (else this test would prove nothing).
    let (heard, plain) = dictate(&engine, &mut vad, &cards, &[]);
    assert!(!words(&heard).contains(&"clubs".to_string()), "{heard}");

    let (fixed, rechecked) = dictate(&engine, &mut vad, &cards, &["clubs"]);
    println!(
        "release → text: {} ms as heard, {} ms with the recheck",
        plain.as_millis(),
        rechecked.as_millis()
    );
    let w = words(&fixed);
    assert!(w.contains(&"clubs".to_string()), "dictation: {fixed}");
    assert!(
        w.contains(&"spades".to_string()) && w.contains(&"hearts".to_string()),
        "{fixed}"
    );

    let fixed = transcribe(&engine, &mut vad, Path::new(CARDS), &["clubs"]);
    assert!(
        words(&fixed).contains(&"clubs".to_string()),
        "file: {fixed}"
    );
}

#[test]
fn a_common_word_the_engine_heard_clearly_is_not_replaced() {
    let (engine, mut vad) = live::models();
    let dir = tempfile::tempdir().unwrap();
    let wav = close_parenthesis(dir.path());
    let pcm = common::load_pcm(&wav);
    // "Close" is a doubt for "clubs"; the engine, asked again with "clubs"
    // in its prompt, still hears an ordinary word.
    for text in [
        dictate(&engine, &mut vad, &pcm, &["clubs"]).0,
        transcribe(&engine, &mut vad, &wav, &["clubs"]),
    ] {
        let w = words(&text);
        assert!(!w.contains(&"clubs".to_string()), "{text}");
        assert!(w.iter().any(|w| w.starts_with("parenthes")), "{text}");
    }
}
