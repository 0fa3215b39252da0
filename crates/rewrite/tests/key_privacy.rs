//! The API key appears in no log: every log line of a run (this crate's
//! `tracing` events and the HTTP stack's `log` records, at every level) is
//! captured, through requests that succeed, fail, quote the key back, and
//! get redirected. Its own test binary: the capture is process-wide.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, good_answer, server, SAID};
use utter_rewrite::{ApiKey, Notice, Outcome, ProviderKind, Rewriter};
use utter_test_support::chat;
use utter_test_support::http::Reply;

const KEY: &str = "sk-privacy-7f3a9c1e5b";

/// Log lines land here.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_key_is_in_no_log_line_whatever_the_server_does() {
    let captured = Captured::default();
    let writer = captured.clone();
    // Also installs the bridge for `log` records (reqwest, hyper).
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .try_init()
        .expect("the only subscriber of this test binary");

    let key = ApiKey::new(KEY).unwrap();
    let r = Rewriter::new().unwrap();
    tracing::debug!(?key, "a key, formatted for debugging");

    let ok = server(good_answer);
    let outcome = r.rewrite(
        &config(&ok, ProviderKind::Groq, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    );
    assert!(matches!(outcome, Outcome::Rewritten { .. }), "{outcome:?}");
    r.models(
        &config(&ok, ProviderKind::Groq, 5_000).provider,
        Some(&key),
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(
        ok.received()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str()),
        "the key did reach the server it was meant for"
    );

    // A server that quotes the key back in its error message.
    let quoting = server(|| chat::error(401, &format!("Incorrect API key provided: {KEY}")));
    let outcome = r.rewrite(
        &config(&quoting, ProviderKind::Anthropic, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    );
    let notice = outcome.notice().expect("kept").to_string();
    assert_eq!(
        notice,
        "The server refused the API key (error 401): Incorrect API key provided: <redacted>."
    );
    let listed = r.models(
        &config(&quoting, ProviderKind::Anthropic, 5_000).provider,
        Some(&key),
        Duration::from_secs(2),
    );
    assert!(!format!("{listed:?}").contains(KEY));

    // A stream that fails with the key in it, a redirect, a dropped connection.
    let streamed_error = server(|| {
        let mut events = chat::events(&["Send "]);
        events.insert(2, format!("data: {{\"error\":\"bad key {KEY}\"}}\n\n"));
        Reply::stream(events, Duration::ZERO)
    });
    let outcome = r.rewrite(
        &config(&streamed_error, ProviderKind::Custom, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    );
    assert_eq!(
        outcome.notice(),
        Some(&Notice::StreamError {
            message: "bad key <redacted>".into()
        })
    );
    let redirect = server(|| Reply::status(302).header("Location", "http://127.0.0.1:9/v1"));
    r.rewrite(
        &config(&redirect, ProviderKind::OpenAi, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    );
    let dropped = server(|| good_answer().close_halfway());
    r.rewrite(
        &config(&dropped, ProviderKind::OpenAi, 5_000),
        Some(&key),
        "clean-up",
        SAID,
        &[],
    );

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("rewritten"), "the capture works: {logs}");
    assert!(logs.contains("kept the text as said"), "{logs}");
    assert!(logs.contains("ApiKey(<redacted>)"), "{logs}");
    assert!(logs.lines().count() > 10, "{logs}");
    assert!(
        !logs.contains(KEY),
        "the key leaked into a log line:\n{logs}"
    );
    assert!(
        !logs.contains("7f3a9c1e5b"),
        "part of the key leaked:\n{logs}"
    );
}
