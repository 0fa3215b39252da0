//! `utter serve` and `utter mcp` driven by the official clients (issue 43):
//! the `openai` Python SDK, the `wyoming` package's AsyncTcpClient and the
//! `mcp` package's stdio client, against the real binary, the installed
//! models and real LibriVox speech. The client sides are tests/api/*.py;
//! their wheels come from scripts/api-clients.sh (cached under ~/.cache/utter).
//! Safety checks (keys, limits, slow and vanishing clients, many
//! connections) use plain sockets, as an attacker would.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::server::{key_file, multipart, parse_response, Server};
use utter_core::text::{normalize_words, word_edit_distance};

const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav";

fn error_shape(body: &str) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    let err = &v["error"];
    for key in ["message", "type", "param", "code"] {
        assert!(err.get(key).is_some(), "error without `{key}`: {body}");
    }
    assert!(!err["message"].as_str().unwrap().is_empty(), "{body}");
    err.clone()
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The venv's python with the pinned clients (installed once, cached).
fn client_python() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/api-clients.sh");
    let out = Command::new("bash").arg(script).output().unwrap();
    assert!(
        out.status.success(),
        "scripts/api-clients.sh failed (the openai, mcp and wyoming wheels): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn wer(reference: &str, hypothesis: &str) -> f64 {
    let r = normalize_words(reference);
    word_edit_distance(&r, &normalize_words(hypothesis)) as f64 / r.len() as f64
}

fn uploads_left(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("utter-upload-"))
        .collect()
}

#[test]
fn the_openai_python_sdk_transcribes_translates_and_gets_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let server_tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    // A browser's upload: WebM/Opus, as MediaRecorder makes it.
    run(Command::new("ffmpeg").args([
        "-v",
        "error",
        "-y",
        "-i",
        CLIP,
        "-c:a",
        "libopus",
        &p("speech.webm"),
    ]));
    run(Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "g722", "-i"])
        .arg("/usr/share/asterisk/sounds/es_MX_f_Allison/tt-allbusy.g722")
        .args(["-ar", "16000", "-ac", "1", &p("spanish.wav")]));
    std::fs::write(p("notes.wav"), "These are meeting notes, not audio.\n").unwrap();

    let server = Server::start(&[], &[], server_tmp.path());
    let base_url = format!("http://{}/v1", server.addr);
    let result = python_client(
        "openai_client.py",
        &[
            &base_url,
            CLIP,
            &p("speech.webm"),
            &p("spanish.wav"),
            &p("notes.wav"),
        ],
        || server.log(),
    );

    // One call from the official `openai` npm package (installed beside the venv).
    let npm_openai = PathBuf::from(std::env::var("HOME").unwrap())
        .join(".cache/utter/api-npm/node_modules/openai");
    let out = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/api/openai_npm.mjs"))
        .arg(&npm_openai)
        .args([&base_url, CLIP])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let npm: serde_json::Value = serde_json::from_str(
        said.lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        npm["text"], result["json"],
        "the npm client gets the Python client's text"
    );

    // The same clip through `utter transcribe`: the server is no worse.
    let cli = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["transcribe", CLIP])
        .output()
        .unwrap();
    assert!(cli.status.success());
    let cli_text = String::from_utf8_lossy(&cli.stdout);
    let reference = &common::librivox_clips()[0].1;
    let (server_wer, cli_wer) = (
        wer(reference, result["json"].as_str().unwrap()),
        wer(reference, &cli_text),
    );
    let webm_wer = wer(reference, result["webm"].as_str().unwrap());
    eprintln!(
        "WER: server {server_wer:.3}, utter transcribe {cli_wer:.3}, WebM/Opus {webm_wer:.3}"
    );
    assert!(
        server_wer <= cli_wer + 0.05 && server_wer < 0.25,
        "{server_wer} vs {cli_wer}"
    );
    assert!(webm_wer < 0.25, "{webm_wer}");

    // Nothing left behind in the server's temporary folder.
    assert_eq!(uploads_left(server_tmp.path()), Vec::<String>::new());
}

