//! The real `utter dictate` on a desktop of its own (Xvfb + a PulseAudio
//! virtual microphone, from `utter_test_support::desktop`), read through its
//! JSON events: for the tests that count what it costs and what reaches its
//! microphone. Linux only (/proc, PulseAudio).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver};
use serde_json::Value;
use utter_test_support::desktop::{Display, SoundServer};

/// The hotkey every such dictation listens on.
pub const HOTKEY: &str = "ctrl+shift+F10";

/// `utter dictate --events json` on a desktop of its own.
pub struct Dictate {
    child: Child,
    events: Receiver<Value>,
    display: Display,
    sound: SoundServer,
    ptt_socket: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Dictate {
    /// Started with `extra` arguments, on [`HOTKEY`]; returns at its `ready` event.
    pub fn start(extra: &[&str]) -> Self {
        Self::start_with_env(extra, &[])
    }

    pub fn start_with_env(extra: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let display = Display::start();
        let sound = SoundServer::start(&dir.path().join("runtime"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_utter"))
            .args(["dictate", "--events", "json", "--output", "stdout"])
            .args(["--hotkey", HOTKEY, "--recordings-dir"])
            .arg(dir.path().join("recordings"))
            .args(extra)
            .env("DISPLAY", display.name())
            .env("XDG_RUNTIME_DIR", sound.runtime_dir())
            .env("UTTER_PTT_SOCKET", dir.path().join("ptt.sock"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (tx, events) = unbounded();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let me = Self {
            child,
            events,
            display,
            sound,
            ptt_socket: dir.path().join("ptt.sock"),
            _dir: dir,
        };
        me.expect("ready", Duration::from_secs(120));
        me
    }

    /// The next event of `kind`, skipping others; panics after `timeout`.
    pub fn expect(&self, kind: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = self
                .events
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{kind}` event within {timeout:?}"));
            if ev["event"] == kind {
                return ev;
            }
        }
    }

    pub fn xdotool(&self, args: &[&str]) {
        let ok = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", self.display.name())
            .status()
            .expect("xdotool is installed")
            .success();
        assert!(ok, "xdotool {args:?}");
    }

    /// CPU ticks (utime + stime) of the process and its descendants.
    pub fn tree_ticks(&self) -> u64 {
        let mut stats = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().map_while(Result::ok) {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // The fields after the command name, which may hold spaces.
            let Some((_, rest)) = stat.rsplit_once(") ") else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // rest[1] is the parent, rest[11..13] utime and stime.
            stats.push((pid, num(1) as u32, num(11) + num(12)));
        }
        let mut tree = vec![self.child.id()];
        let mut grew = true;
        while grew {
            grew = false;
            for (pid, parent, _) in &stats {
                if tree.contains(parent) && !tree.contains(pid) {
                    tree.push(*pid);
                    grew = true;
                }
            }
        }
        stats
            .iter()
            .filter(|(pid, ..)| tree.contains(pid))
            .map(|(.., ticks)| ticks)
            .sum()
    }

    /// Capture streams this process has open on the sound server.
    pub fn capture_streams(&self) -> usize {
        let out = Command::new("pactl")
            .args(["list", "source-outputs"])
            .env("XDG_RUNTIME_DIR", self.sound.runtime_dir())
            .output()
            .expect("pactl is installed");
        let mine = format!("application.process.id = \"{}\"", self.child.id());
        String::from_utf8_lossy(&out.stdout).matches(&mine).count()
    }

    /// Sends `command` (`press`, `release`…) over the push-to-talk socket,
    /// as `utter ptt` does, and waits for its `ok`: the press reaches the
    /// service within a millisecond or two, where an X key event from a
    /// freshly started xdotool takes tens to hundreds on a busy machine.
    pub fn ptt(&self, command: &str) {
        use std::io::Write;
        let mut socket = std::os::unix::net::UnixStream::connect(&self.ptt_socket)
            .expect("the dictation listens on its ptt socket");
        socket.write_all(format!("{command}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        BufReader::new(socket).read_line(&mut answer).unwrap();
        assert_eq!(answer.trim(), "ok", "ptt {command}");
    }

    /// The `utter dictate` process's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The PulseAudio server whose virtual microphone it listens to.
    pub fn sound(&self) -> &SoundServer {
        &self.sound
    }
}

impl Drop for Dictate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
