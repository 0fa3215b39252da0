//! Every door attacked (issue 57): hand-made files that lie about their
//! format given to `utter transcribe` and uploaded to `utter serve`, Wyoming
//! streams that lie, the MCP file tool asked for what its caller may not
//! read (as another local user where the machine allows it), clients that
//! leave, a SIGTERM mid-job, oversized and stalled bodies. Each test asserts
//! the safe outcome: a clear error naming the field, the process alive and
//! answering /health, memory under a bound, no engine worker beyond
//! `--workers`, no file read outside the allowed folders, exit within 2 s.
//! Linux only: it reads /proc, uses wait4, FIFOs, symlinks and setuid.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::server::{key_file, multipart, Server};

const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav";

/// A WAV file as its header says, whatever the data: PCM, `rate` Hz,
/// `channels` × `bits`, `declared` bytes of data claimed, `data` given.
fn lying_wav(rate: u32, channels: u16, bits: u16, declared: u32, data: &[u8]) -> Vec<u8> {
    let block = channels.wrapping_mul(bits / 8);
    let mut w = Vec::new();
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&declared.saturating_add(36).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&channels.to_le_bytes());
    w.extend_from_slice(&rate.to_le_bytes());
    w.extend_from_slice(&rate.wrapping_mul(u32::from(block)).to_le_bytes());
    w.extend_from_slice(&block.to_le_bytes());
    w.extend_from_slice(&bits.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&declared.to_le_bytes());
    w.extend_from_slice(data);
    w
}

/// Peak resident memory of a finished child, in MB (its own, from wait4).
fn wait_with_peak_mb(child: std::process::Child) -> (std::process::ExitStatus, f64) {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; the pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    std::mem::forget(child); // already reaped
    (
        std::process::ExitStatus::from_raw(status),
        usage.ru_maxrss as f64 / 1024.0,
    )
}

/// Peak resident memory of a running process, in MB (VmHWM).
fn peak_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

/// `utter transcribe FILE ARGS…`: exit status, stderr, seconds and peak MB.
fn transcribe(file: &Path, args: &[&str]) -> (std::process::ExitStatus, String, f64, f64) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_utter"))
        .arg("transcribe")
        .arg(file)
        .args(["--model", "whisper-tiny.en"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let (status, peak) = wait_with_peak_mb(child);
    (
        status,
        reader.join().unwrap(),
        started.elapsed().as_secs_f64(),
        peak,
    )
}

#[test]
fn files_that_lie_about_their_format_are_refused_by_transcribe_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let silence = vec![0u8; 16 * 1024];
    let cases: [(&str, Vec<u8>, &str); 5] = [
        // The report's 16 KB file: 17 GB asked of the resampler, then abort.
        (
            "prime-rate.wav",
            lying_wav(4_294_967_291, 1, 16, silence.len() as u32, &silence),
            "sample rate",
        ),
        (
            "20mhz.wav",
            lying_wav(20_000_000, 1, 16, silence.len() as u32, &silence),
            "sample rate",
        ),
        // 2 KB at 1 Hz was 33 minutes and 573 MB of audio.
        (
            "1hz.wav",
            lying_wav(1, 1, 16, 2048, &silence[..2048]),
            "sample rate",
        ),
        // A header claiming 37 hours of 8 kHz audio in 16 KB.
        (
            "long-claim.wav",
            lying_wav(8_000, 1, 16, 0x7FFF_0000, &silence),
            "more than 8 h of audio",
        ),
        (
            "no-channels.wav",
            lying_wav(16_000, 0, 16, silence.len() as u32, &silence),
            "",
        ),
    ];
    for (name, bytes, says) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let (status, err, secs, peak) = transcribe(&path, &[]);
        eprintln!("{name}: {status} in {secs:.1} s, peak {peak:.0} MB: {err}");
        assert_eq!(
            status.code(),
            Some(1),
            "{name}: a file's error, no crash: {err}"
        );
        assert!(
            err.contains(name),
            "{name}: the error names the file: {err}"
        );
        assert!(err.contains(says), "{name}: says why ({says}): {err}");
        assert!(peak < 300.0, "{name}: {peak:.0} MB");
        assert!(secs < 60.0, "{name}: {secs:.0} s");
    }

    // Real audio over the limit the user set: refused, not transcribed.
    let two_minutes = tmp.path().join("two-minutes.wav");
    let sox = Command::new("sox")
        .args(["-n", "-r", "16000", "-c", "1", "-b", "16"])
        .arg(&two_minutes)
        .args(["trim", "0", "120"])
        .status()
        .unwrap();
    assert!(sox.success());
    let (status, err, _, _) = transcribe(&two_minutes, &["--max-audio-minutes", "1"]);
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("more than 1 min of audio") && err.contains("--max-audio-minutes"),
        "{err}"
    );
}

