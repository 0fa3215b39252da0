//! Issue 39's matrix beyond Chromium and xterm (`paste_apps.rs`), on a real
//! X server (Xvfb): Firefox ESR, a GTK 3 editor (Mousepad), a GTK 4 editor
//! (GNOME Text Editor), a Qt editor (FeatherPad) and kitty. What arrived is
//! read back from each app itself, never from Utter's report:
//! - Firefox: its page posts the text area's value to a loopback server at
//!   every `input` event (the DOM's own value);
//! - the editors: their file, saved with Ctrl+S;
//! - kitty: what `cat` wrote to a file.
//!
//! Each app gets every text (accents, quotes, emoji, CJK, and 2,000
//! characters over 40 lines; a terminal gets single lines, as it turns a
//! newline into Enter) twice, pasted with its built-in profile's keys, while
//! the user's clipboard holds an image that must be back after every paste.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use utter_platform::output::{open_sink, OutputConfig, OutputEnv, PasteKeys};
use utter_test_support::firefox;

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/x11_apps.rs"]
mod x11_apps;
use paste_matrix::{paste_every_text, png, settled, Clipboard, FinalNewline, Target};
use x11_apps::{
    clipboard, clipboard_offers, copy, focus, start_xvfb, window, xdotool, CatTerminal, Killed,
};

/// Where an app keeps its settings in these tests: a home of its own, so
/// nothing of the developer's desktop is read or written, and no first-run
/// state is left between runs.
fn private_home(dir: &Path, app: &str) -> PathBuf {
    let home = dir.join(format!("home-{app}"));
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// Clicks into the middle of `window` (the text area of a page, an
/// editor's text view), so keys go to the text.
fn click_into(window: &str) {
    focus(window);
    xdotool(&["mousemove", "--window", window, "400", "300", "click", "1"]);
}

/// Selects everything in the focused text and deletes it.
fn select_all_and_delete(window: &str) {
    focus(window);
    xdotool(&["key", "--clearmodifiers", "ctrl+a", "BackSpace"]);
}

/// Firefox ESR on X11 showing a text area whose every change the page posts.
struct Firefox {
    page: firefox::TextAreaPage,
    window: String,
}

impl Firefox {
    fn start(dir: &Path) -> Self {
        let mut browser = Command::new("firefox-esr");
        browser.env("MOZ_ENABLE_WAYLAND", "0");
        let page = firefox::TextAreaPage::start(browser, dir);
        let window = window(firefox::TITLE);
        click_into(&window);
        Self { page, window }
    }
}

impl Target for Firefox {
    fn name(&self) -> &'static str {
        "Firefox ESR"
    }
    fn focus(&self) {
        focus(&self.window);
    }
    fn clear(&mut self) {
        if !self.read().is_empty() {
            select_all_and_delete(&self.window);
            let left = settled(Duration::from_secs(5), "", || self.read());
            assert_eq!(left, "", "Firefox's text area emptied");
        }
    }
    fn read(&mut self) -> String {
        self.page.value()
    }
}

/// A text editor with a file open; read back by saving it (Ctrl+S).
struct Editor {
    _app: Killed,
    name: &'static str,
    file: PathBuf,
    window: String,
    final_newline: FinalNewline,
}

impl Editor {
    /// `program FILE`, the file named so that the window's title names the
    /// test (`PasteTarget-<tag>.txt`).
    fn start(dir: &Path, name: &'static str, program: &str, args: &[&str], tag: &str) -> Self {
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

/// kitty running `cat` into a file; what came before the last clear is
/// skipped.
struct Kitty {
    terminal: CatTerminal,
    skip: usize,
}

impl Kitty {
    fn start(dir: &Path) -> Self {
        let terminal = CatTerminal::start(
            "kitty",
            &["--title", "PasteTarget-Kitty"],
            &["--config", "NONE"],
            dir,
        );
        Self { terminal, skip: 0 }
    }
}

impl Target for Kitty {
    fn name(&self) -> &'static str {
        "kitty"
    }
    fn focus(&self) {
        focus(&self.terminal.window);
    }
    fn keys(&self) -> PasteKeys {
        // Its built-in profile: terminals paste with Ctrl+Shift+V.
        PasteKeys::CtrlShiftV
    }
    fn multi_line(&self) -> bool {
        false
    }
    fn clear(&mut self) {
        self.skip = self.terminal.text().len();
    }
    fn read(&mut self) -> String {
        self.terminal
            .text()
            .get(self.skip..)
            .unwrap_or("")
            .to_string()
    }
}

/// The X11 clipboard as xclip sees it.
struct XClipboard;

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

/// The apps of the matrix, in the order they are run.
#[derive(Clone, Copy)]
enum App {
    Firefox,
    Mousepad,
    GnomeTextEditor,
    FeatherPad,
    Kitty,
}

const MATRIX: [App; 5] = [
    App::Firefox,
    App::Mousepad,
    App::GnomeTextEditor,
    App::FeatherPad,
    App::Kitty,
];

impl App {
    fn start(self, dir: &Path) -> Box<dyn Target> {
        match self {
            App::Firefox => Box::new(Firefox::start(dir)),
            App::Mousepad => Box::new(Editor::start(
                dir,
                "Mousepad (GTK 3)",
                "mousepad",
                &[],
                "GTK3",
            )),
            App::GnomeTextEditor => Box::new(Editor::start(
                dir,
                "GNOME Text Editor (GTK 4)",
                "gnome-text-editor",
                &["--standalone"],
                "GTK4",
            )),
            App::FeatherPad => Box::new(Editor::start(
                dir,
                "FeatherPad (Qt)",
                "featherpad",
                &[],
                "Qt",
            )),
            App::Kitty => Box::new(Kitty::start(dir)),
        }
    }
}

/// Every app of the matrix, one after the other on one display, each given
/// every text twice; the figures are printed for docs/benchmarks.md.
#[test]
fn pastes_into_firefox_gtk_and_qt_editors_and_kitty_arrive_exactly_and_the_image_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let (_xvfb, _display) = start_xvfb();
    let image = png(dir.path());
    let _user_copy = copy(&image, "image/png");
    // One sink for the whole run, as a dictation session has: after the
    // first paste it is the one serving the user's image.
    let (mut sink, notice) =
        open_sink(&OutputConfig::default(), &OutputEnv::detect(None)).expect("a paste sink");
    assert_eq!(notice, None);
    let mut report = Vec::new();
    for app in MATRIX {
        let mut target = app.start(dir.path());
        let name = target.name();
        let figures = paste_every_text(target.as_mut(), sink.as_mut(), &XClipboard, &image);
        // An editor is read through a save: its figure includes Ctrl+S and
        // the 150 ms given to the file to be written.
        report.push(figures.report(name));
    }
    println!("{}", report.join("\n"));
}
