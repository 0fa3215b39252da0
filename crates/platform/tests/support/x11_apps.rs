//! What the paste tests into real X11 apps share: a private Xvfb, xdotool,
//! the clipboard as `xclip` sees it, and a terminal whose `cat` writes what
//! it is given to a file (the texts and the copied image are
//! `paste_matrix.rs`'s, shared with Wayland). Each test binary uses part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use utter_test_support::desktop::Display;
pub use utter_test_support::desktop::{wait_until, KilledOnDrop as Killed};

/// Starts Xvfb on a free display and points this process at it (and away
/// from any Wayland display).
pub fn start_xvfb() -> (Display, String) {
    let display = Display::start();
    let name = display.name().to_string();
    std::env::set_var("DISPLAY", &name);
    std::env::remove_var("WAYLAND_DISPLAY");
    (display, name)
}

pub fn xdotool(args: &[&str]) -> String {
    let out = Command::new("xdotool")
        .args(args)
        .output()
        .expect("xdotool is installed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The window named `name`, once it is mapped.
pub fn window(name: &str) -> String {
    let mut id = String::new();
    wait_until(
        &format!("the window {name}"),
        Duration::from_secs(60),
        || {
            id = xdotool(&["search", "--onlyvisible", "--name", name])
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            !id.is_empty()
        },
    );
    id
}

pub fn focus(window: &str) {
    xdotool(&["windowfocus", "--sync", window]);
}

/// What `xclip` reads from the clipboard as `target`.
pub fn clipboard(target: &str) -> Vec<u8> {
    Command::new("xclip")
        .args(["-selection", "clipboard", "-o", "-t", target])
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default()
}

/// Whether the clipboard offers `target` (in its `TARGETS`).
pub fn clipboard_offers(target: &str) -> bool {
    clipboard("TARGETS")
        .split(|&b| b == b'\n')
        .any(|t| t == target.as_bytes())
}

/// Puts `data` on the clipboard as `target`, served by xclip as a user's copy is.
pub fn copy(data: &[u8], target: &str) -> Killed {
    let mut child = Command::new("xclip")
        .args(["-selection", "clipboard", "-t", target, "-i", "-quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xclip is installed");
    child.stdin.take().unwrap().write_all(data).unwrap();
    wait_until("xclip to own the clipboard", Duration::from_secs(5), || {
        clipboard(target) == data
    });
    Killed(child)
}

/// A terminal running `cat` into a file, with no line buffering and no
/// echo: the file is what the terminal gave its program.
pub struct CatTerminal {
    _child: Killed,
    out: PathBuf,
    pub window: String,
}

impl CatTerminal {
    /// `terminal` with `title_args` (how it is given the window title
    /// `title`) and `run_args` (how it is told the program to run, which
    /// is then `sh -c …`).
    pub fn start(terminal: &str, title_args: &[&str], run_args: &[&str], dir: &Path) -> Self {
        let out = dir.join(format!("{terminal}.txt"));
        let child = Command::new(terminal)
            .args(title_args)
            .args(run_args)
            .args(["sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                out.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{terminal} is installed: {e}"));
        let title = title_args.last().expect("a title");
        let window = window(title);
        wait_until(
            &format!("{terminal}'s cat"),
            Duration::from_secs(20),
            || out.exists(),
        );
        Self {
            _child: Killed(child),
            out,
            window,
        }
    }

    /// xterm, titled `PasteTarget-XTerm`.
    pub fn xterm(dir: &Path) -> Self {
        Self::start("xterm", &["-title", "PasteTarget-XTerm"], &["-e"], dir)
    }

    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }
}