#[test]
fn limits_keys_slow_clients_and_many_connections() {
    let tmp = tempfile::tempdir().unwrap();
    // No key on a non-loopback address: refuses to start.
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .env_remove("UTTER_API_KEY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("without an API key") && err.contains("--api-key-file"),
        "{err}"
    );

    // A key file others can read is refused (issue 57): this one is private.
    let key_file = key_file(tmp.path(), "s3cret-key-0123456789", 0o600);
    let server = Server::start(
        &[
            "--host",
            "0.0.0.0",
            "--api-key-file",
            key_file.to_str().unwrap(),
            "--max-upload-mb",
            "1",
            "--read-timeout-s",
            "2",
        ],
        &[],
        tmp.path(),
    );
    let (status, body) = server
        .request(
            "GET",
            "/v1/models",
            &[("Authorization", "Bearer wrong")],
            b"",
        )
        .unwrap();
    assert_eq!(status, 401, "{body}");
    assert_eq!(error_shape(&body)["code"], "invalid_api_key");
    let (status, _) = server.request("GET", "/v1/models", &[], b"").unwrap();
    assert_eq!(status, 401);
    let key = [("Authorization", "Bearer s3cret-key-0123456789")];
    let (status, body) = server.request("GET", "/v1/models", &key, b"").unwrap();
    assert_eq!(status, 200, "{body}");

    // Over the upload limit: 413, told in the error shape.
    let (ctype, big) = multipart("big.wav", &vec![0u8; 1_500_000], &[("model", "whisper-1")]);
    let headers = [key[0], ("Content-Type", ctype.as_str())];
    let (status, body) = server
        .request("POST", "/v1/audio/transcriptions", &headers, &big)
        .unwrap();
    assert_eq!(status, 413, "{body}");
    assert_eq!(error_shape(&body)["code"], "file_too_large");

    // Headers one byte a second: the connection is closed after the read timeout.
    let started = Instant::now();
    let mut slow = TcpStream::connect(server.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut closed = false;
    for b in b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\n".iter() {
        if slow.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 256];
        if let Ok(0) = slow.read(&mut buf) {
            closed = true;
            break;
        }
    }
    assert!(closed, "a slow client kept its connection");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // 200 connections at once, all answered.
    let streams: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    for mut s in streams {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        assert_eq!(parse_response(&out).0, 200);
    }

    // Still answering.
    let (status, _) = server.request("GET", "/v1/models", &key, b"").unwrap();
    assert_eq!(status, 200);
}

#[test]
fn a_client_that_disconnects_cancels_its_job() {
    let tmp = tempfile::tempdir().unwrap();
    // About 100 s of speech: a job that takes a while on two cores.
    let long = tmp.path().join("long.wav");
    let mut sox = Command::new("sox");
    for _ in 0..4 {
        sox.args(common::librivox_clips().iter().map(|(wav, _)| wav.clone()));
    }
    run(sox.arg(&long));
    let server_tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&["--workers", "1"], &[], server_tmp.path());
    let (ctype, body) = multipart(
        "long.wav",
        &std::fs::read(&long).unwrap(),
        &[("model", "whisper-tiny.en")],
    );
    {
        let mut s = TcpStream::connect(server.addr).unwrap();
        let head = format!(
            "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: localhost\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&body).unwrap();
        std::thread::sleep(Duration::from_secs(2)); // the job is running
    } // the client goes away
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.log().contains("cancelling its transcription") {
        assert!(
            Instant::now() < deadline,
            "the job was not cancelled: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The engine is free at once: a short clip is answered.
    let (ctype, short) = multipart(
        "a.wav",
        &std::fs::read(CLIP).unwrap(),
        &[("model", "whisper-tiny.en")],
    );
    let (status, body) = server
        .request(
            "POST",
            "/v1/audio/transcriptions",
            &[("Content-Type", ctype.as_str())],
            &short,
        )
        .unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.to_lowercase().contains("dashwood"), "{body}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(uploads_left(server_tmp.path()), Vec::<String>::new());
}

/// Runs one of tests/api/*.py; returns its RESULT line's JSON.
fn python_client(
    script: &str,
    args: &[&str],
    server_log: impl Fn() -> String,
) -> serde_json::Value {
    let out = Command::new(client_python())
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/api")
                .join(script),
        )
        .args(args)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        server_log()
    );
    eprintln!("{said}");
    serde_json::from_str(
        said.lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .expect("a RESULT line"),
    )
    .unwrap()
}

