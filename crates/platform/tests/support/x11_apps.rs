//! What the paste tests into real X11 apps share: a private Xvfb, xdotool,
//! the clipboard as `xclip` sees it, a text editor read back through its
//! saved file, and a terminal whose `cat` writes what it is given to a file
//! (the texts, the copied image and the paste loop are `paste_matrix.rs`'s,
//! shared with Wayland: a test using this module declares that one too).
//! Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::paste_matrix::{settled, Clipboard, FinalNewline, Target};
use utter_test_support::desktop::Display;
pub use utter_test_support::desktop::{wait_until, KilledOnDrop as Killed};
use utter_test_support::x11_clipboard::{clipboard, clipboard_offers};

/// Starts Xvfb on a free display and points this process at it (and away
/// from any Wayland session, a test's before it included).
pub fn start_xvfb() -> (Display, String) {
    let display = Display::start();
    let name = display.name().to_string();
    std::env::set_var("DISPLAY", &name);
    for wayland in ["WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "SWAYSOCK"] {
        std::env::remove_var(wayland);
    }
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

/// Where an app keeps its settings in these tests: a home of its own, so
/// nothing of the developer's desktop is read or written, and no first-run
/// state is left between runs.
pub fn private_home(dir: &Path, app: &str) -> PathBuf {
    let home = dir.join(format!("home-{app}"));
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// Clicks into the middle of `window` (the text area of a page, an
/// editor's text view), so keys go to the text.
pub fn click_into(window: &str) {
    focus(window);
    xdotool(&["mousemove", "--window", window, "400", "300", "click", "1"]);
}

/// Selects everything in the focused text and deletes it.
pub fn select_all_and_delete(window: &str) {
    focus(window);
    xdotool(&["key", "--clearmodifiers", "ctrl+a", "BackSpace"]);
}

/// A text editor with a file open; read back by saving it (Ctrl+S).
pub struct Editor {
    _app: Killed,
    name: &'static str,
    file: PathBuf,
    window: String,
    final_newline: FinalNewline,
}

impl Editor {
    /// `program ARGS FILE`, the file named so that the window's title names
    /// the test (`PasteTarget-<tag>.txt`).
    pub fn start(dir: &Path, name: &'static str, program: &str, args: &[&str], tag: &str) -> Self {
        let final_newline = FinalNewline::of(program);
        let file = dir.join(format!("PasteTarget-{tag}.txt"));
        std::fs::write(&file, "").unwrap();
        let app = Command::new(program)
            .args(args)
            .arg(&file)
            .env("HOME", private_home(dir, tag))
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} is installed ({program}): {e}"));
        let window = window(&format!("PasteTarget-{tag}"));
        click_into(&window);
        Self {
            _app: Killed(app),
            name,
            file,
            window,
            final_newline,
        }
    }
}

impl Target for Editor {
    fn name(&self) -> &'static str {
        self.name
    }
    fn focus(&self) {
        focus(&self.window);
    }
    fn after_paste(&self, text: &str) -> String {
        self.final_newline.after_paste(text)
    }
    fn clear(&mut self) {
        select_all_and_delete(&self.window);
        let left = settled(Duration::from_secs(10), "", || self.read());
        assert_eq!(left, "", "{} emptied", self.name);
    }
    fn read(&mut self) -> String {
        focus(&self.window);
        xdotool(&["key", "--clearmodifiers", "ctrl+s"]);
        std::thread::sleep(Duration::from_millis(150));
        let saved = std::fs::read_to_string(&self.file).unwrap_or_default();
        self.final_newline.text_of(saved)
    }
}

/// The X11 clipboard as xclip sees it.
pub struct XClipboard;

impl Clipboard for XClipboard {
    fn offers(&self, mime: &str) -> bool {
        clipboard_offers(mime)
    }
    fn data(&self, mime: &str) -> Vec<u8> {
        clipboard(mime)
    }
    fn offered(&self) -> String {
        String::from_utf8_lossy(&clipboard("TARGETS")).into_owned()
    }
}
