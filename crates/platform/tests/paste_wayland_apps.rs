//! Issue 39's matrix on Wayland: the apps of the X11 matrix as Wayland
//! clients of a real compositor (headless sway) — Chromium
//! (`--ozone-platform=wayland`, as Chrome and every Electron app run on a
//! Wayland desktop), Firefox ESR, a GTK 3 editor (Mousepad), a GTK 4 editor
//! (GNOME Text Editor), a Qt editor (FeatherPad, Qt's Wayland plugin) and
//! kitty. Utter's Wayland sink (data-control clipboard, virtual keyboard)
//! pastes every text; what arrived is read back from each app itself:
//! - the browsers: the page's text area (DevTools for Chromium; Firefox's
//!   page posts its value to a loopback server);
//! - the editors: their file, saved with Ctrl+S from the test's own virtual
//!   keyboard (`support/wayland_apps.rs`);
//! - kitty: what `cat` wrote to a file.
//!
//! The user's copied PNG must be back on the clipboard after every paste,
//! as `wl-paste` sees it; then the layout text is typed into each app.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use utter_platform::output::{
    open_sink, Delivered, Delivery, OutputConfig, OutputEnv, OutputMethod, PasteKeys, Submit,
};
use utter_test_support::desktop::{wait_until, KilledOnDrop};
use utter_test_support::{chromium, firefox};

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/wayland_apps.rs"]
mod wayland_apps;
use paste_matrix::{paste_every_text, settled, sink, type_layout_text, Target, LAYOUT_TEXT};
use utter_test_support::desktop::png;
use wayland_apps::{titled, Desk, Editor, WaylandClipboard};

struct Chromium<'a> {
    desk: &'a Desk,
    page: chromium::TextAreaPage,
}

impl Target for Chromium<'_> {
    fn name(&self) -> &'static str {
        "Chromium (Wayland)"
    }
    fn focus(&self) {
        self.desk.sway.focus(&titled(chromium::TITLE));
    }
    fn clear(&mut self) {
        self.page.clear();
    }
    fn read(&mut self) -> String {
        self.page.value()
    }
}

struct Firefox<'a> {
    desk: &'a Desk,
    page: firefox::TextAreaPage,
}

impl Target for Firefox<'_> {
    fn name(&self) -> &'static str {
        "Firefox ESR (Wayland)"
    }
    fn focus(&self) {
        self.desk.sway.focus(&titled(firefox::TITLE));
    }
    fn clear(&mut self) {
        if !self.read().is_empty() {
            self.focus();
            self.desk.select_all_and_delete();
            let left = settled(Duration::from_secs(5), "", || self.read());
            assert_eq!(left, "", "Firefox's text area emptied");
        }
    }
    fn read(&mut self) -> String {
        self.page.value()
    }
}

/// kitty as a Wayland client running `cat` into a file (no echo, no line
/// buffering); what came before the last clear is skipped.
struct Kitty<'a> {
    desk: &'a Desk,
    _app: KilledOnDrop,
    out: PathBuf,
    skip: usize,
}

impl<'a> Kitty<'a> {
    const TAG: &'static str = "PasteTarget-Kitty";

    fn start(desk: &'a Desk, dir: &Path) -> Self {
        let sway = &desk.sway;
        let out = dir.join("kitty.txt");
        let app: Child = sway
            .cmd("kitty")
            .args(["--config", "NONE", "--title", Self::TAG, "sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                out.display()
            ))
            .env("HOME", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kitty is installed");
        sway.wait_for_window(Self::TAG, Duration::from_secs(60));
        wait_until("kitty's cat", Duration::from_secs(20), || out.exists());
        Self {
            desk,
            _app: KilledOnDrop(app),
            out,
            skip: 0,
        }
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }
}

impl Target for Kitty<'_> {
    fn name(&self) -> &'static str {
        "kitty (Wayland)"
    }
    fn focus(&self) {
        self.desk.sway.focus(&titled(Self::TAG));
    }
    fn keys(&self) -> PasteKeys {
        // Its built-in profile: terminals paste with Ctrl+Shift+V.
        PasteKeys::CtrlShiftV
    }
    fn multi_line(&self) -> bool {
        false
    }
    fn clear(&mut self) {
        self.skip = self.text().len();
    }
    fn read(&mut self) -> String {
        self.text().get(self.skip..).unwrap_or("").to_string()
    }
}

/// The apps of the matrix, in the order they are run.
#[derive(Clone, Copy)]
enum App {
    Chromium,
    Firefox,
    Mousepad,
    GnomeTextEditor,
    FeatherPad,
    Kitty,
}

const MATRIX: [App; 6] = [
    App::Chromium,
    App::Firefox,
    App::Mousepad,
    App::GnomeTextEditor,
    App::FeatherPad,
    App::Kitty,
];

