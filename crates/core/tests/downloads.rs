//! Model downloads against a real HTTP server on loopback, started by the
//! test, that can misbehave on purpose: no Range support, a connection
//! dropped half-way, a stall, 404/500, wrong bytes.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use utter_core::models::download::{download, DownloadError, DownloadOptions, DownloadSpec};

const SIZE: usize = 3 * 1024 * 1024 + 123;

fn payload() -> Vec<u8> {
    (0..SIZE as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// A loopback HTTP/1.1 server. Paths choose the behaviour:
/// `/ok` Range-aware, `/norange` always 200 full, `/drop` closes the first
/// response half-way, `/stall` stops sending half-way, `/404`, `/500`,
/// `/wrong` serves other bytes of the same length.
struct Server {
    base: String,
    requests: Arc<AtomicUsize>,
    ranged: Arc<AtomicUsize>,
}

fn serve(
    stream: TcpStream,
    body: &[u8],
    dropped: &AtomicBool,
    requests: &AtomicUsize,
    ranged: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let mut range_start = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("range: bytes=") {
            range_start = v.trim().trim_end_matches('-').parse::<usize>().ok();
        }
    }
    requests.fetch_add(1, Ordering::SeqCst);
    let mut out = stream;
    let status = |out: &mut TcpStream, code: &str| {
        let _ = write!(
            out,
            "HTTP/1.1 {code}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    };
    let (honour_range, data): (bool, Vec<u8>) = match path.as_str() {
        "/404/m.gguf" => return status(&mut out, "404 Not Found"),
        "/500/m.gguf" => return status(&mut out, "500 Internal Server Error"),
        "/norange/m.gguf" => (false, body.to_vec()),
        "/wrong/m.gguf" => (true, body.iter().map(|b| b ^ 0x5a).collect()),
        _ => (true, body.to_vec()),
    };
    let start = if honour_range {
        range_start.unwrap_or(0)
    } else {
        0
    };
    if start > 0 {
        ranged.fetch_add(1, Ordering::SeqCst);
        let _ = write!(
            out,
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{}\r\nConnection: close\r\n\r\n",
            data.len() - start,
            data.len() - 1,
            data.len()
        );
    } else {
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            data.len()
        );
    }
    let rest = &data[start..];
    let half = rest.len() / 2;
    match path.as_str() {
        "/drop/m.gguf" if !dropped.swap(true, Ordering::SeqCst) => {
            let _ = out.write_all(&rest[..half]);
            // Connection closes here, mid-body.
        }
        "/stall/m.gguf" => {
            let _ = out.write_all(&rest[..half]);
            let _ = out.flush();
            std::thread::sleep(Duration::from_secs(5));
        }
        _ => {
            let _ = out.write_all(rest);
        }
    }
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let ranged = Arc::new(AtomicUsize::new(0));
        let (r, g) = (requests.clone(), ranged.clone());
        std::thread::spawn(move || {
            let body = Arc::new(payload());
            let dropped = Arc::new(AtomicBool::new(false));
            // Bounded: a test never needs more than a few dozen requests.
            for stream in listener.incoming().take(64).flatten() {
                let (body, dropped, r, g) = (body.clone(), dropped.clone(), r.clone(), g.clone());
                std::thread::spawn(move || serve(stream, &body, &dropped, &r, &g));
            }
        });
        Self {
            base,
            requests,
            ranged,
        }
    }

    fn url(&self, behaviour: &str) -> String {
        format!("{}/{behaviour}/m.gguf", self.base)
    }
}

fn spec(urls: Vec<String>, dir: &Path) -> DownloadSpec {
    DownloadSpec {
        urls,
        dest: dir.join("model.gguf"),
        size: SIZE as u64,
        sha256: sha256(&payload()),
    }
}

fn quick() -> DownloadOptions {
    DownloadOptions {
        stall_timeout: Duration::from_millis(800),
        ..Default::default()
    }
}

fn part(dir: &Path) -> std::path::PathBuf {
    dir.join("model.gguf.part")
}

#[test]
fn a_plain_download_verifies_and_reports_progress() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let mut last = None;
    let path = download(&spec(vec![server.url("ok")], dir.path()), &quick(), |p| {
        last = Some(p)
    })
    .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), payload());
    let p = last.unwrap();
    assert_eq!((p.downloaded, p.total), (SIZE as u64, SIZE as u64));
    assert!(p.bytes_per_sec > 0.0);
    assert!(!part(dir.path()).exists());
}

