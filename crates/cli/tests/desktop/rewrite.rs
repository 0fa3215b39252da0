//! The AI step (issue 32): the rewrite of a dictation and a spoken command
//! on the selected text, against a loopback chat-completions server.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use utter_core::text::word_error_rate;

use crate::harness::dictate::{says, Dictate, Take};
use crate::harness::serial;
use crate::harness::speech::{clip, truth};
use crate::harness::x11::{desktop, Target};

/// The AI step (issue 32) in a real dictation: a loopback chat-completions
/// server (the external boundary) rewrites the words, the zenity entry gets
/// the model's text and the clipboard comes back; when the server fails,
/// the entry gets the words as dictated and the user is told why.
#[test]
fn with_the_rewrite_on_the_models_text_is_pasted_and_a_failing_model_costs_nothing() {
    use utter_test_support::chat;
    use utter_test_support::http::{Reply, Server};
    let _guard = serial();
    let d = desktop();
    let failing = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fail = failing.clone();
    let server = Server::start(move |path| match path {
        _ if fail.load(std::sync::atomic::Ordering::SeqCst) => chat::error(503, "model loading"),
        "/v1/chat/completions" => chat::streamed(
            &["Rewritten by the ", "loopback model."],
            Duration::from_millis(20),
        ),
        _ => Reply::status(404),
    });
    let tmp = tempfile::tempdir().unwrap();
    let url = server.url("/v1");
    let _owner = d.set_clipboard("previous clipboard ✓");
    let mut args = vec!["--output", "paste", "--rewrite", "clean-up"];
    args.extend(loopback_model(&url));
    let dictate = Dictate::start(d, tmp.path(), &args);

    let target = Target::open(d, "RewriteTarget");
    let delivered = Take::hotkey(d, &clip(0)).run(&dictate);
    assert_eq!(target.submit(d), "Rewritten by the loopback model.");
    let report = &delivered["rewrite"];
    assert_eq!(report["model"], chat::MODEL, "{delivered}");
    let dictated = report["dictated"].as_str().unwrap();
    let wer = word_error_rate(&truth(0), dictated);
    assert!(wer <= 0.15, "the dictated text is kept beside: {dictated}");
    assert_eq!(server.requests(), 1);
    let user = first_user_message(&server);
    assert!(user.contains(dictated), "the dictation is sent: {user}");
    assert_eq!(d.clipboard(), "previous clipboard ✓");

    failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let target = Target::open(d, "RewriteFallback");
    let delivered = Take::hotkey(d, &clip(1)).run(&dictate);
    let pasted = target.submit(d);
    assert_eq!(
        pasted, delivered["rewrite"]["dictated"],
        "delivered as dictated: {delivered}"
    );
    // (tiny.en hears "ill-disposed" as "old-sposed" in this clip, whatever the rewrite.)
    let wer = word_error_rate(&truth(1), &pasted);
    assert!(wer <= 0.3, "the speech: WER {wer}: {pasted}");
    assert_eq!(delivered["rewrite"]["notice"]["kind"], "server-error");
    let notice = dictate.seen("notice");
    assert!(
        notice
            .iter()
            .any(|n| says(n, &["Delivered as dictated", "503"])),
        "the user is told why: {notice:?}"
    );
    assert_eq!(d.clipboard(), "previous clipboard ✓");
    dictate.stop();
}

/// AI command mode (issue 32): text selected in a zenity entry, the command
/// key held while a real recorded instruction plays into the microphone
/// ("go forward ten meters", from Debian's pocketsphinx-testdata), and the
/// loopback model's answer replaces the selection; the clipboard comes back.
#[test]
fn a_spoken_command_replaces_the_selected_text_with_the_models_answer() {
    use utter_test_support::chat;
    use utter_test_support::http::{Reply, Server};
    let _guard = serial();
    let d = desktop();
    let server = Server::start(|path| match path {
        "/v1/chat/completions" => chat::streamed(
            &["Replaced by the ", "loopback model."],
            Duration::from_millis(20),
        ),
        _ => Reply::status(404),
    });
    let tmp = tempfile::tempdir().unwrap();
    let instruction = tmp.path().join("goforward.wav");
    let converted = Command::new("sox")
        .args([
            "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1",
        ])
        .arg("/usr/share/pocketsphinx/test/data/goforward.raw")
        .arg(&instruction)
        .status()
        .expect("sox is installed");
    assert!(converted.success());
    let url = server.url("/v1");
    let _owner = d.set_clipboard("previous clipboard ✓");
    let mut args = vec!["--output", "paste", "--command-key", COMMAND_KEY];
    args.extend(loopback_model(&url));
    let dictate = Dictate::start(d, tmp.path(), &args);
    let target = Target::open_with_text(d, "CommandTarget", "the report is late");
    d.xdotool(&["key", "ctrl+a"]); // select it all (GTK takes PRIMARY)
    let delivered = Take::keys(
        d,
        &instruction,
        || d.xdotool(&["keydown", COMMAND_KEY]),
        || d.xdotool(&["keyup", COMMAND_KEY]),
    )
    .run(&dictate);
    assert_eq!(target.submit(d), "Replaced by the loopback model.");
    let started = dictate.seen("recording_started");
    assert_eq!(
        started.last().unwrap()["command"]["selection_chars"],
        18,
        "{started:?}"
    );
    assert_eq!(delivered["rewrite"]["mode"], "command", "{delivered}");
    assert_eq!(delivered["rewrite"]["selection"], "the report is late");
    let said = delivered["rewrite"]["dictated"]
        .as_str()
        .unwrap()
        .to_lowercase();
    assert!(said.contains("forward"), "the instruction as heard: {said}");
    let sent = first_user_message(&server);
    assert!(
        sent.contains("the report is late") && sent.to_lowercase().contains("forward"),
        "selection and instruction are sent: {sent}"
    );
    assert_eq!(d.clipboard(), "previous clipboard ✓");
    dictate.stop();
}

const COMMAND_KEY: &str = "ctrl+shift+e";

/// `utter dictate`'s flags for the loopback chat server at `url` (a local
/// llama.cpp server, as far as Utter can tell).
fn loopback_model(url: &str) -> [&str; 6] {
    [
        "--rewrite-provider",
        "llama-cpp",
        "--rewrite-url",
        url,
        "--rewrite-model",
        "loopback-model",
    ]
}

/// The user message of the first request the loopback chat server got.
fn first_user_message(server: &utter_test_support::http::Server) -> String {
    let request: Value = serde_json::from_str(&server.received()[0].body_text()).unwrap();
    request["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string()
}
