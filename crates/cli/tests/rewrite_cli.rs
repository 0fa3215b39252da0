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

/// `utter doctor` with the app's settings (a private config folder): the
/// rewrite line says whether the configured server answers, and how fast.
fn doctor_rewrite_line(rewrite: serde_json::Value) -> String {
    let config = tempfile::tempdir().unwrap();
    let dir = config.path().join("utter");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = serde_json::json!({ "version": 2, "rewrite": rewrite });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .arg("doctor")
        .env("UTTER_CONFIG_DIR", &dir)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    let line = report
        .lines()
        .find(|l| l.contains(" rewrite "))
        .unwrap_or_else(|| panic!("no rewrite line in:\n{report}"))
        .to_string();
    // Nothing was changed: a settings file doctor cannot use stays where it is.
    assert!(dir.join("settings.json").exists());
    line
}

#[test]
fn doctor_says_whether_the_configured_model_answers_and_how_fast() {
    let server = Server::start(|path| match path {
        "/v1/chat/completions" => chat::streamed(&["This is a quick test."], Duration::ZERO),
        _ => Reply::status(404),
    });
    let provider = serde_json::json!({
        "kind": "llama-cpp", "baseUrl": server.url("/v1"), "model": "tiny", "timeBudgetMs": 5000
    });
    let line = doctor_rewrite_line(serde_json::json!({"enabled": true, "provider": provider}));
    assert!(
        line.starts_with("ok  rewrite")
            && line.contains("clean-up mode, llama.cpp server `tiny`")
            && line.contains("answered in"),
        "{line}"
    );

    let off = doctor_rewrite_line(serde_json::json!({"enabled": false}));
    assert!(off.starts_with("ok  rewrite     off"), "{off}");

    let broken = Server::start(|_| chat::error(500, "model crashed"));
    let provider = serde_json::json!({
        "kind": "llama-cpp", "baseUrl": broken.url("/v1"), "model": "tiny", "timeBudgetMs": 5000
    });
    let line = doctor_rewrite_line(serde_json::json!({"enabled": true, "provider": provider}));
    assert!(
        line.starts_with("no  rewrite") && line.contains("error 500: model crashed"),
        "{line}"
    );
}
