//! Issue 39: a spoken dictation into each app of the X11 paste matrix with
//! no flag — Firefox ESR, Mousepad (GTK 3), GNOME Text Editor (GTK 4),
//! FeatherPad (Qt) and kitty — through the whole path: the microphone, the
//! engine, the focused app's built-in profile (kitty's terminal keys), the
//! paste. What arrived is read back from the app (Firefox's page posts its
//! text area's value; an editor saves its file on Ctrl+S; kitty's shell
//! writes the line it read), never from Utter's report. The copied text
//! comes back after each.
//! (`crates/platform/tests/paste_more_apps.rs` gives the same apps every
//! kind of text through the output path alone.)

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use utter_core::text::word_error_rate;
use utter_test_support::firefox;

use crate::harness::dictate::{Dictate, Take};
use crate::harness::speech::{clip, truth};
use crate::harness::terminal::Terminal;
use crate::harness::x11::{desktop, Desktop};
use crate::harness::{serial, wait_until};

/// The window whose title contains `title`, focused, with a click into its
/// middle so keys go to its text.
fn focus_and_click(d: &Desktop, title: &str) {
    let window = d.wait_for_window(
        &format!("the window {title}"),
        &["--onlyvisible", "--name", title],
        Duration::from_secs(60),
    );
    d.xdotool(&["windowfocus", "--sync", &window]);
    d.xdotool(&["mousemove", "--window", &window, "400", "300", "click", "1"]);
}

/// What `read` gives once it holds `text`, or its last answer after 10 s.
fn read_until(text: &str, mut read: impl FnMut() -> String) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = read();
        if now == text || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// An editor showing an empty file titled `PasteTarget-<tag>.txt`.
struct Editor {
    child: Child,
    file: PathBuf,
    title: String,
}

impl Editor {
    fn open(d: &Desktop, dir: &Path, program: &str, args: &[&str], tag: &str) -> Self {
        let title = format!("PasteTarget-{tag}");
        let file = dir.join(format!("{title}.txt"));
        std::fs::write(&file, "").unwrap();
        let home = dir.join(format!("home-{tag}"));
        std::fs::create_dir_all(&home).unwrap();
        let child = d
            .cmd(program)
            .args(args)
            .arg(&file)
            .env("HOME", home)
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} is installed (npm test installs it): {e}"));
        focus_and_click(d, &title);
        Self { child, file, title }
    }

    /// Saves (Ctrl+S) and reads the file; a single line, without the
    /// newline some editors end a file with.
    fn saved(&self, d: &Desktop) -> String {
        focus_and_click(d, &self.title);
        d.xdotool(&["key", "--clearmodifiers", "ctrl+s"]);
        std::thread::sleep(Duration::from_millis(200));
        std::fs::read_to_string(&self.file)
            .unwrap_or_default()
            .trim_end_matches('\n')
            .to_string()
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text the dictation delivered, and checks on how: pasted, into the
/// app the focus probe named, with the profile expected for it.
fn delivered_text(
    dictate: &Dictate,
    delivered: &Value,
    app: &str,
    profile: Option<&str>,
) -> String {
    assert_eq!(delivered["delivered"], "pasted", "{delivered}");
    let started = dictate.seen("recording_started").pop().unwrap();
    assert_eq!(started["app"], app, "{started}");
    match profile {
        None => assert!(started["profile"].is_null(), "{started}"),
        Some(p) => assert_eq!(started["profile"], p, "{started}"),
    }
    delivered["text"].as_str().unwrap().trim().to_string()
}

/// A push-to-talk dictation of clip `i`: its `text_delivered`, and when the
/// key was released (just before).
fn dictation(d: &Desktop, dictate: &Dictate, i: usize) -> (Value, Instant) {
    let released = std::cell::Cell::new(Instant::now());
    let delivered = Take::hotkey(d, &clip(i))
        .spoken(|_| released.set(Instant::now()))
        .run(dictate);
    (delivered, released.get())
}

/// Release → the text read back from the app, for the figures printed at
/// the end (an upper bound: reading starts once Utter said it delivered,
/// and an editor's includes its save).
fn ms_since(released: Instant) -> u128 {
    released.elapsed().as_millis()
}

#[test]
fn a_dictation_pastes_into_firefox_gtk_and_qt_editors_and_kitty_with_no_flag() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let _clipboard = d.set_clipboard("previous clipboard ✓");
    let dictate = Dictate::start(d, tmp.path(), &["--output", "paste"]);
    let clipboard_back = || {
        wait_until("the clipboard back", Duration::from_secs(5), || {
            d.clipboard() == "previous clipboard ✓"
        })
    };
    let check = |what: &str, received: &str, i: usize| {
        // Short clips: one misheard word is 12 %.
        let wer = word_error_rate(&truth(i), received);
        assert!(wer <= 0.3, "{what} received (WER {wer}): {received:?}");
    };

    let mut browser = d.cmd("firefox-esr");
    browser.env("MOZ_ENABLE_WAYLAND", "0");
    let page = firefox::TextAreaPage::start(browser, tmp.path());
    focus_and_click(d, firefox::TITLE);
    let mut figures = Vec::new();
    let (delivered, released) = dictation(d, &dictate, 0);
    let text = delivered_text(&dictate, &delivered, "firefox-esr", None);
    let received = read_until(&text, || page.value().trim().to_string());
    assert_eq!(received, text, "Firefox's text area");
    figures.push(format!("Firefox ESR {} ms", ms_since(released)));
    check("Firefox", &received, 0);
    clipboard_back();
    drop(page);

    let editors = [
        ("mousepad", &[][..], "GTK3", "Mousepad"),
        (
            "gnome-text-editor",
            &["--standalone"][..],
            "GTK4",
            "gnome-text-editor",
        ),
        ("featherpad", &[][..], "Qt", "FeatherPad"),
    ];
    for (i, (program, args, tag, app)) in editors.into_iter().enumerate() {
        let editor = Editor::open(d, tmp.path(), program, args, tag);
        let (delivered, released) = dictation(d, &dictate, i + 1);
        let text = delivered_text(&dictate, &delivered, app, None);
        let received = read_until(&text, || editor.saved(d));
        assert_eq!(received, text, "{program}'s file");
        figures.push(format!("{app} {} ms (with a save)", ms_since(released)));
        check(program, &received, i + 1);
        clipboard_back();
    }

    let terminal = Terminal::open(d, "kitty", "Dictate-kitty");
    let (delivered, released) = dictation(d, &dictate, 4);
    let text = delivered_text(
        &dictate,
        &delivered,
        "kitty",
        Some("Terminals (Ctrl+Shift+V)"),
    );
    let received = terminal.submit(d);
    assert_eq!(received, text, "the line kitty's shell read");
    figures.push(format!(
        "kitty {} ms (with Return and the shell's line)",
        ms_since(released)
    ));
    println!(
        "release → text read back from the app: {}",
        figures.join("; ")
    );
    check("kitty", &received, 4);
    clipboard_back();
    dictate.stop();
}
