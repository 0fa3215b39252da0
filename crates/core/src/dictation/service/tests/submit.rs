//! Auto-submit: the key pressed after the text, only once the text is in
//! the app; the spoken "send" at the end of a dictation; and edit commands
//! ("scratch that", "press tab").

use super::*;

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
    let notices = r.notices();
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
/// user would say ending with "Send.", and the user says it.
fn say_send(r: &mut Rig) {
    r.hears_as("one two", "See you at six. Send.");
    r.say_two_words(TriggerKey::Main);
}

#[test]
fn a_spoken_send_at_the_end_is_taken_off_and_presses_enter() {
    let mut r = rig(Options {
        spoken_submit: vec!["send".into()],
        ..Options::default()
    });
    say_send(&mut r);
    assert_eq!(r.delivered(), ["See you at six."]);
    assert_eq!(submits(&r), [Submit::Enter]);
}

#[test]
fn with_the_spoken_send_off_the_word_stays_text() {
    let mut r = rig(Options::default());
    say_send(&mut r);
    assert_eq!(r.delivered(), ["See you at six. Send."]);
    assert!(submits(&r).is_empty());
}

fn edits(r: &Rig) -> Vec<(EditKey, usize)> {
    r.edits.lock().unwrap().clone()
}

#[test]
fn scratch_that_takes_the_last_text_back_out_once() {
    let mut r = rig(Options::default());
    r.service.config.output.trailing_space = true;
    speak(&mut r, 600);
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
    r.hears_as("one", "Scratch that.");
    speak(&mut r, 600);
    r.settle();
    assert_eq!(r.delivered(), ["one"], "nothing typed for the command");
    assert_eq!(
        edits(&r),
        [(EditKey::Backspace, 4)],
        "the word and its space"
    );
    // Again: nothing left to take back, and the user is told.
    speak(&mut r, 600);
    r.settle();
    assert_eq!(edits(&r), [(EditKey::Backspace, 4)]);
    assert!(
        r.notices()
            .iter()
            .any(|n| n.contains("no text to take back")),
        "{:?}",
        r.notices()
    );
}

#[test]
fn a_text_on_the_clipboard_or_sent_is_not_scratched() {
    let mut r = rig(Options {
        submit: Some(Submit::Enter),
        ..Options::default()
    });
    speak(&mut r, 600);
    r.settle();
    r.hears_as("one", "scratch that");
    speak(&mut r, 600);
    r.settle();
    assert!(edits(&r).is_empty(), "a sent message stays sent");
}

#[test]
fn press_tab_said_alone_presses_it() {
    let mut r = rig(Options::default());
    r.hears_as("one", "Press tab.");
    speak(&mut r, 600);
    r.settle();
    assert!(r.delivered().is_empty());
    assert_eq!(edits(&r), [(EditKey::Tab, 1)]);
    let edit = r
        .events
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .find(|v| v["event"] == "text_delivered")
        .unwrap();
    assert_eq!(edit["edit"], "press tab");
    assert_eq!(edit["raw_text"], "Press tab.");
}

#[test]
fn with_edit_commands_off_the_words_are_typed() {
    let mut r = rig(Options::default());
    r.service.config.edit_commands = false;
    r.hears_as("one", "Press tab.");
    speak(&mut r, 600);
    r.settle();
    assert_eq!(r.delivered(), ["Press tab."]);
    assert!(edits(&r).is_empty());
}
