//! What the paste tests into real Wayland apps share: a headless sway
//! session this process belongs to, with a virtual keyboard of the test's
//! own (enigo's, as Utter's is, but a keyboard of its own: wtype's lives for
//! one command, and GTK ignores its Ctrl), the clipboard as `wl-paste` sees
//! it, and a text editor read back through its saved file. A test using
//! this module declares `paste_matrix.rs` too.
#![allow(dead_code)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use enigo::{Direction, Enigo, Key, Keyboard, Settings};
use utter_platform::desktop::DesktopSession;
use utter_test_support::desktop::KilledOnDrop;
use utter_test_support::sway::Sway;

use crate::paste_matrix::{settled, Clipboard, FinalNewline, Target};

/// The Wayland clipboard as wl-paste sees it.
pub struct WaylandClipboard<'a>(pub &'a Sway);

impl Clipboard for WaylandClipboard<'_> {
    fn offers(&self, mime: &str) -> bool {
        self.0.clipboard_types().iter().any(|t| t == mime)
    }
    fn data(&self, mime: &str) -> Vec<u8> {
        self.0.clipboard_data(mime)
    }
    fn offered(&self) -> String {
        self.0.clipboard_types().join(", ")
    }
}

/// The sway session and a virtual keyboard of the test's own, made once:
/// apps bind a keyboard when it appears, so one made per key press is gone
/// before they listen.
pub struct Desk {
    pub sway: Sway,
    keys: RefCell<Enigo>,
    /// One desk at a time in a test binary: each points the process's
    /// environment at its own session.
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl Desk {
    /// Starts sway, makes this process a program of its session (Utter's
    /// sink connects to the compositor the environment names) and makes
    /// the test's keyboard.
    pub fn start() -> Self {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let sway = Sway::start();
        for (key, value) in sway.env() {
            std::env::set_var(key, value);
        }
        std::env::remove_var("DISPLAY");
        let session = DesktopSession::detect();
        assert_eq!(session.compositor(), Some("sway"), "{session}");
        let keys = Enigo::new(&Settings {
            // Only the Wayland virtual keyboard (no XWayland here).
            x11_display: Some("utter-test:no-x11".into()),
            ..Settings::default()
        })
        .expect("a virtual keyboard on sway");
        Desk {
            sway,
            keys: RefCell::new(keys),
            _one_at_a_time: guard,
        }
    }

    /// Ctrl+`key` into the focused window.
    pub fn ctrl(&self, key: char) {
        let mut keys = self.keys.borrow_mut();
        keys.key(Key::Control, Direction::Press).unwrap();
        let pressed = keys.key(Key::Unicode(key), Direction::Click);
        keys.key(Key::Control, Direction::Release).unwrap();
        pressed.unwrap();
    }

    /// Selects everything in the focused text and deletes it.
    pub fn select_all_and_delete(&self) {
        self.ctrl('a');
        let mut keys = self.keys.borrow_mut();
        keys.key(Key::Backspace, Direction::Click).unwrap();
    }
}

/// The sway criteria for the window titled with `tag`.
pub fn titled(tag: &str) -> String {
    format!("title=\"{tag}\"")
}

/// A text editor with a file open; read back by saving it (Ctrl+S).
pub struct Editor<'a> {
    desk: &'a Desk,
    _app: KilledOnDrop,
    name: &'static str,
    tag: String,
    file: PathBuf,
    final_newline: FinalNewline,
}

impl<'a> Editor<'a> {
    /// `program ARGS FILE` as a Wayland client, the file named so that the
    /// window's title names the test (`PasteTarget-<tag>.txt`).
    pub fn start(
        desk: &'a Desk,
        dir: &Path,
        name: &'static str,
        program: &str,
        args: &[&str],
        tag: &str,
    ) -> Self {
        let tag = format!("PasteTarget-{tag}");
        let file = dir.join(format!("{tag}.txt"));
        std::fs::write(&file, "").unwrap();
        let home = dir.join(format!("home-{tag}"));
        std::fs::create_dir_all(&home).unwrap();
        let sway = &desk.sway;
        let app = sway
            .cmd(program)
            .args(args)
            .arg(&file)
            .env("HOME", home)
            .env("GDK_BACKEND", "wayland")
            // GTK 4's GL renderer needs a GPU the headless compositor has not.
            .env("GSK_RENDERER", "cairo")
            .env("QT_QPA_PLATFORM", "wayland")
            // LibreOffice's GTK 3 plugin (its own X11 one by default).
            .env("SAL_USE_VCLPLUGIN", "gtk3")
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} is installed ({program}): {e}"));
        sway.wait_for_window(&tag, Duration::from_secs(60));
        let editor = Self {
            desk,
            _app: KilledOnDrop(app),
            name,
            tag,
            file,
            final_newline: FinalNewline::of(program),
        };
        editor.focus();
        editor
    }
}

impl Target for Editor<'_> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn focus(&self) {
        self.desk.sway.focus(&titled(&self.tag));
    }
    fn after_paste(&self, text: &str) -> String {
        self.final_newline.after_paste(text)
    }
    fn clear(&mut self) {
        self.focus();
        self.desk.select_all_and_delete();
        let left = settled(Duration::from_secs(10), "", || self.read());
        assert_eq!(left, "", "{} emptied", self.name);
    }
    fn read(&mut self) -> String {
        self.focus();
        self.desk.ctrl('s');
        std::thread::sleep(Duration::from_millis(150));
        let saved = std::fs::read_to_string(&self.file).unwrap_or_default();
        self.final_newline.text_of(saved)
    }
}