#[test]
fn a_dropped_connection_resumes_with_range_and_the_sha256_matches() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let path = download(
        &spec(vec![server.url("drop")], dir.path()),
        &quick(),
        |_| {},
    )
    .unwrap();
    assert_eq!(sha256(&std::fs::read(path).unwrap()), sha256(&payload()));
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
    assert_eq!(
        server.ranged.load(Ordering::SeqCst),
        1,
        "the second request resumed with Range"
    );
}

#[test]
fn a_part_file_from_an_earlier_run_is_resumed() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(part(dir.path()), &payload()[..SIZE / 3]).unwrap();
    download(&spec(vec![server.url("ok")], dir.path()), &quick(), |_| {}).unwrap();
    assert_eq!(server.ranged.load(Ordering::SeqCst), 1);
    // A server without Range support restarts from zero and still ends right.
    let dir2 = tempfile::tempdir().unwrap();
    std::fs::write(part(dir2.path()), &payload()[..SIZE / 3]).unwrap();
    let path = download(
        &spec(vec![server.url("norange")], dir2.path()),
        &quick(),
        |_| {},
    )
    .unwrap();
    assert_eq!(std::fs::read(path).unwrap(), payload());
}

#[test]
fn wrong_bytes_are_a_clear_error_and_leave_nothing_behind() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let err = download(
        &spec(vec![server.url("wrong")], dir.path()),
        &quick(),
        |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, DownloadError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("checksum mismatch"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no model, no .part"
    );
}

#[test]
fn a_failing_source_falls_through_to_the_next_mirror() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let urls = vec![
        server.url("404"),
        server.url("500"),
        server.url("stall"),
        server.url("ok"),
    ];
    let path = download(&spec(urls, dir.path()), &quick(), |_| {}).unwrap();
    assert_eq!(std::fs::read(path).unwrap(), payload());
}

#[test]
fn when_every_source_fails_each_reason_is_reported() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let urls = vec![server.url("404"), server.url("500"), server.url("stall")];
    let err = download(&spec(urls, dir.path()), &quick(), |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HTTP 404") && err.contains("HTTP 500") && err.contains("stalled"),
        "{err}"
    );
}

#[test]
fn cancel_keeps_a_resumable_part_file() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let options = quick();
    let cancel = options.cancel.clone();
    let mut seen = 0;
    let err = download(&spec(vec![server.url("ok")], dir.path()), &options, |p| {
        seen = p.downloaded;
        if p.downloaded > SIZE as u64 / 4 {
            cancel.store(true, Ordering::SeqCst);
        }
    })
    .unwrap_err();
    assert!(matches!(err, DownloadError::Cancelled), "{err}");
    let kept = std::fs::metadata(part(dir.path())).unwrap().len();
    assert!(kept > 0 && kept == seen, "kept {kept}, saw {seen}");
    // And it resumes from there.
    let path = download(&spec(vec![server.url("ok")], dir.path()), &quick(), |_| {}).unwrap();
    assert_eq!(std::fs::read(path).unwrap(), payload());
    assert_eq!(server.ranged.load(Ordering::SeqCst), 1);
}

#[test]
fn not_enough_disk_space_is_refused_before_downloading() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(vec![server.url("ok")], dir.path());
    s.size = u64::MAX / 4;
    let err = download(&s, &quick(), |_| {}).unwrap_err();
    assert!(err.to_string().contains("not enough disk space"), "{err}");
    assert_eq!(server.requests.load(Ordering::SeqCst), 0);
}