/// Wyoming's frames: a header line, then the payload.
fn wyoming_send(s: &mut TcpStream, kind: &str, data: serde_json::Value, payload: &[u8]) {
    let mut header = serde_json::json!({"type": kind, "data": data});
    if !payload.is_empty() {
        header["payload_length"] = payload.len().into();
    }
    s.write_all(format!("{header}\n").as_bytes()).unwrap();
    s.write_all(payload).unwrap();
}

/// The next event's header from a Wyoming server, or `None` once it closed.
fn wyoming_next(reader: &mut BufReader<TcpStream>) -> Option<serde_json::Value> {
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(serde_json::from_str(&line).unwrap()),
    }
}

fn wyoming_connect(addr: &str) -> (TcpStream, BufReader<TcpStream>) {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let reader = BufReader::new(s.try_clone().unwrap());
    (s, reader)
}

#[test]
fn lying_uploads_and_wyoming_streams_get_errors_and_the_server_stays_up() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(
        &["--wyoming", "--wyoming-port", "0", "--read-timeout-s", "3"],
        &[],
        tmp.path(),
    );
    let silence = vec![0u8; 16 * 1024];
    let lying = lying_wav(4_294_967_291, 1, 16, silence.len() as u32, &silence);
    let (status, text) = upload(&server, &lying, &[]);
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("sample rate") && text.contains("invalid_audio"),
        "{text}"
    );
    assert_eq!(server.request("GET", "/health", &[], b"").unwrap().0, 200);

    // Wyoming: an audio-start with that rate, a width of 0, 90 channels.
    let addr = server.wyoming_addr();
    for (format, says) in [
        (
            serde_json::json!({"rate": 4_294_967_291u64, "width": 2, "channels": 1}),
            "sample rate",
        ),
        (
            serde_json::json!({"rate": 16000, "width": 0, "channels": 1}),
            "width 0",
        ),
        (
            serde_json::json!({"rate": 16000, "width": 65535, "channels": 65535}),
            "width 65535",
        ),
        (
            serde_json::json!({"rate": 16000, "width": 2, "channels": 90}),
            "90 channels",
        ),
    ] {
        let (mut s, mut reader) = wyoming_connect(&addr);
        wyoming_send(&mut s, "transcribe", serde_json::json!({}), b"");
        wyoming_send(&mut s, "audio-start", format.clone(), b"");
        let event = wyoming_next(&mut reader).expect("an answer");
        assert_eq!(event["type"], "error", "{format}: {event}");
        let text = event["data"]["text"].as_str().unwrap();
        assert!(text.contains(says), "{format}: {text}");
    }
    // A payload of 90 MB declared: refused before it is held.
    let (mut s, mut reader) = wyoming_connect(&addr);
    s.write_all(b"{\"type\": \"audio-chunk\", \"payload_length\": 90000000}\n")
        .unwrap();
    assert!(
        wyoming_next(&mut reader).is_none(),
        "the connection is closed"
    );
    // An idle connection is closed after the read timeout (3 s here).
    let (_idle, mut reader) = wyoming_connect(&addr);
    let started = Instant::now();
    assert!(wyoming_next(&mut reader).is_none());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    assert_eq!(server.request("GET", "/health", &[], b"").unwrap().0, 200);
    let peak = peak_mb(server.child.id());
    assert!(peak < 400.0, "the server's peak memory: {peak:.0} MB");

    // Forms with endless text fields, and a body trickled past the deadline's
    // reach are cut short.
    let fields: Vec<(String, String)> =
        (0..40).map(|i| (format!("f{i}"), "x".repeat(10))).collect();
    let fields: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (status, text) = upload(&server, &std::fs::read(CLIP).unwrap(), &fields);
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("more than 32 fields"), "{text}");
    drop(server);

    // An upload trickled at 256 bytes a second, each piece well within the
    // read timeout, is cut at the whole-body deadline (it stayed open for ever).
    let server = Server::start(
        &["--read-timeout-s", "2", "--body-deadline-s", "4"],
        &[],
        tmp.path(),
    );
    let (ctype, body) = multipart("a.wav", &std::fs::read(CLIP).unwrap(), &[]);
    let mut s = upload_head(&server, &ctype, body.len());
    let started = Instant::now();
    s.set_nonblocking(true).unwrap();
    let mut answer = Vec::new();
    for piece in body.chunks(64) {
        if s.write_all(piece).is_err() {
            break; // closed after its answer
        }
        let mut buf = [0u8; 4096];
        if let Ok(n) = s.read(&mut buf) {
            answer.extend_from_slice(&buf[..n]);
            if n > 0 {
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(15), "never cut off");
        std::thread::sleep(Duration::from_millis(250));
    }
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    answer.extend_from_slice(&rest);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("more than 4 s"), "{answer}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(10),
        "{took:?}"
    );
}

