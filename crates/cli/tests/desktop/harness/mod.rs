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

use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use dictate::HOTKEY;
use x11::desktop;

pub use utter_test_support::desktop::{kill_when_tests_end, wait_until};

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
