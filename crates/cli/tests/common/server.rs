//! A running `utter serve` for the tests that drive it (serve.rs, doors.rs),
//! and the raw HTTP pieces they send.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `utter serve`, killed on drop; its stderr is kept.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    log: Arc<Mutex<String>>,
    /// Its data folder (UTTER_DATA_DIR), where the MCP token is.
    pub data: PathBuf,
}

impl Server {
    pub fn start(args: &[&str], env: &[(&str, &str)], tmp: &Path) -> Self {
        let data = tmp.join("data");
        let mut child = Command::new(env!("CARGO_BIN_EXE_utter"))
            .args(["serve", "--port", "0", "-v"])
            .args(args)
            .env("UTTER_DATA_DIR", &data)
            .envs(env.iter().copied())
            .env("TMPDIR", tmp)
            .stderr(Stdio::piped())
            .spawn()
            .expect("utter serve starts");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("http://").nth(1) {
                    let _ = tx.send(rest.split('/').next().unwrap_or_default().to_string());
                }
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("utter serve printed no address: {}", log.lock().unwrap()))
            .parse()
            .unwrap();
        let server = Self {
            child,
            addr,
            log,
            data,
        };
        server.wait_healthy();
        server
    }

    /// Waits until its log holds `needle` (the log comes through a pipe
    /// and a thread, after the fact it tells).
    pub fn wait_log(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.log().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no `{needle}` in: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Where it serves Wyoming (`host:port`), from its startup line.
    pub fn wyoming_addr(&self) -> String {
        self.log()
            .lines()
            .find_map(|l| {
                l.split("tcp://")
                    .nth(1)?
                    .split_whitespace()
                    .next()
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("no Wyoming address: {}", self.log()))
    }

    /// The token `/mcp` asks of callers without an API key.
    pub fn mcp_token(&self) -> String {
        std::fs::read_to_string(self.data.join("mcp-token")).unwrap()
    }

    pub fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok((200, _)) = self.request("GET", "/health", &[], b"") {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("/health never answered 200: {}", self.log());
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// One HTTP/1.1 request on its own connection: (status, body).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<(u16, String)> {
        let host = self.addr.to_string();
        self.request_as(&host, method, path, headers, body)
            .map(|(status, _, body)| (status, body))
    }

    /// A request with its `Host` header: (status, response headers in
    /// lower case, body).
    pub fn request_as(
        &self,
        host: &str,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<(u16, String, String)> {
        let mut s = TcpStream::connect(self.addr)?;
        s.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes())?;
        s.write_all(body)?;
        let mut out = Vec::new();
        s.read_to_end(&mut out)?;
        let (status, body) = parse_response(&out);
        let text = String::from_utf8_lossy(&out);
        let head = text.split_once("\r\n\r\n").map_or(&*text, |(h, _)| h);
        Ok((status, head.to_ascii_lowercase(), body))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn parse_response(raw: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

/// A multipart body with a `file` part and text fields.
pub fn multipart(file_name: &str, audio: &[u8], fields: &[(&str, &str)]) -> (String, Vec<u8>) {
    let boundary = "utter-test-boundary-7d3f";
    let mut body = Vec::new();
    for (k, v) in fields {
        body.extend(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n")
                .as_bytes(),
        );
    }
    body.extend(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(audio);
    body.extend(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// An API key file in `dir` with `mode` (a key file others can read is refused).
pub fn key_file(dir: &Path, key: &str, mode: u32) -> PathBuf {
    let path = dir.join("key");
    std::fs::write(&path, format!("{key}\n")).unwrap();
    // Windows has no mode bits: there the server does not check them either.
    #[cfg(unix)]
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    #[cfg(not(unix))]
    let _ = mode;
    path
}