#[test]
fn wyoming_off_loopback_needs_an_allow_list_and_admits_only_it() {
    let tmp = tempfile::tempdir().unwrap();
    let key_file = key_file(tmp.path(), "a-key-of-32-characters-0123456789", 0o600);
    let key = key_file.to_str().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args([
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--api-key-file",
            key,
        ])
        .args(["--wyoming", "--wyoming-port", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--wyoming-allow") && err.contains("no keys"),
        "{err}"
    );

    let server = Server::start(
        &[
            "--host",
            "0.0.0.0",
            "--api-key-file",
            key,
            "--wyoming",
            "--wyoming-port",
            "0",
            "--wyoming-allow",
            "203.0.113.0/24",
        ],
        &[],
        tmp.path(),
    );
    let log = server.log();
    assert!(
        log.contains("only 203.0.113.0/24 and this computer"),
        "the startup line states the rule: {log}"
    );
    let addr = server.wyoming_addr();
    let port = addr.rsplit_once(':').unwrap().1;
    // This computer is admitted.
    let (mut s, mut reader) = wyoming_connect(&format!("127.0.0.1:{port}"));
    wyoming_send(&mut s, "describe", serde_json::json!({}), b"");
    assert_eq!(wyoming_next(&mut reader).unwrap()["type"], "info");
    // Another address (this machine's own LAN address, not loopback, and
    // not in the list) is closed at accept without an answer.
    match lan_address() {
        Some(ip) => {
            let (mut s, mut reader) = wyoming_connect(&format!("{ip}:{port}"));
            let _ = s.write_all(b"{\"type\": \"describe\"}\n");
            assert!(wyoming_next(&mut reader).is_none(), "{ip} was answered");
            server.wait_log("not in --wyoming-allow");
        }
        None => eprintln!(
            "no non-loopback address on this machine: the refusal is checked by the unit test only"
        ),
    }
}

/// An address of this machine on a network interface (not loopback).
fn lan_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // No packet is sent: connect() only picks the outgoing interface.
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn mcp_call(server: &Server, token: Option<&str>, path: &str) -> (u16, String) {
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "transcribe_file", "arguments": {"path": path}}});
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(b) = &bearer {
        headers.push(("Authorization", b.as_str()));
    }
    server
        .request("POST", "/mcp", &headers, call.to_string().as_bytes())
        .unwrap()
}