impl App {
    fn start<'a>(self, desk: &'a Desk, dir: &Path) -> Box<dyn Target + 'a> {
        let sway = &desk.sway;
        match self {
            App::Chromium => {
                let mut browser = sway.cmd("chromium");
                browser.arg("--ozone-platform=wayland");
                let page = chromium::TextAreaPage::start(browser, dir);
                Box::new(Chromium { desk, page })
            }
            App::Firefox => {
                // Firefox refuses root in another user's Wayland session.
                let mut browser = sway.cmd_as_session_user("firefox-esr");
                browser.env("MOZ_ENABLE_WAYLAND", "1");
                let page = firefox::TextAreaPage::start(browser, dir);
                sway.wait_for_window(firefox::TITLE, Duration::from_secs(60));
                Box::new(Firefox { desk, page })
            }
            App::Mousepad => Box::new(Editor::start(
                desk,
                dir,
                "Mousepad (GTK 3, Wayland)",
                "mousepad",
                &[],
                "GTK3",
            )),
            App::GnomeTextEditor => Box::new(Editor::start(
                desk,
                dir,
                "GNOME Text Editor (GTK 4, Wayland)",
                "gnome-text-editor",
                &["--standalone"],
                "GTK4",
            )),
            App::FeatherPad => Box::new(Editor::start(
                desk,
                dir,
                "FeatherPad (Qt, Wayland)",
                "featherpad",
                &[],
                "Qt",
            )),
            App::Kitty => Box::new(Kitty::start(desk, dir)),
        }
    }
}

/// Every app of the matrix, one after the other in one sway session, each
/// given every text twice through one sink (as a dictation session has);
/// the figures are printed for docs/benchmarks.md.
#[test]
fn on_wayland_pastes_into_browsers_gtk_and_qt_editors_and_kitty_arrive_exactly_and_the_image_comes_back(
) {
    let desk = Desk::start();
    // The apps write their files here: open to the session's user (Firefox).
    let dir = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let image = png(dir.path());
    desk.sway.set_clipboard_data("image/png", &image);
    let (mut sink, notice) =
        open_sink(&OutputConfig::default(), &OutputEnv::detect(None)).expect("a paste sink");
    assert_eq!(notice, None, "paste works on sway");
    let mut typing = paste_matrix::sink(OutputMethod::Type);
    let clipboard = WaylandClipboard(&desk.sway);
    let mut report = Vec::new();
    for app in MATRIX {
        let mut target = app.start(&desk, dir.path());
        let name = target.name();
        let figures = paste_every_text(target.as_mut(), sink.as_mut(), &clipboard, &image);
        type_layout_text(target.as_mut(), typing.as_mut());
        report.push(figures.report(name));
    }
    println!("{}", report.join("\n"));
}

/// Typing (`--output type`) on Wayland under US, German and French layouts
/// (sway's keyboard layout switched while the sinks live, as a user does):
/// the characters arrive as written in Chromium and in kitty — Utter's
/// virtual keyboard brings its own keymap, uploaded for every text, since
/// the compositor applies a layout change to every keyboard, virtual ones
/// included. A paste sink made before the changes still pastes after them.
#[test]
fn on_wayland_typed_text_arrives_exactly_under_german_and_french_layouts() {
    let desk = Desk::start();
    let dir = tempfile::tempdir().unwrap();
    let mut chromium = App::Chromium.start(&desk, dir.path());
    let mut kitty = App::Kitty.start(&desk, dir.path());
    let (mut typing, mut pasting) = (sink(OutputMethod::Type), sink(OutputMethod::Paste));
    let how = |method, target: &dyn Target| Delivery {
        method,
        paste_keys: target.keys(),
        trailing_space: false,
        submit: Submit::None,
    };
    // Line breaks go to the real Enter key: two paragraphs into the page.
    let paragraphs = "First line, typed.\nSecond line: ok!";
    chromium.clear();
    chromium.focus();
    typing
        .deliver(paragraphs, &how(OutputMethod::Type, chromium.as_ref()))
        .expect("typed");
    let arrived = settled(Duration::from_secs(10), paragraphs, || chromium.read());
    assert_eq!(arrived, paragraphs, "two lines typed into Chromium");
    for layout in ["us", "de", "fr"] {
        desk.sway
            .swaymsg(&["input", "type:keyboard", "xkb_layout", layout]);
        for target in [&mut chromium, &mut kitty] {
            let name = target.name();
            for (method, sink) in [
                (OutputMethod::Type, &mut typing),
                (OutputMethod::Paste, &mut pasting),
            ] {
                target.clear();
                target.focus();
                let outcome = sink
                    .deliver(LAYOUT_TEXT, &how(method, target.as_ref()))
                    .unwrap_or_else(|e| panic!("{method:?} into {name} under {layout}: {e}"));
                let expected = match method {
                    OutputMethod::Type => Delivered::Typed,
                    _ => Delivered::Pasted,
                };
                assert_eq!(outcome.delivered, expected, "{name} under {layout}");
                let arrived = settled(Duration::from_secs(10), LAYOUT_TEXT, || target.read());
                assert_eq!(
                    arrived, LAYOUT_TEXT,
                    "{method:?} into {name} under {layout}"
                );
            }
        }
    }
}
