//! Per-app profiles: each terminal pastes with its own keys, both
//! selections given back; a profile's language applies to its app only.

use std::time::Duration;

use serde_json::Value;
use utter_core::text::word_error_rate;

use crate::harness::dictate::{Dictate, Take};
use crate::harness::speech::{asterisk_prompt, clip, truth};
use crate::harness::terminal::Terminal;
use crate::harness::x11::{desktop, Target};
use crate::harness::{serial, wait_until};

/// With no flag, each app gets the dictation the way it pastes: xterm
/// with Shift+Insert (which reads PRIMARY), lxterminal with Ctrl+Shift+V, a
/// GTK entry with Ctrl+V; the clipboard and PRIMARY are given back each time.
#[test]
fn terminals_paste_with_their_own_keys_with_no_flag_and_both_selections_are_restored() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let _clipboard = d.set_clipboard("previous clipboard ✓");
    let _primary = d.set_primary("previous selection ✓");
    let dictate = Dictate::start(d, tmp.path(), &["--output", "paste"]);
    let cases = [
        ("xterm", "X terminals (Shift+Insert)", "XTerm", 0),
        ("lxterminal", "Terminals (Ctrl+Shift+V)", "Lxterminal", 1),
        ("zenity", "", "Zenity", 2),
    ];
    for (program, profile, app, i) in cases {
        let title = format!("Dictate-{program}");
        let (received, delivered) = if program == "zenity" {
            let target = Target::open(d, &title);
            let delivered = Take::hotkey(d, &clip(i)).run(&dictate);
            (target.submit(d), delivered)
        } else {
            let terminal = Terminal::open(d, program, &title);
            let delivered = Take::hotkey(d, &clip(i)).run(&dictate);
            (terminal.submit(d), delivered)
        };
        // What the app received is exactly what Utter delivered...
        assert_eq!(
            received,
            delivered["text"].as_str().unwrap().trim(),
            "{program}"
        );
        let started = dictate.seen("recording_started").pop().unwrap();
        assert_eq!(started["app"], app, "{started}");
        match profile {
            "" => assert!(started["profile"].is_null(), "{started}"),
            p => assert_eq!(started["profile"], p, "{started}"),
        }
        // ...and it is the speech (short clips: one misheard word is 12 %).
        let wer = word_error_rate(&truth(i), &received);
        assert!(wer <= 0.3, "{program} received (WER {wer}): {received:?}");
        wait_until("the clipboard back", Duration::from_secs(5), || {
            d.clipboard() == "previous clipboard ✓"
        });
        assert_eq!(
            d.primary(),
            "previous selection ✓",
            "PRIMARY restored after {program}"
        );
    }
    dictate.stop();
}

/// A delivered text's words, lower case.
fn words(ev: &Value) -> Vec<String> {
    ev["text"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// A profile that dictates Spanish in xterm only: the same Spanish speech
/// is transcribed as Spanish there, and with the settings' language
/// (English) in another app.
#[test]
fn a_profile_language_applies_to_its_app_only() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let spanish = asterisk_prompt(d, "es_MX_f_Allison/tt-allbusy.g722", "spanish.wav");
    let profiles = tmp.path().join("profiles.json");
    std::fs::write(
        &profiles,
        r#"[{"name": "Spanish in xterm", "apps": ["xterm"], "language": "es"}]"#,
    )
    .unwrap();
    let dictate = Dictate::start(
        d,
        tmp.path(),
        &[
            "--output",
            "stdout",
            "--model",
            "whisper-base",
            "--language",
            "en",
            "--profile-file",
            profiles.to_str().unwrap(),
        ],
    );
    let spanish_words = ["todos", "los", "representantes", "por", "favor", "espere"];
    let count = |w: &[String]| {
        spanish_words
            .iter()
            .filter(|s| w.iter().any(|x| x == *s))
            .count()
    };

    let terminal = Terminal::open(d, "xterm", "Spanish-xterm");
    let in_xterm = words(&Take::hotkey(d, &spanish).run(&dictate));
    let started = dictate.seen("recording_started").pop().unwrap();
    assert_eq!(started["profile"], "Spanish in xterm");
    assert_eq!(started["language"], "es");
    drop(terminal);
    let target = Target::open(d, "English-zenity");
    let elsewhere = words(&Take::hotkey(d, &spanish).run(&dictate));
    let started = dictate.seen("recording_started").pop().unwrap();
    assert!(started["profile"].is_null());
    assert_eq!(started["language"], "en");
    drop(target);
    assert!(count(&in_xterm) >= 4, "Spanish in xterm: {in_xterm:?}");
    // Elsewhere the engine was told English (the event above). What Whisper
    // writes then for Spanish speech is its own: CI runs have seen an English
    // rendering, a mix, and the Spanish words almost all kept (CI, stop 66),
    // so the text elsewhere is only required to be there.
    assert!(
        !elsewhere.is_empty(),
        "the dictation elsewhere gave no text"
    );
    dictate.stop();
}

/// `--translate`: Spanish speech dictated, English pasted (Whisper's own
/// translation with whisper-base).
#[test]
fn spanish_speech_is_dictated_in_english_with_translate() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let spanish = asterisk_prompt(d, "es_MX_f_Allison/tt-allbusy.g722", "spanish.wav");
    let dictate = Dictate::start(
        d,
        tmp.path(),
        &[
            "--output",
            "stdout",
            "--model",
            "whisper-base",
            "--language",
            "es",
            "--translate",
        ],
    );
    let ev = Take::hotkey(d, &spanish).run(&dictate);
    let text = ev["text"].as_str().unwrap();
    eprintln!("translated: {text}");
    let words = words(&ev);
    // "All the representatives ... are busy ... please wait ... your call ... in the order ..."
    let english = [
        "the", "all", "are", "please", "wait", "your", "call", "busy", "order",
    ];
    let found = english
        .iter()
        .filter(|w| words.iter().any(|x| x == *w))
        .count();
    assert!(found >= 4, "not English: {text}");
    let spanish_words = ["todos", "los", "por", "favor", "espere"];
    assert!(
        !words.iter().any(|w| spanish_words.contains(&w.as_str())),
        "still Spanish: {text}"
    );
    dictate.stop();
}
