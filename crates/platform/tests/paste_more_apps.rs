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
//! the user's clipboard holds an image that must be back after every paste;
//! then the layout text (accents, AltGr symbols, CJK) typed (`--output type`).
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use utter_platform::output::{open_sink, OutputConfig, OutputEnv, OutputMethod, PasteKeys};
use utter_test_support::firefox;

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/x11_apps.rs"]
mod x11_apps;
use paste_matrix::{paste_every_text, settled, type_layout_text, Target};
use utter_test_support::desktop::png;
use utter_test_support::x11_clipboard::copy;
use x11_apps::{
    click_into, focus, select_all_and_delete, start_xvfb, window, CatTerminal, Editor, XClipboard,
};

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
/// every text twice, then the layout text typed; the figures are printed
/// for docs/benchmarks.md.
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
    let mut typing = paste_matrix::sink(OutputMethod::Type);
    let mut report = Vec::new();
    for app in MATRIX {
        let mut target = app.start(dir.path());
        let name = target.name();
        let figures = paste_every_text(target.as_mut(), sink.as_mut(), &XClipboard, &image);
        type_layout_text(target.as_mut(), typing.as_mut());
        // An editor is read through a save: its figure includes Ctrl+S and
        // the 150 ms given to the file to be written.
        report.push(figures.report(name));
    }
    println!("{}", report.join("\n"));
}