#[test]
fn the_wyoming_client_describes_and_transcribes() {
    let server_tmp = tempfile::tempdir().unwrap();
    let server = Server::start(
        &["--wyoming", "--wyoming-port", "0"],
        &[],
        server_tmp.path(),
    );
    let wyoming = server.wyoming_addr();
    let (host, port) = wyoming.trim().rsplit_once(':').unwrap();
    let result = python_client("wyoming_client.py", &[host, port, CLIP], || server.log());
    let reference = &common::librivox_clips()[0].1;
    let w = wer(reference, result["text"].as_str().unwrap());
    assert!(w < 0.25, "WER {w}");
    assert_eq!(uploads_left(server_tmp.path()), Vec::<String>::new());
}

#[test]
fn the_mcp_client_lists_tools_and_transcribes_a_file() {
    let result = python_client(
        "mcp_client.py",
        &[env!("CARGO_BIN_EXE_utter"), CLIP],
        String::new,
    );
    let reference = &common::librivox_clips()[0].1;
    let w = wer(reference, result["text"].as_str().unwrap());
    assert!(w < 0.25, "WER {w}");
}

/// The same tools under the HTTP server's /mcp (streamable HTTP), through
/// the `mcp` package's own HTTP client; with a key set, /mcp needs it too;
/// a GET (a server-sent stream, which is not offered) is 405.
#[test]
fn the_mcp_client_uses_the_same_tools_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&["--mcp-folder", common::LIBRIVOX], &[], tmp.path());
    let url = format!("http://{}/mcp", server.addr);
    let token = server.mcp_token();
    let result = python_client("mcp_client.py", &[&url, CLIP, &token], || server.log());
    let reference = &common::librivox_clips()[0].1;
    let w = wer(reference, result["text"].as_str().unwrap());
    assert!(w < 0.25, "WER {w}");
    let bearer = format!("Bearer {token}");
    let (status, _) = server
        .request("GET", "/mcp", &[("Authorization", &bearer)], b"")
        .unwrap();
    assert_eq!(status, 405);
    let (status, body) = server
        .request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Authorization", &bearer),
            ],
            b"[1, 2]",
        )
        .unwrap();
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("-32600"), "{body}");
    drop(server);

    let keyed = Server::start(
        &[],
        &[("UTTER_API_KEY", "s3cret-key-0123456789")],
        tmp.path(),
    );
    let ping = br#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#;
    let json = ("Content-Type", "application/json");
    let (status, _) = keyed.request("POST", "/mcp", &[json], ping).unwrap();
    assert_eq!(status, 401, "the key guards /mcp too");
    let (status, body) = keyed
        .request(
            "POST",
            "/mcp",
            &[json, ("Authorization", "Bearer s3cret-key-0123456789")],
            ping,
        )
        .unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""result":{}"#), "{body}");
}

