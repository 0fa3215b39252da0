//! A running `utter dictate --events json`, one dictation made on it as a
//! user makes it ([`Take`]), and `utter ptt`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver};
use serde_json::Value;

use super::x11::Desktop;

/// A running `utter dictate --events json`.
pub struct Dictate {
    pub child: Child,
    events: Receiver<Value>,
    pub lines: Receiver<String>,
    /// Every event `expect` and `no_event` have read, in order.
    pub seen: std::cell::RefCell<Vec<Value>>,
    /// Its stderr so far (also echoed to the test's), for `stop` to show.
    stderr: Arc<Mutex<String>>,
    stderr_reader: JoinHandle<()>,
}

impl Dictate {
    pub fn start(d: &Desktop, recordings: &Path, extra: &[&str]) -> Self {
        Self::start_with_env(d, recordings, extra, &[])
    }

    pub fn start_with_env(
        d: &Desktop,
        recordings: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        Self::spawn(d.cmd(env!("CARGO_BIN_EXE_utter")), recordings, extra, env)
    }

    /// `utter dictate` that cannot write a file past `kb` KiB (`ulimit -f`,
    /// with SIGXFSZ ignored so the write fails as on a full disk).
    pub fn start_with_file_limit(d: &Desktop, recordings: &Path, extra: &[&str], kb: u64) -> Self {
        let mut cmd = d.cmd("bash");
        cmd.args([
            "-c",
            &format!("trap '' XFSZ; ulimit -f {kb}; exec \"$0\" \"$@\""),
            env!("CARGO_BIN_EXE_utter"),
        ]);
        Self::spawn(cmd, recordings, extra, &[])
    }