fn tool_text(body: &str) -> (bool, String) {
    let reply: serde_json::Value = serde_json::from_str(body).unwrap();
    (
        reply["result"]["isError"] == true,
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

#[test]
fn mcp_over_http_needs_the_token_and_reads_only_the_named_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let allowed = tmp.path().join("allowed");
    let private = tmp.path().join("private");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::create_dir_all(&private).unwrap();
    std::fs::copy(CLIP, allowed.join("clip.wav")).unwrap();
    std::fs::copy(CLIP, private.join("secret.wav")).unwrap();
    std::os::unix::fs::symlink(private.join("secret.wav"), allowed.join("link.wav")).unwrap();

    // Without --mcp-folder the file tool is off over HTTP, and says how to turn it on.
    let plain = Server::start(&[], &[], tmp.path());
    let token = plain.mcp_token();
    let (status, body) = mcp_call(
        &plain,
        Some(&token),
        allowed.join("clip.wav").to_str().unwrap(),
    );
    assert_eq!(status, 200, "{body}");
    let (is_error, text) = tool_text(&body);
    assert!(is_error && text.contains("--mcp-folder"), "{text}");
    drop(plain);

    let server = Server::start(
        &[
            "--mcp-folder",
            allowed.to_str().unwrap(),
            "--read-timeout-s",
            "2",
        ],
        &[],
        tmp.path(),
    );
    server.wait_log("MCP at http://");
    assert!(server.log().contains("mcp-token"), "{}", server.log());
    let token = server.mcp_token();
    let token_file = server.data.join("mcp-token");
    let mode = std::fs::metadata(&token_file).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );

    // No token, or a wrong one: 401 before anything is looked at.
    let clip = allowed.join("clip.wav");
    for sent in [None, Some("guess")] {
        let (status, body) = mcp_call(&server, sent, clip.to_str().unwrap());
        assert_eq!(status, 401, "{body}");
        assert!(body.contains("mcp-token"), "{body}");
    }
    // Inside the folder: transcribed.
    let (status, body) = mcp_call(&server, Some(&token), clip.to_str().unwrap());
    assert_eq!(status, 200, "{body}");
    let (is_error, text) = tool_text(&body);
    assert!(
        !is_error && text.to_lowercase().contains("dashwood"),
        "{text}"
    );
    // Outside, through `..`, through a link, or missing: one refusal, which
    // does not tell whether the file exists.
    let refusal = |path: &Path| {
        let (status, body) = mcp_call(&server, Some(&token), path.to_str().unwrap());
        assert_eq!(status, 200, "{body}");
        let (is_error, text) = tool_text(&body);
        assert!(is_error, "{}: {text}", path.display());
        text.replace(&path.display().to_string(), "PATH")
    };
    let outside = refusal(&private.join("secret.wav"));
    assert!(
        outside.contains("not a file this server may read"),
        "{outside}"
    );
    assert_eq!(refusal(&private.join("missing.wav")), outside);
    assert_eq!(
        refusal(&allowed.join("..").join("private").join("secret.wav")),
        outside
    );
    assert_eq!(refusal(&allowed.join("link.wav")), outside);
    assert_eq!(refusal(Path::new("/etc/shadow")), outside);
    // A FIFO inside: refused at once, no thread left waiting in open().
    let fifo = allowed.join("pipe.wav");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string and mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let started = Instant::now();
    let text = refusal(&fifo);
    assert!(text.contains("is not a file"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));

    // Bodies: a 2 MB message is refused, one that never arrives times out.
    let big = vec![b' '; 2 << 20];
    let bearer = format!("Bearer {token}");
    let (status, _) = server
        .request("POST", "/mcp", &[("Authorization", &bearer)], &big)
        .unwrap();
    assert_eq!(status, 413);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: {bearer}\r\nContent-Length: 100\r\n\r\n"
    )
    .unwrap();
    let started = Instant::now();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(10));

    // Another local account (root only: it needs setuid) can neither read
    // the token nor get past /mcp without it.
    if unsafe { libc::geteuid() } == 0 {
        let script = format!(
            "import sys, urllib.request\n\
             try:\n    open({token:?}); print('READ'); sys.exit(1)\n\
             except PermissionError: pass\n\
             req = urllib.request.Request('http://{addr}/mcp', data=b'{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}', headers={{'Content-Type': 'application/json'}})\n\
             try:\n    urllib.request.urlopen(req); print('ANSWERED'); sys.exit(1)\n\
             except urllib.error.HTTPError as e: print(e.code)\n",
            token = token_file.to_str().unwrap(),
            addr = server.addr,
        );
        let mut command = Command::new("python3");
        command.args(["-c", &script]);
        // SAFETY: setgid/setuid between fork and exec touch no shared state.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = command.output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "as nobody: {said} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(said.trim(), "401");
    } else {
        eprintln!("not root: the other-user check needs setuid; skipped");
    }
    assert_eq!(server.request("GET", "/health", &[], b"").unwrap().0, 200);
}

/// About 100 s of speech: a job that takes a while on two cores.
fn long_speech(dir: &Path) -> PathBuf {
    let long = dir.join("long.wav");
    let mut sox = Command::new("sox");
    for _ in 0..4 {
        sox.args(common::librivox_clips().iter().map(|(wav, _)| wav.clone()));
    }
    assert!(sox.arg(&long).status().unwrap().success());
    long
}

