//! A loopback HTTP/1.1 server for download and API tests. A route function
//! chooses a [`Reply`] for each request path; the server honours
//! `Range: bytes=N-` with a 206 and counts requests, so a test can check that
//! a download resumed. A reply can also misbehave on purpose (a status instead
//! of the bytes, no Range support, a connection closed or stalled half-way, a
//! refused resume, slow pieces, a late answer), so a downloader's resume,
//! mirror fall-through and error paths run against a real socket.
//!
//! Every request is recorded with its method, headers and body
//! ([`Server::received`]), and a reply can be streamed in parts (chunked
//! transfer encoding, a pause after each), which is what an API client such
//! as a chat-completions one needs ([`crate::chat`] builds those replies).
//!
//! ```no_run
//! use std::sync::Arc;
//! use utter_test_support::http::{Reply, Server};
//!
//! let body: Arc<[u8]> = vec![7u8; 1000].into();
//! let server = Server::start(move |path| match path {
//!     "/model.bin" => Reply::bytes(body.clone()),
//!     "/flaky.bin" => Reply::bytes(body.clone()).close_halfway_once(),
//!     _ => Reply::status(404),
//! });
//! let url = server.url("/model.bin");
//! ```

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server answers to one request. Built with [`Reply::bytes`] or
/// [`Reply::status`], then its misbehaviours chained on.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    body: Arc<[u8]>,
    headers: Vec<(String, String)>,
    honour_range: bool,
    close: Close,
    stall: Option<Duration>,
    refuse_resume: Option<u16>,
    pieces: Option<(usize, Duration)>,
    /// Chunked transfer encoding, one chunk per part (their lengths).
    parts: Option<Vec<usize>>,
    delay: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Close {
    Never,
    /// The first response on this path only.
    Once,
    Always,
}

impl Reply {
    /// `200 OK` with these bytes, or `206` with their tail for a Range request.
    pub fn bytes(body: impl Into<Arc<[u8]>>) -> Self {
        Self {
            status: 200,
            body: body.into(),
            headers: Vec::new(),
            honour_range: true,
            close: Close::Never,
            stall: None,
            refuse_resume: None,
            pieces: None,
            parts: None,
            delay: None,
        }
    }

    /// This status with an empty body (404, 500...).
    pub fn status(code: u16) -> Self {
        Self {
            status: code,
            ..Self::bytes(Vec::new())
        }
    }

    /// `200 OK` with these parts as the body, sent with chunked transfer
    /// encoding, one chunk per part and `pause` after each: a streamed API
    /// answer (server-sent events) arriving piece by piece.
    /// [`Reply::close_halfway`] sends half the parts, then closes without
    /// the closing chunk.
    pub fn stream<P: AsRef<[u8]>>(parts: impl IntoIterator<Item = P>, pause: Duration) -> Self {
        let (mut body, mut lengths) = (Vec::new(), Vec::new());
        for part in parts {
            body.extend_from_slice(part.as_ref());
            lengths.push(part.as_ref().len());
        }
        Self {
            parts: Some(lengths),
            pieces: Some((1, pause)),
            honour_range: false,
            ..Self::bytes(body)
        }
    }

    /// The body of a [`Reply::status`] reply (an API's error message).
    pub fn with_body(mut self, body: impl Into<Arc<[u8]>>) -> Self {
        self.body = body.into();
        self
    }

    /// One more response header (`Content-Type`, `Location`...).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Waits this long before sending anything (a slow server).
    pub fn delay(mut self, pause: Duration) -> Self {
        self.delay = Some(pause);
        self
    }

    /// A server without Range support: always `200` and the whole body.
    pub fn ignore_range(mut self) -> Self {
        self.honour_range = false;
        self
    }

    /// The first response on this path sends half its body, then closes the
    /// connection; later requests get all of it.
    pub fn close_halfway_once(mut self) -> Self {
        self.close = Close::Once;
        self
    }

    /// Every response sends half its body, then closes the connection.
    pub fn close_halfway(mut self) -> Self {
        self.close = Close::Always;
        self
    }

    /// Sends half the body, then holds the connection open, silent, this long.
    pub fn stall_halfway(mut self, pause: Duration) -> Self {
        self.stall = Some(pause);
        self
    }

    /// A Range request (a resume) is answered with this status instead.
    pub fn refuse_resume(mut self, code: u16) -> Self {
        self.refuse_resume = Some(code);
        self
    }

