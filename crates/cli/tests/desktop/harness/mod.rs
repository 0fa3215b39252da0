//! What the tests stand on: the X11 desktop and its windows ([`x11`]), the
//! headless sway session ([`sway`]), a running `utter dictate` and one
//! dictation made on it ([`dictate`]), terminals ([`terminal`]), a small
//! disk ([`disk`]) and the speech played into the microphone ([`speech`]);
//! here, the one lock that runs the tests one at a time.

pub mod dictate;
pub mod disk;
pub mod speech;
pub mod sway;
pub mod terminal;
pub mod x11;

use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dictate::HOTKEY;
use x11::desktop;

pub fn wait_until(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A shell that kills `children` once this test process is gone (statics are
/// never dropped, so the shared desktop cannot clean up after itself).
pub fn kill_when_tests_end(children: &[&Child]) -> Child {
    let pids: Vec<String> = children.iter().map(|c| c.id().to_string()).collect();
    let script = format!(
        "while kill -0 {} 2>/dev/null; do sleep 1; done; kill {}",
        std::process::id(),
        pids.join(" ")
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// One test at a time on the shared desktop; keys are released however a test ends.
pub struct Serial(#[allow(dead_code)] MutexGuard<'static, ()>);

impl Drop for Serial {
    fn drop(&mut self) {
        let d = desktop();
        let _ = d.cmd("xdotool").args(["keyup", HOTKEY, "Escape"]).status();
        let _ = Command::new("pkill")
            .args(["-f", "zenity --entry"])
            .status();
    }
}

pub fn serial() -> Serial {
    static LOCK: Mutex<()> = Mutex::new(());
    Serial(LOCK.lock().unwrap_or_else(|e| e.into_inner()))
}