/// Sends a whole upload and returns the open connection (no answer read).
fn upload_and_hold(server: &Server, ctype: &str, body: &[u8]) -> TcpStream {
    let mut s = upload_head(server, ctype, body.len());
    s.write_all(body).unwrap();
    s
}

/// A connection with an upload's request line and headers sent, its body not yet.
fn upload_head(server: &Server, ctype: &str, len: usize) -> TcpStream {
    let mut s = TcpStream::connect(server.addr).unwrap();
    write!(
        s,
        "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: localhost\r\nContent-Type: {ctype}\r\nContent-Length: {len}\r\n\r\n"
    )
    .unwrap();
    s
}

/// `audio` uploaded as `a.wav` with `fields`: (status, body).
fn upload(server: &Server, audio: &[u8], fields: &[(&str, &str)]) -> (u16, String) {
    let (ctype, body) = multipart("a.wav", audio, fields);
    server
        .request(
            "POST",
            "/v1/audio/transcriptions",
            &[("Content-Type", &ctype)],
            &body,
        )
        .unwrap()
}

#[test]
fn dropped_clients_stop_their_work_and_workers_never_exceed_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let long = long_speech(tmp.path());
    let server = Server::start(&["--workers", "1"], &[], tmp.path());
    let (ctype, body) = multipart(
        "long.wav",
        &std::fs::read(&long).unwrap(),
        &[("model", "whisper-tiny.en")],
    );
    // Four clients upload and leave.
    let clients: Vec<TcpStream> = (0..4)
        .map(|_| upload_and_hold(&server, &ctype, &body))
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    drop(clients);
    let pid = server.child.id();
    let (mut most_engines, mut most_vads) = (0, 0);
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(8) {
        most_engines = most_engines.max(common::engine_workers(pid).len());
        most_vads = most_vads.max(common::vad_workers(pid).len());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        most_engines <= 1,
        "{most_engines} engine workers under --workers 1"
    );
    assert!(
        most_vads <= 1,
        "{most_vads} voice detectors under --workers 1"
    );
    // The work stopped: the process is nearly idle within a few seconds.
    let cpu = |pid: u32| -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        // utime + stime + cutime + cstime, in clock ticks (100 per second).
        fields[11..15]
            .iter()
            .map(|f| f.parse::<f64>().unwrap())
            .sum::<f64>()
            / 100.0
    };
    let tree_cpu = || {
        cpu(pid)
            + common::engine_workers(pid)
                .into_iter()
                .map(cpu)
                .sum::<f64>()
            + common::vad_workers(pid).into_iter().map(cpu).sum::<f64>()
    };
    let before = tree_cpu();
    std::thread::sleep(Duration::from_secs(3));
    let busy = tree_cpu() - before;
    assert!(
        busy < 0.5,
        "{busy:.2} CPU s in 3 s after every client left: {}",
        server.log()
    );
    server.wait_log("cancelling its transcription");
}

#[test]
fn sigterm_ends_the_server_within_two_seconds_while_a_job_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let long = long_speech(tmp.path());
    // An upload a killed server left behind is removed at the next start.
    let stale = tmp.path().join("utter-upload-stale.wav");
    std::fs::write(&stale, b"left by a crash").unwrap();
    let mut server = Server::start(&["--workers", "1"], &[], tmp.path());
    assert!(!stale.exists(), "the stale upload was not removed");
    let (ctype, body) = multipart("long.wav", &std::fs::read(&long).unwrap(), &[]);
    let _client = upload_and_hold(&server, &ctype, &body);
    std::thread::sleep(Duration::from_secs(3)); // transcribing
                                                // SAFETY: signalling our own child.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let signalled = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            eprintln!("exited {status} after {:?}", signalled.elapsed());
            break;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(2),
            "still running 2 s after SIGTERM: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn key_files_others_can_read_and_short_keys_are_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let key_file = key_file(tmp.path(), "a-key-of-32-characters-0123456789", 0o644);
    let serve = |args: &[&str], env: &[(&str, &str)]| {
        let out = Command::new(env!("CARGO_BIN_EXE_utter"))
            .args(["serve", "--port", "0"])
            .args(args)
            .env_remove("UTTER_API_KEY")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = serve(&["--api-key-file", key_file.to_str().unwrap()], &[]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("chmod 600"), "{err}");
    let (code, err) = serve(&[], &[("UTTER_API_KEY", "k")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("at least 16"), "{err}");
}