#[test]
fn a_full_queue_answers_503_with_retry_after() {
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("long.wav");
    let mut sox = Command::new("sox");
    // About 200 s of speech: several seconds of work even on a fast machine.
    for _ in 0..8 {
        sox.args(common::librivox_clips().iter().map(|(wav, _)| wav.clone()));
    }
    run(sox.arg(&long));
    // One worker, no waiting places: a second job while one runs is refused.
    let server = Server::start(
        &[
            "--workers",
            "1",
            "--queue",
            "0",
            "--mcp-folder",
            common::LIBRIVOX,
        ],
        &[],
        tmp.path(),
    );
    let (ctype, body) = multipart(
        "long.wav",
        &std::fs::read(&long).unwrap(),
        &[("model", "whisper-tiny.en")],
    );
    let addr = server.addr;
    let first = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let head = format!(
            "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&body).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        parse_response(&out)
    });
    std::thread::sleep(Duration::from_millis(1500)); // the long job is running
    let (ctype, short) = multipart("a.wav", &std::fs::read(CLIP).unwrap(), &[]);
    let mut s = TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
        short.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&short).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let raw = String::from_utf8_lossy(&out).to_lowercase();
    let (status, body) = parse_response(&out);
    assert_eq!(status, 503, "{raw}");
    assert!(raw.contains("retry-after: 5"), "{raw}");
    assert_eq!(error_shape(&body)["code"], "server_busy");
    // An agent's MCP call over HTTP waits in the same queue: refused too,
    // with words it can act on, and no engine of its own started.
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "transcribe_file", "arguments": {"path": CLIP}}});
    let bearer = format!("Bearer {}", server.mcp_token());
    let (status, body) = server
        .request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Authorization", &bearer),
            ],
            call.to_string().as_bytes(),
        )
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["result"]["isError"], true, "{body}");
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_lowercase();
    assert!(text.contains("busy") && text.contains("5"), "{body}");
    // The running job was not disturbed.
    let (status, body) = first.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.to_lowercase().contains("dashwood"), "{body}");
}

