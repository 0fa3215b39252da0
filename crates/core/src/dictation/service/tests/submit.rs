//! Auto-submit: the key pressed after the text, only once the text is in
//! the app; and the spoken "send" at the end of a dictation.

use super::*;
use utter_postprocess::{Replacement, TextRulesConfig};

fn submits(r: &Rig) -> Vec<Submit> {
    r.submits.lock().unwrap().clone()
}

fn submitted(r: &Rig) -> Vec<serde_json::Value> {
    r.events
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["event"] == "text_delivered")
        .map(|v| v["submitted"].clone())
        .collect()
}

#[test]
fn the_submit_key_is_pressed_once_after_a_pasted_text() {
    let mut r = rig(Options {
        submit: Some(Submit::CtrlEnter),
        ..Options::default()
    });
    speak(&mut r, 600);
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
    assert_eq!(submits(&r), [Submit::CtrlEnter]);
    assert_eq!(submitted(&r), [serde_json::json!("ctrl_enter")]);
    // Pasting the last text again does not send it again.
    r.key(TriggerKey::PasteLast, true);
    assert_eq!(r.delivered(), ["one", "one"]);
    assert_eq!(submits(&r), [Submit::CtrlEnter]);
}

#[test]
fn a_text_left_on_the_clipboard_is_never_sent() {
    let mut r = rig(Options {
        submit: Some(Submit::Enter),
        ..Options::default()
    });
    r.service.config.output.method = OutputMethod::Clipboard;
    speak(&mut r, 600);
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
    assert!(submits(&r).is_empty());
    let notices: Vec<String> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            DictationEvent::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert!(
        notices.iter().any(|n| n.contains("on the clipboard")),
        "{notices:?}"
    );
}

#[test]
fn no_submit_key_and_no_spoken_send_press_nothing() {
    let mut r = rig(Options::default());
    speak(&mut r, 600);
    r.settle();
    assert!(submits(&r).is_empty());
    assert_eq!(submitted(&r), [serde_json::Value::Null]);
}

/// The fake engine hears "one two"; a replacement makes it the sentence a
/// user would say ending with "Send."
fn says_send(r: &mut Rig) {
    r.service.config.text_rules = TextRules::new(&TextRulesConfig {
        replacements: vec![Replacement {
            heard: "one two".into(),
            written: "See you at six. Send.".into(),
            regex: false,
        }],
        ..TextRulesConfig::default()
    })
    .unwrap();
}

#[test]
fn a_spoken_send_at_the_end_is_taken_off_and_presses_enter() {
    let mut r = rig(Options {
        spoken_submit: vec!["send".into()],
        ..Options::default()
    });
    says_send(&mut r);
    r.key(TriggerKey::Main, true);
    r.hear(tone(400));
    r.hear(silence(400));
    r.hear(tone(400));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), ["See you at six."]);
    assert_eq!(submits(&r), [Submit::Enter]);
}

#[test]
fn with_the_spoken_send_off_the_word_stays_text() {
    let mut r = rig(Options::default());
    says_send(&mut r);
    r.key(TriggerKey::Main, true);
    r.hear(tone(400));
    r.hear(silence(400));
    r.hear(tone(400));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), ["See you at six. Send."]);
    assert!(submits(&r).is_empty());
}
