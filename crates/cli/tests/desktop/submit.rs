//! Auto-submit (`--submit`) into a real window: a zenity entry, which
//! closes and prints its text when Return is pressed in it — one
//! submission, the whole text. Nothing is sent when the text went to the
//! clipboard only.

use std::time::Duration;

use utter_core::text::word_error_rate;

use crate::harness::dictate::{Dictate, Take};
use crate::harness::serial;
use crate::harness::speech::{clip, truth};
use crate::harness::x11::{desktop, Target};

#[test]
fn enter_is_pressed_once_after_the_pasted_text_and_sends_it_whole() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let mut target = Target::open(d, "SubmitTarget");
    let dictate = Dictate::start(d, tmp.path(), &["--output", "paste", "--submit", "enter"]);
    let ev = Take::hotkey(d, &clip(3)).run(&dictate);
    assert_eq!(ev["delivered"], "pasted", "{ev}");
    assert_eq!(ev["submitted"], "enter", "{ev}");
    // No Return from the test: the dialog was sent by Utter's Enter.
    let sent = target
        .sent_within(Duration::from_secs(10))
        .expect("the entry was sent (zenity closed on Return)");
    assert_eq!(sent, ev["text"].as_str().unwrap());
    assert!(word_error_rate(&truth(3), &sent) <= 0.15, "{sent}");
    dictate.stop();
}

#[test]
fn a_text_left_on_the_clipboard_is_not_sent() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let mut target = Target::open(d, "NoSubmitTarget");
    let dictate = Dictate::start(
        d,
        tmp.path(),
        &["--output", "clipboard", "--submit", "enter"],
    );
    let ev = Take::hotkey(d, &clip(4)).run(&dictate);
    assert!(ev["submitted"].is_null(), "{ev}");
    let notice = dictate
        .seen("notice")
        .into_iter()
        .any(|n| n["message"].as_str().unwrap().contains("on the clipboard"));
    assert!(notice, "the user is told why: {:?}", dictate.seen("notice"));
    assert_eq!(target.sent_within(Duration::from_millis(1500)), None);
    assert_eq!(target.submit(d), "", "nothing was typed or pasted into it");
    dictate.stop();
}