#[test]
fn a_wyoming_client_that_disconnects_cancels_its_job() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&["--wyoming", "--wyoming-port", "0"], &[], tmp.path());
    let wyoming = server.wyoming_addr();
    // About 100 s of speech as raw 16-bit PCM (the clips are 16 kHz mono WAV).
    let mut pcm = Vec::new();
    for _ in 0..4 {
        for (wav, _) in common::librivox_clips() {
            pcm.extend_from_slice(&std::fs::read(wav).unwrap()[44..]);
        }
    }
    {
        let mut s = TcpStream::connect(&wyoming).unwrap();
        let event = |kind: &str, data: &str, payload: usize| {
            format!("{{\"type\":\"{kind}\",\"data\":{data},\"payload_length\":{payload}}}\n")
        };
        let format = r#"{"rate":16000,"width":2,"channels":1}"#;
        s.write_all(event("transcribe", "{}", 0).as_bytes())
            .unwrap();
        s.write_all(event("audio-start", format, 0).as_bytes())
            .unwrap();
        // In chunks, as clients send them (one event's payload is capped).
        for chunk in pcm.chunks(64 * 1024) {
            s.write_all(event("audio-chunk", format, chunk.len()).as_bytes())
                .unwrap();
            s.write_all(chunk).unwrap();
        }
        s.write_all(event("audio-stop", "{}", 0).as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500)); // the job is running
    } // the client goes away
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server
        .log()
        .contains("wyoming client disconnected: cancelling")
    {
        assert!(Instant::now() < deadline, "not cancelled: {}", server.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(uploads_left(tmp.path()), Vec::<String>::new());
}

/// Web pages (issue 43, safe by default): a page's request is refused
/// unless its origin was listed with --cors-origin, and a request not
/// addressed to the loopback (DNS rebinding) is refused; a listed origin
/// gets CORS headers, its preflight passes without the key and the request
/// itself still needs it. The SDKs, which send no Origin, are unaffected.
#[test]
fn web_pages_are_refused_unless_their_origin_is_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["serve", "--port", "0", "--cors-origin", "*"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("list each site"), "{err}");

    let server = Server::start(
        &["--cors-origin", "https://Notes.example/"],
        &[("UTTER_API_KEY", "s3cret-key-0123456789")],
        tmp.path(),
    );
    let host = server.addr.to_string();
    let key = ("Authorization", "Bearer s3cret-key-0123456789");
    let (status, _, body) = server
        .request_as(
            &host,
            "GET",
            "/v1/models",
            &[key, ("Origin", "https://evil.example")],
            b"",
        )
        .unwrap();
    assert_eq!(status, 403, "{body}");
    let err = error_shape(&body);
    assert_eq!(err["code"], "forbidden_origin");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("--cors-origin https://evil.example"),
        "{body}"
    );
    let rebound = format!("evil.example:{}", server.addr.port());
    let (status, _, body) = server
        .request_as(&rebound, "GET", "/v1/models", &[key], b"")
        .unwrap();
    assert_eq!(status, 403, "{body}");
    assert_eq!(error_shape(&body)["code"], "forbidden_host");
    let named = format!("localhost:{}", server.addr.port());
    let (status, _, body) = server
        .request_as(&named, "GET", "/v1/models", &[key], b"")
        .unwrap();
    assert_eq!(status, 200, "localhost is this computer: {body}");

    let listed = ("Origin", "https://notes.example");
    let (status, head, _) = server
        .request_as(
            &host,
            "OPTIONS",
            "/v1/audio/transcriptions",
            &[
                listed,
                ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "authorization"),
            ],
            b"",
        )
        .unwrap();
    assert_eq!(status, 200, "{head}");
    assert!(
        head.contains("access-control-allow-origin: https://notes.example"),
        "{head}"
    );
    assert!(head.contains("authorization"), "{head}");
    let (status, _, body) = server
        .request_as(&host, "GET", "/v1/models", &[listed], b"")
        .unwrap();
    assert_eq!(status, 401, "the key is still required: {body}");
    let (status, head, body) = server
        .request_as(&host, "GET", "/v1/models", &[listed, key], b"")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(
        head.contains("access-control-allow-origin: https://notes.example"),
        "{head}"
    );
    // No Origin (the SDKs, curl): no CORS headers, answered as before.
    let (status, head, _) = server
        .request_as(&host, "GET", "/v1/models", &[key], b"")
        .unwrap();
    assert_eq!(status, 200);
    assert!(!head.contains("access-control-allow-origin"), "{head}");
}

/// A real web page in Chromium posting a recording with fetch + FormData:
/// refused (the browser's fetch fails) until the server lists the page's
/// origin, then transcribed.
#[test]
fn a_web_page_in_chromium_transcribes_only_once_its_origin_is_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let page_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let origin = format!("http://127.0.0.1:{page_port}");
    let from_page = |server: &Server| -> serde_json::Value {
        let out = Command::new("node")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/api/browser_fetch.mjs"))
            .arg(page_port.to_string())
            .arg(format!("http://{}", server.addr))
            .arg(CLIP)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(
            said.lines()
                .find_map(|l| l.strip_prefix("RESULT "))
                .unwrap(),
        )
        .unwrap()
    };

    let closed = Server::start(&[], &[], tmp.path());
    let refused = from_page(&closed);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        closed
            .log()
            .contains(&format!("refused a request from a web page at {origin}")),
        "the server says why: {}",
        closed.log()
    );
    drop(closed);

    let open = Server::start(&["--cors-origin", &origin], &[], tmp.path());
    let answered = from_page(&open);
    assert_eq!(answered["ok"], true, "{answered}");
    assert_eq!(answered["status"], 200, "{answered}");
    let text = answered["text"].as_str().unwrap_or_default();
    let cli = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["transcribe", CLIP])
        .output()
        .unwrap();
    let reference = String::from_utf8_lossy(&cli.stdout);
    assert!(
        wer(&reference, text) <= 0.1,
        "page: {text:?}; utter transcribe: {reference:?}"
    );
}