    fn spawn(mut cmd: Command, recordings: &Path, extra: &[&str], env: &[(&str, &str)]) -> Self {
        // An empty value removes the variable (e.g. DISPLAY in a Wayland-only session).
        for (name, _) in env.iter().filter(|(_, v)| v.is_empty()) {
            cmd.env_remove(name);
        }
        // The expected texts are whisper tiny.en's: named, since a new installation
        // dictates with the model recommended for its computer.
        let model: &[&str] = if extra.contains(&"--model") {
            &[]
        } else {
            &["--model", "whisper-tiny.en"]
        };
        let mut child = cmd
            .args(["dictate", "--events", "json", "--recordings-dir"])
            .arg(recordings)
            .args(extra)
            .args(model)
            .envs(env.iter().filter(|(_, v)| !v.is_empty()).copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_reader = {
            let (pipe, stderr) = (child.stderr.take().unwrap(), stderr.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    eprintln!("{line}");
                    let mut all = stderr.lock().unwrap();
                    all.push_str(&line);
                    all.push('\n');
                }
            })
        };
        let (tx, events) = unbounded();
        let (line_tx, lines) = unbounded();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) if v.get("event").is_some() => {
                        let _ = tx.send(v);
                    }
                    _ => {
                        let _ = line_tx.send(line);
                    }
                }
            }
        });
        let me = Self {
            child,
            events,
            lines,
            seen: Default::default(),
            stderr,
            stderr_reader,
        };
        me.expect("ready", Duration::from_secs(60));
        me
    }

    /// Waits for the next event of this kind (others are skipped), failing on errors.
    pub fn expect(&self, kind: &str, timeout: Duration) -> Value {
        self.expect_past(kind, timeout, |_| false)
    }

    /// `expect`, skipping the `error` events that `expected` accepts too.
    pub fn expect_past(
        &self,
        kind: &str,
        timeout: Duration,
        expected: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = self
                .events
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{kind}` event within {timeout:?}"));
            self.seen.borrow_mut().push(ev.clone());
            if ev["event"] == kind {
                return ev;
            }
            assert!(ev["event"] != "error" || expected(&ev), "{ev}");
        }
    }

    /// The next `text_delivered`, which must say nothing went wrong: an
    /// `error` there means the engine failed on some of the audio.
    pub fn delivered(&self, timeout: Duration) -> Value {
        let ev = self.expect("text_delivered", timeout);
        assert!(ev["error"].is_null(), "delivered with an error: {ev}");
        ev
    }

    /// The events of this kind read so far, in order.
    pub fn seen(&self, kind: &str) -> Vec<Value> {
        let seen = self.seen.borrow();
        seen.iter()
            .filter(|ev| ev["event"] == kind)
            .cloned()
            .collect()
    }

    pub fn no_event(&self, kind: &str, wait: Duration) {
        let deadline = Instant::now() + wait;
        while let Ok(ev) = self.events.recv_deadline(deadline) {
            self.seen.borrow_mut().push(ev.clone());
            assert_ne!(ev["event"], kind, "unexpected {ev}");
        }
    }

    /// Stops it as Ctrl+C does. It must exit cleanly: a crash or a non-zero
    /// exit at shutdown fails the test, with its stderr.
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "`utter dictate` still running 30 s after SIGINT\n--- its stderr ---\n{}",
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // The rest of its stderr (a worker it left behind could hold the pipe open).
        let drained = Instant::now() + Duration::from_secs(2);
        while !self.stderr_reader.is_finished() && Instant::now() < drained {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            status.success(),
            "`utter dictate` exited with {status} at shutdown\n--- its stderr ---\n{}",
            self.stderr.lock().unwrap()
        );
    }
}

/// A test that fails must not leave its dictation holding the hotkey and
/// the ptt socket for the next ones.
impl Drop for Dictate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub const HOTKEY: &str = "ctrl+shift+space";

type Hook<'a> = Box<dyn FnOnce(&Dictate) + 'a>;

/// Whether `ev`'s message contains each of `parts`.
pub fn says(ev: &Value, parts: &[&str]) -> bool {
    let message = ev["message"].as_str().unwrap_or_default();
    parts.iter().all(|p| message.contains(p))
}

/// One dictation as a user makes it: press the key, wait for
/// `recording_started`, speak, release, wait for `recording_stopped` and
/// `text_delivered`. An `error` event on the way fails it unless declared
/// with [`Take::error_before`], and so does an `error` in `text_delivered`
/// (a failed engine must not pass as a short text) unless [`Take::failing`]
/// expects one. The hooks are for tests that do more between the steps.
pub struct Take<'a> {
    d: &'a Desktop,
    speech: &'a Path,
    press: Box<dyn Fn() + 'a>,
    release: Box<dyn Fn() + 'a>,
    started: Option<Hook<'a>>,
    spoken: Option<Hook<'a>>,
    /// (the event it comes before, what its message says)
    errors: Vec<(&'a str, &'a [&'a str])>,
    failing: Option<&'a str>,
}

impl<'a> Take<'a> {
    /// Holds the hotkey down while `speech` plays.
    pub fn hotkey(d: &'a Desktop, speech: &'a Path) -> Self {
        Self::keys(
            d,
            speech,
            move || d.xdotool(&["keydown", HOTKEY]),
            move || d.xdotool(&["keyup", HOTKEY]),
        )
    }

    /// Taps the hotkey to start and again to stop (toggle mode).
    pub fn toggle(d: &'a Desktop, speech: &'a Path) -> Self {
        let tap = move || d.xdotool(&["key", HOTKEY]);
        Self::keys(d, speech, tap, tap)
    }

    /// Presses and releases with these (`utter ptt press`, ...).
    pub fn keys(
        d: &'a Desktop,
        speech: &'a Path,
        press: impl Fn() + 'a,
        release: impl Fn() + 'a,
    ) -> Self {
        Self {
            d,
            speech,
            press: Box::new(press),
            release: Box::new(release),
            started: None,
            spoken: None,
            errors: Vec::new(),
            failing: None,
        }
    }

    /// Runs once `recording_started` has come, before the speech.
    pub fn started(mut self, hook: impl FnOnce(&Dictate) + 'a) -> Self {
        self.started = Some(Box::new(hook));
        self
    }

    /// Runs after the speech, before the release.
    pub fn spoken(mut self, hook: impl FnOnce(&Dictate) + 'a) -> Self {
        self.spoken = Some(Box::new(hook));
        self
    }

    /// An `error` event whose message contains each of `parts` comes before
    /// the event `kind` (`recording_started`, `recording_stopped` or
    /// `text_delivered`).
    pub fn error_before(mut self, kind: &'a str, parts: &'a [&'a str]) -> Self {
        self.errors.push((kind, parts));
        self
    }

    /// `text_delivered` carries an `error` containing `message`.
    pub fn failing(mut self, message: &'a str) -> Self {
        self.failing = Some(message);
        self
    }

    /// Makes the dictation on `dictate`; returns its `text_delivered`.
    pub fn run(self, dictate: &Dictate) -> Value {
        let errors = self.errors;
        let declared = |ev: &Value| errors.iter().any(|(_, parts)| says(ev, parts));
        let errors_before = dictate.seen("error").len();
        // Waits for `kind`, then checks the errors declared to come before it.
        let reach = |kind: &str, timeout: Duration| {
            let ev = dictate.expect_past(kind, timeout, declared);
            let seen = dictate.seen("error").split_off(errors_before);
            for (_, parts) in errors.iter().filter(|(before, _)| *before == kind) {
                assert!(
                    seen.iter().any(|e| says(e, parts)),
                    "no error saying {parts:?} before {ev}; errors: {seen:?}"
                );
            }
            ev
        };
        (self.press)();
        reach("recording_started", Duration::from_secs(5));
        if let Some(hook) = self.started {
            hook(dictate);
        }
        self.d.speak(self.speech);
        if let Some(hook) = self.spoken {
            hook(dictate);
        }
        (self.release)();
        reach("recording_stopped", Duration::from_secs(5));
        let delivered = reach("text_delivered", Duration::from_secs(60));
        match self.failing {
            None => assert!(
                delivered["error"].is_null(),
                "delivered with an error: {delivered}"
            ),
            Some(message) => assert!(
                delivered["error"]
                    .as_str()
                    .is_some_and(|e| e.contains(message)),
                "expected the error `{message}` in {delivered}"
            ),
        }
        delivered
    }
}

/// `utter ptt ARG` in the test desktop's session; its exit code and stderr.
pub fn ptt(d: &Desktop, arg: &str) -> (Option<i32>, String) {
    let out = d
        .cmd(env!("CARGO_BIN_EXE_utter"))
        .args(["ptt", arg])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
