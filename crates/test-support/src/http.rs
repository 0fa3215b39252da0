//! A loopback HTTP/1.1 server for download tests. A route function chooses a
//! [`Reply`] for each request path; the server honours `Range: bytes=N-`
//! with a 206 and counts requests, so a test can check that a download
//! resumed. A reply can also misbehave on purpose (a status instead of the
//! bytes, no Range support, a connection closed or stalled half-way, a
//! refused resume, slow pieces), so a downloader's resume, mirror
//! fall-through and error paths run against a real socket.
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
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server answers to one request. Built with [`Reply::bytes`] or
/// [`Reply::status`], then its misbehaviours chained on.
#[derive(Clone, Debug)]
pub struct Reply {
    body: Result<Arc<[u8]>, u16>,
    honour_range: bool,
    close: Close,
    stall: Option<Duration>,
    refuse_resume: Option<u16>,
    pieces: Option<(usize, Duration)>,
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
            body: Ok(body.into()),
            honour_range: true,
            close: Close::Never,
            stall: None,
            refuse_resume: None,
            pieces: None,
        }
    }

    /// This status with an empty body (404, 500...).
    pub fn status(code: u16) -> Self {
        Self {
            body: Err(code),
            ..Self::bytes(Vec::new())
        }
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
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// The path and the `Range: bytes=N-` start of one request.
fn read_request(stream: &TcpStream) -> Option<(String, Option<usize>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_string();
    let mut range_start = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
            range_start = v.trim().trim_end_matches('-').parse().ok();
        }
    }
    Some((path, range_start))
}

fn serve(mut out: TcpStream, route: &dyn Fn(&str) -> Reply, state: &Shared) {
    let Some((path, range_start)) = read_request(&out) else {
        return;
    };
    state.requests.fetch_add(1, Ordering::SeqCst);
    let seen_before = {
        let mut per_path = state.per_path.lock().unwrap();
        let n = per_path.entry(path.clone()).or_default();
        *n += 1;
        *n - 1
    };
    let reply = route(&path);
    let body = match &reply.body {
        Ok(body) => body,
        Err(code) => return write_status(&mut out, *code),
    };
    let start = match range_start.filter(|_| reply.honour_range) {
        Some(start) if start > 0 => start.min(body.len()),
        _ => 0,
    };
    if start > 0 {
        if let Some(code) = reply.refuse_resume {
            return write_status(&mut out, code);
        }
        state.ranged.fetch_add(1, Ordering::SeqCst);
        let _ = write!(
            out,
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{}\r\nConnection: close\r\n\r\n",
            body.len() - start,
            body.len().saturating_sub(1),
            body.len()
        );
    } else {
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
    }
    let rest = &body[start..];
    let cut = match reply.close {
        Close::Always => true,
        Close::Once => seen_before == 0,
        Close::Never => false,
    };
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

fn write_status(out: &mut TcpStream, code: u16) {
    let reason = match code {
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let _ = write!(
        out,
        "HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}