    /// Sends the body in pieces of `size` bytes with `pause` after each, so a
    /// client can pause or cancel mid-file.
    pub fn in_pieces(mut self, size: usize, pause: Duration) -> Self {
        self.pieces = Some((size.max(1), pause));
        self
    }
}

/// One request as the server read it, for a test's assertions.
#[derive(Clone, Debug, PartialEq)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// In the order sent, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The `Content-Length` bytes after the head (empty without one).
    pub body: Vec<u8>,
}

impl Received {
    /// The first header of that name (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The running server; it stops accepting connections when dropped.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    stop: AtomicBool,
    requests: AtomicUsize,
    ranged: AtomicUsize,
    /// Requests seen per path (for [`Reply::close_halfway_once`]).
    per_path: Mutex<HashMap<String, usize>>,
    received: Mutex<Vec<Received>>,
}

impl Server {
    /// Listens on 127.0.0.1 (a free port) and answers every request with
    /// `route(path)`, each connection on its own thread.
    pub fn start(route: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            requests: AtomicUsize::new(0),
            ranged: AtomicUsize::new(0),
            per_path: Mutex::new(HashMap::new()),
            received: Mutex::new(Vec::new()),
        });
        let route = Arc::new(route);
        let state = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if state.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (route, state) = (route.clone(), state.clone());
                std::thread::spawn(move || serve(stream, &*route, &state));
            }
        });
        Self { addr, shared }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URL of `path` (which starts with `/`) on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Range requests answered with `206 Partial Content` so far.
    pub fn ranged(&self) -> usize {
        self.shared.ranged.load(Ordering::SeqCst)
    }

    /// Every request received so far, oldest first.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// One request and its `Range: bytes=N-` start.
fn read_request(stream: &TcpStream) -> Option<(Received, Option<usize>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut words = request_line.split_whitespace();
    let method = words.next()?.to_string();
    let path = words.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let value = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    let range_start = value("range")
        .and_then(|v| v.strip_prefix("bytes="))
        .and_then(|v| v.trim_end_matches('-').parse().ok());
    // Only `Content-Length` bodies: what the clients under test send.
    let length = value("content-length").and_then(|v| v.parse().ok());
    let mut body = vec![0; length.unwrap_or(0)];
    reader.read_exact(&mut body).ok()?;
    let request = Received {
        method,
        path,
        headers,
        body,
    };
    Some((request, range_start))
}

fn serve(mut out: TcpStream, route: &dyn Fn(&str) -> Reply, state: &Shared) {
    let Some((request, range_start)) = read_request(&out) else {
        return;
    };
    let path = request.path.clone();
    state.requests.fetch_add(1, Ordering::SeqCst);
    state.received.lock().unwrap().push(request);
    let seen_before = {
        let mut per_path = state.per_path.lock().unwrap();
        let n = per_path.entry(path.clone()).or_default();
        *n += 1;
        *n - 1
    };
    let reply = route(&path);
    if let Some(pause) = reply.delay {
        std::thread::sleep(pause);
    }
    let body = &reply.body;
    if reply.status != 200 {
        return write_status(&mut out, reply.status, body, &reply.headers);
    }
    let start = match range_start.filter(|_| reply.honour_range) {
        Some(start) if start > 0 => start.min(body.len()),
        _ => 0,
    };
    let extra: String = reply
        .headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    if start > 0 {
        if let Some(code) = reply.refuse_resume {
            return write_status(&mut out, code, &[], &[]);
        }
        state.ranged.fetch_add(1, Ordering::SeqCst);
        let _ = write!(
            out,
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{}\r\n{extra}Connection: close\r\n\r\n",
            body.len() - start,
            body.len().saturating_sub(1),
            body.len()
        );
    } else if reply.parts.is_some() {
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n{extra}Connection: close\r\n\r\n"
        );
    } else {
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
            body.len()
        );
    }
    let cut = match reply.close {
        Close::Always => true,
        Close::Once => seen_before == 0,
        Close::Never => false,
    };
    if let Some(parts) = &reply.parts {
        return send_parts(&mut out, body, parts, &reply, cut);
    }
    let rest = &body[start..];
    let sent = if cut || reply.stall.is_some() {
        &rest[..rest.len() / 2]
    } else {
        rest
    };
    let pieces = reply.pieces.unwrap_or((sent.len().max(1), Duration::ZERO));
    for piece in sent.chunks(pieces.0) {
        if out.write_all(piece).is_err() {
            return;
        }
        std::thread::sleep(pieces.1);
    }
    let _ = out.flush();
    if let Some(pause) = reply.stall {
        std::thread::sleep(pause);
    }
    // Dropping the stream closes the connection, mid-body where cut.
}

