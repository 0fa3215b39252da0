//! Model downloads against a real HTTP server on loopback, started by the
//! test, that can misbehave on purpose: no Range support, a connection
//! dropped half-way, a stall, 404/500, wrong bytes.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use utter_models::download::{download, DownloadError, DownloadOptions, DownloadSpec};
use utter_test_support::http::{Reply, Server};

const SIZE: usize = 3 * 1024 * 1024 + 123;

fn payload() -> Vec<u8> {
    (0..SIZE as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The test payload on a loopback server. The first path segment chooses the
/// behaviour: `/ok` Range-aware, `/norange` always 200 full, `/drop` closes
/// the first response half-way, `/stall` stops sending half-way, `/404`,
/// `/500`, `/wrong` serves other bytes of the same length.
fn start_server() -> Server {
    let body: Arc<[u8]> = payload().into();
    let wrong: Arc<[u8]> = body.iter().map(|b| b ^ 0x5a).collect();
    Server::start(move |path| match path {
        "/404/m.gguf" => Reply::status(404),
        "/500/m.gguf" => Reply::status(500),
        "/norange/m.gguf" => Reply::bytes(body.clone()).ignore_range(),
        "/wrong/m.gguf" => Reply::bytes(wrong.clone()),
        "/drop/m.gguf" => Reply::bytes(body.clone()).close_halfway_once(),
        "/stall/m.gguf" => Reply::bytes(body.clone()).stall_halfway(Duration::from_secs(5)),
        _ => Reply::bytes(body.clone()),
    })
}

fn url(server: &Server, behaviour: &str) -> String {
    server.url(&format!("/{behaviour}/m.gguf"))
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
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let mut last = None;
    let path = download(&spec(vec![url(&server, "ok")], dir.path()), &quick(), |p| {
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
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let path = download(
        &spec(vec![url(&server, "drop")], dir.path()),
        &quick(),
        |_| {},
    )
    .unwrap();
    assert_eq!(sha256(&std::fs::read(path).unwrap()), sha256(&payload()));
    assert_eq!(server.requests(), 2);
    assert_eq!(server.ranged(), 1, "the second request resumed with Range");
}

#[test]
fn a_part_file_from_an_earlier_run_is_resumed() {
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(part(dir.path()), &payload()[..SIZE / 3]).unwrap();
    download(
        &spec(vec![url(&server, "ok")], dir.path()),
        &quick(),
        |_| {},
    )
    .unwrap();
    assert_eq!(server.ranged(), 1);
    // A server without Range support restarts from zero and still ends right.
    let dir2 = tempfile::tempdir().unwrap();
    std::fs::write(part(dir2.path()), &payload()[..SIZE / 3]).unwrap();
    let path = download(
        &spec(vec![url(&server, "norange")], dir2.path()),
        &quick(),
        |_| {},
    )
    .unwrap();
    assert_eq!(std::fs::read(path).unwrap(), payload());
}

#[test]
fn wrong_bytes_are_a_clear_error_and_leave_nothing_behind() {
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let err = download(
        &spec(vec![url(&server, "wrong")], dir.path()),
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
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let urls = vec![
        url(&server, "404"),
        url(&server, "500"),
        url(&server, "stall"),
        url(&server, "ok"),
    ];
    let path = download(&spec(urls, dir.path()), &quick(), |_| {}).unwrap();
    assert_eq!(std::fs::read(path).unwrap(), payload());
}

#[test]
fn when_every_source_fails_each_reason_is_reported() {
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let urls = vec![
        url(&server, "404"),
        url(&server, "500"),
        url(&server, "stall"),
    ];
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
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let options = quick();
    let cancel = options.cancel.clone();
    let mut seen = 0;
    let err = download(&spec(vec![url(&server, "ok")], dir.path()), &options, |p| {
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
    let path = download(
        &spec(vec![url(&server, "ok")], dir.path()),
        &quick(),
        |_| {},
    )
    .unwrap();
    assert_eq!(std::fs::read(path).unwrap(), payload());
    assert_eq!(server.ranged(), 1);
}

#[test]
fn not_enough_disk_space_is_refused_before_downloading() {
    let server = start_server();
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(vec![url(&server, "ok")], dir.path());
    s.size = u64::MAX / 4;
    let err = download(&s, &quick(), |_| {}).unwrap_err();
    assert!(err.to_string().contains("not enough disk space"), "{err}");
    assert_eq!(server.requests(), 0);
}
