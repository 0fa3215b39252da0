//! `utter rewrite` against a chat-completions server on a loopback socket
//! (the external boundary): the rewrite comes out; a server that fails
//! gives back the text as it came in, exit status 3 and the reason.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use utter_test_support::chat;
use utter_test_support::http::{Reply, Server};

const SAID: &str = "um so send the the report to ana by friday";

fn rewrite(server: &Server, extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args([
            "rewrite",
            "--provider",
            "llama-cpp",
            "--model",
            "tiny",
            "--base-url",
        ])
        .arg(server.url("/v1"))
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(SAID.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_rewrite_comes_out_in_the_mode_asked_for() {
    let server = Server::start(|path| match path {
        "/v1/chat/completions" => chat::streamed(
            &["Send the report ", "to Ana by Friday."],
            Duration::from_millis(10),
        ),
        _ => Reply::status(404),
    });
    let out = rewrite(&server, &["--mode", "formal", "--word", "Ana"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Send the report to Ana by Friday.\n"
    );
    let body: serde_json::Value = serde_json::from_slice(&server.received()[0].body).unwrap();
    let sent = body.to_string();
    assert!(sent.contains(SAID) && sent.contains("Ana"), "{sent}");
    assert_eq!(body["model"], "tiny");
}

#[test]
fn a_failing_server_gives_the_text_back_as_said_with_the_reason() {
    let server = Server::start(|_| chat::error(500, "the model crashed"));
    let out = rewrite(&server, &[]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{SAID}\n"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("kept as given") && stderr.contains("500"),
        "{stderr}"
    );
}

#[test]
fn a_slow_server_past_the_budget_gives_the_text_back_in_time() {
    let server = Server::start(|_| {
        chat::streamed(&["Send ", "the ", "report."], Duration::from_millis(800))
    });
    let started = std::time::Instant::now();
    let out = rewrite(&server, &["--budget-ms", "500"]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{SAID}\n"));
}
