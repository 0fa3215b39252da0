//! The X11 desktop: Xvfb, a PulseAudio virtual microphone, xdotool, the
//! clipboard and PRIMARY, and a zenity entry window to paste into.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use utter_test_support::desktop::{Display, SoundServer};

use super::speech::clip;

/// The virtual desktop: X display + PulseAudio runtime dir + speech fixtures.
pub struct Desktop {
    display: Display,
    pub runtime_dir: PathBuf,
    pub fixtures: PathBuf,
    _sound: SoundServer,
}

pub fn desktop() -> &'static Desktop {
    static DESKTOP: OnceLock<Desktop> = OnceLock::new();
    DESKTOP.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("utter-desktop-{}", std::process::id()));
        let fixtures = base.join("fixtures");
        std::fs::create_dir_all(&fixtures).unwrap();
        // Both go away with this test process (statics are never dropped:
        // each has its watchdog).
        let display = Display::start();
        let sound = SoundServer::start(&base.join("runtime"));
        // ~28 s of speech: the five LibriVox clips, each followed by the
        // short pause a person dictating makes between sentences.
        let mut padded = Vec::new();
        for i in 0..5 {
            let out = fixtures.join(format!("clip{i}.wav"));
            let ok = Command::new("sox")
                .arg(clip(i))
                .arg(&out)
                .args(["pad", "0", "0.7"])
                .status()
                .unwrap()
                .success();
            assert!(ok);
            padded.push(out);
        }
        let long = fixtures.join("speech-25s.wav");
        assert!(Command::new("sox")
            .args(&padded)
            .arg(&long)
            .status()
            .unwrap()
            .success());
        Desktop {
            display,
            runtime_dir: sound.runtime_dir().to_path_buf(),
            fixtures,
            _sound: sound,
        }
    })
}

impl Desktop {
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("DISPLAY", self.display.name())
            .env("XDG_RUNTIME_DIR", &self.runtime_dir);
        c
    }

    pub fn xdotool(&self, args: &[&str]) {
        let ok = self.cmd("xdotool").args(args).status().unwrap().success();
        assert!(ok, "xdotool {args:?}");
    }

    /// The first window xdotool finds with `search` (e.g. `["--name",
    /// title]`), once there is one; panics naming `what` after `timeout`.
    pub fn wait_for_window(&self, what: &str, search: &[&str], timeout: Duration) -> String {
        let mut window = String::new();
        super::wait_until(what, timeout, || {
            let found = self
                .cmd("xdotool")
                .arg("search")
                .args(search)
                .output()
                .unwrap();
            window = String::from_utf8_lossy(&found.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            !window.is_empty()
        });
        window
    }

    /// Plays a file into the virtual microphone; returns when it has played.
    pub fn speak(&self, file: &Path) {
        let ok = self.play(file).wait().unwrap().success();
        assert!(ok, "paplay {}", file.display());
    }

    /// Starts playing a file into the virtual microphone.
    pub fn play(&self, file: &Path) -> Child {
        self.cmd("paplay")
            .args(["--latency-msec=200", "--device=vmic_sink"])
            .arg(file)
            .spawn()
            .unwrap()
    }

    /// Puts `text` on the clipboard, owned by an xclip process (as another app would).
    pub fn set_clipboard(&self, text: &str) -> ClipboardOwner {
        use std::io::Write;
        let mut child = self
            .cmd("xclip")
            .args(["-selection", "clipboard", "-quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        ClipboardOwner(child)
    }

    pub fn clipboard(&self) -> String {
        let out = self
            .cmd("xclip")
            .args(["-selection", "clipboard", "-o"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Puts `text` in the PRIMARY selection (as selecting text in an app does).
    pub fn set_primary(&self, text: &str) -> ClipboardOwner {
        use std::io::Write;
        let mut child = self
            .cmd("xclip")
            .args(["-selection", "primary", "-quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        ClipboardOwner(child)
    }

    pub fn primary(&self) -> String {
        let out = self
            .cmd("xclip")
            .args(["-selection", "primary", "-o"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

pub struct ClipboardOwner(Child);

impl Drop for ClipboardOwner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A zenity entry window that receives keystrokes and pastes.
pub struct Target {
    child: Child,
}

impl Target {
    pub fn open(d: &Desktop, title: &str) -> Self {
        Self::open_with_text(d, title, "")
    }

    /// The entry starts out holding `text`.
    pub fn open_with_text(d: &Desktop, title: &str, text: &str) -> Self {
        let log = d.runtime_dir.join(format!("zenity-{title}.log"));
        let child = d
            .cmd("zenity")
            .args([
                "--entry",
                &format!("--title={title}"),
                "--text=dictate here",
                &format!("--entry-text={text}"),
            ])
            // GTK looks for the accessibility bus first, which can stall a
            // start for many seconds where there is no session bus.
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("zenity is installed");
        let deadline = Instant::now() + Duration::from_secs(30);
        let window = loop {
            let out = d
                .cmd("xdotool")
                .args(["search", "--name", title])
                .output()
                .unwrap();
            if let Some(id) = String::from_utf8_lossy(&out.stdout).lines().next() {
                break id.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for the zenity window; its log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(500));
        d.xdotool(&["windowfocus", "--sync", &window]);
        Self { child }
    }

    /// What the entry held when something else pressed Return in it (the
    /// dialog then closes and prints it); `None` while it is still open
    /// after `wait`.
    pub fn sent_within(&mut self, wait: Duration) -> Option<String> {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                let mut out = String::new();
                std::io::Read::read_to_string(self.child.stdout.as_mut().unwrap(), &mut out)
                    .unwrap();
                return Some(out.trim_end_matches('\n').to_string());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Presses Return and returns what the entry held.
    pub fn submit(mut self, d: &Desktop) -> String {
        d.xdotool(&["key", "Return"]);
        let out = std::mem::replace(&mut self.child, Command::new("true").spawn().unwrap());
        String::from_utf8_lossy(&out.wait_with_output().unwrap().stdout)
            .trim()
            .to_string()
    }
}