/// A [`Reply::stream`] body: one chunk per part, a pause after each; cut or
/// stalled replies stop after half the parts, before the closing chunk.
fn send_parts(out: &mut TcpStream, body: &[u8], parts: &[usize], reply: &Reply, cut: bool) {
    let pause = reply.pieces.map_or(Duration::ZERO, |(_, pause)| pause);
    let count = if cut || reply.stall.is_some() {
        parts.len() / 2
    } else {
        parts.len()
    };
    let mut at = 0;
    for &len in &parts[..count] {
        let part = &body[at..at + len];
        at += len;
        if len == 0 {
            continue; // an empty chunk would end the body
        }
        let sent = write!(out, "{len:x}\r\n")
            .and_then(|()| out.write_all(part))
            .and_then(|()| out.write_all(b"\r\n"))
            .and_then(|()| out.flush());
        if sent.is_err() {
            return;
        }
        std::thread::sleep(pause);
    }
    if let Some(pause) = reply.stall {
        std::thread::sleep(pause);
    }
    if count == parts.len() {
        let _ = out.write_all(b"0\r\n\r\n");
    }
}

fn write_status(out: &mut TcpStream, code: u16, body: &[u8], headers: &[(String, String)]) {
    let reason = match code {
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let extra: String = headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    let _ = write!(
        out,
        "HTTP/1.1 {code} {reason}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends raw request bytes and reads the whole response.
    fn exchange(server: &Server, request: &str) -> String {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    #[test]
    fn ranges_statuses_and_bodies_are_served_as_before() {
        let server = Server::start(|path| match path {
            "/a" => Reply::bytes(b"0123456789".to_vec()),
            _ => Reply::status(404),
        });
        let whole = exchange(&server, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(whole.starts_with("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"));
        assert!(whole.ends_with("\r\n\r\n0123456789"));
        let tail = exchange(&server, "GET /a HTTP/1.1\r\nRange: bytes=4-\r\n\r\n");
        assert!(tail.starts_with("HTTP/1.1 206 Partial Content\r\n"));
        assert!(tail.contains("Content-Range: bytes 4-9/10\r\n"));
        assert!(tail.ends_with("\r\n\r\n456789"));
        let missing = exchange(&server, "GET /b HTTP/1.1\r\n\r\n");
        assert!(missing.starts_with("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"));
        assert_eq!((server.requests(), server.ranged()), (3, 1));
    }

    #[test]
    fn requests_are_recorded_with_headers_and_body() {
        let server = Server::start(|_| Reply::status(500).with_body(b"{}".to_vec()));
        let response = exchange(
            &server,
            "POST /v1/x HTTP/1.1\r\nAuthorization: Bearer k\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert!(response.starts_with("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n"));
        assert!(response.ends_with("\r\n\r\n{}"));
        let received = server.received();
        assert_eq!(received.len(), 1);
        assert_eq!(
            (received[0].method.as_str(), received[0].path.as_str()),
            ("POST", "/v1/x")
        );
        assert_eq!(received[0].header("AUTHORIZATION"), Some("Bearer k"));
        assert_eq!(received[0].body_text(), "hello");
    }

    #[test]
    fn a_stream_is_chunked_and_a_cut_one_lacks_the_closing_chunk() {
        let server = Server::start(|path| {
            let reply = Reply::stream(["ab", "", "cde", "f"], Duration::ZERO);
            match path {
                "/cut" => reply.close_halfway(),
                _ => reply.header("Content-Type", "text/event-stream"),
            }
        });
        let whole = exchange(&server, "GET / HTTP/1.1\r\n\r\n");
        assert!(whole.contains("Transfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n"));
        assert!(whole.ends_with("\r\n\r\n2\r\nab\r\n3\r\ncde\r\n1\r\nf\r\n0\r\n\r\n"));
        let cut = exchange(&server, "GET /cut HTTP/1.1\r\n\r\n");
        assert!(cut.ends_with("\r\n\r\n2\r\nab\r\n"), "{cut:?}");
    }
}
