//! Pastes into real apps on a real X server (Xvfb), read back from the apps
//! themselves, never from Utter's report:
//! - Chromium (the engine of Chrome, Edge and every Electron app): the text
//!   area's value through the DevTools protocol;
//! - xterm (Shift+Insert, the PRIMARY selection): what `cat` wrote to a file.
//!
//! Alternating, with accents, quotes, emoji, CJK and a 2,000-character
//! multi-line text, while the user's clipboard holds an image that must come
//! back after every paste. And a window that never reads the paste: the
//! fallback and its notice.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use utter_platform::output::{
    open_sink, Delivered, OutputConfig, OutputEnv, OutputMethod, PasteFallback, PasteKeys,
};
use utter_test_support::chromium::{self, TextAreaPage};

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/x11_apps.rs"]
mod x11_apps;
use paste_matrix::{delivery, median, ms, settled, sink, texts, typing, LAYOUT_TEXT};
use utter_test_support::desktop::png;
use utter_test_support::x11_clipboard::{clipboard, clipboard_offers, copy};
use x11_apps::{focus, start_xvfb, wait_until, window, CatTerminal};

/// Each test takes the one display and its keyboard focus for itself.
static DESKTOP: Mutex<()> = Mutex::new(());

/// Pastes in the alternating run (half into each app).
const PASTES: usize = 200;

/// Chromium showing a text area, and the DevTools reader of it.
/// Chromium on X11, and its window for the keyboard focus.
struct Chromium {
    page: TextAreaPage,
    window: String,
}

impl Chromium {
    fn start(dir: &Path) -> Self {
        let mut browser = Command::new("chromium");
        browser.arg("--ozone-platform=x11");
        let page = TextAreaPage::start(browser, dir);
        Self {
            page,
            window: window(chromium::TITLE),
        }
    }

    fn clear(&mut self) {
        self.page.clear()
    }

    /// The text area's value, as the page sees it.
    fn value(&mut self) -> String {
        self.page.value()
    }
}

#[test]
fn pastes_into_chromium_and_xterm_arrive_exactly_and_the_copied_image_comes_back() {
    let _desktop = DESKTOP.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (_xvfb, _display) = start_xvfb();
    let mut chromium = Chromium::start(dir.path());
    let xterm = CatTerminal::xterm(dir.path());
    let image = png(dir.path());
    let _user_copy = copy(&image, "image/png");

    let config = OutputConfig::default();
    let (mut sink, notice) = open_sink(&config, &OutputEnv::detect(None)).expect("a paste sink");
    assert_eq!(notice, None);

    let texts = texts();
    let mut in_terminal = String::new();
    let (mut to_read, mut to_restore) = (Vec::new(), Vec::new());
    for i in 0..PASTES {
        let into_browser = i % 2 == 0;
        let text = &texts[(i / 2) % texts.len()];
        // The terminal's cat gets single lines: a terminal turns pasted newlines into Enter.
        let text = if into_browser {
            text.clone()
        } else {
            text.lines().next().unwrap().to_string()
        };
        let keys = if into_browser {
            chromium.clear();
            focus(&chromium.window);
            PasteKeys::Standard
        } else {
            focus(&xterm.window);
            // Its built-in profile: xterm pastes PRIMARY on Shift+Insert.
            PasteKeys::ShiftInsert
        };
        let started = Instant::now();
        let outcome = sink
            .deliver(&text, &delivery(keys))
            .unwrap_or_else(|e| panic!("paste {i}: {e}"));
        to_read.push(started.elapsed());
        assert_eq!(outcome.delivered, Delivered::Pasted, "paste {i}");
        assert_eq!(outcome.notice, None, "paste {i}");
        if into_browser {
            wait_until(
                &format!("paste {i} in Chromium"),
                Duration::from_secs(5),
                || chromium.value() == text,
            );
        } else {
            in_terminal.push_str(&text);
            wait_until(
                &format!("paste {i} in xterm"),
                Duration::from_secs(5),
                || xterm.text() == in_terminal,
            );
        }
        wait_until(
            &format!("the image back on the clipboard after paste {i}"),
            Duration::from_secs(3),
            || clipboard_offers("image/png"),
        );
        to_restore.push(started.elapsed());
    }
    assert_eq!(
        clipboard("image/png"),
        image,
        "the copied image, byte for byte"
    );
    println!(
        "{PASTES} pastes, Chromium and xterm alternating: read by the app {:.0} ms after the \
         delivery started (median), the image back after {:.0} ms (median)",
        ms(median(to_read)),
        ms(median(to_restore)),
    );
}

/// A window that takes the focus and ignores every key: the paste is never read.
struct DeafWindow {
    /// Kept open: the window lives as long as its connection.
    _conn: x11rb::rust_connection::RustConnection,
}

impl DeafWindow {
    fn open() -> Self {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::{
            ConnectionExt, CreateWindowAux, EventMask, InputFocus, WindowClass,
        };
        use x11rb::wrapper::ConnectionExt as _;
        let (conn, screen) = x11rb::connect(None).unwrap();
        let root = conn.setup().roots[screen].root;
        let win = conn.generate_id().unwrap();
        conn.create_window(
            0,
            win,
            root,
            0,
            0,
            200,
            100,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new().event_mask(EventMask::KEY_PRESS),
        )
        .unwrap();
        conn.map_window(win).unwrap();
        conn.sync().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        conn.set_input_focus(InputFocus::PARENT, win, x11rb::CURRENT_TIME)
            .unwrap();
        conn.sync().unwrap();
        Self { _conn: conn }
    }
}

#[test]
fn a_paste_nobody_reads_is_left_on_the_clipboard_and_said_so() {
    let _desktop = DESKTOP.lock().unwrap_or_else(|e| e.into_inner());
    let (_xvfb, _display) = start_xvfb();
    let _user_copy = copy(b"what the user had copied", "UTF8_STRING");
    let _deaf = DeafWindow::open();
    let config = OutputConfig {
        paste_timeout: Duration::from_millis(500),
        paste_fallback: PasteFallback::Clipboard,
        ..OutputConfig::default()
    };
    let (mut sink, _) = open_sink(&config, &OutputEnv::detect(None)).expect("a paste sink");
    let text = "a dictation nobody pasted";
    let outcome = sink
        .deliver(text, &delivery(PasteKeys::Standard))
        .expect("delivered");
    assert_eq!(outcome.delivered, Delivered::LeftOnClipboard);
    let notice = outcome.notice.expect("the user is told");
    assert!(notice.contains("press Ctrl+V"), "{notice}");
    assert_eq!(clipboard("UTF8_STRING"), text.as_bytes());
}

/// `setxkbmap LAYOUT` on the test's display.
fn set_layout(layout: &str) {
    let ok = Command::new("setxkbmap")
        .arg(layout)
        .status()
        .expect("setxkbmap is installed (apt install x11-xkb-utils)")
        .success();
    assert!(ok, "setxkbmap {layout}");
}

/// Typing (`--output type`) under German and French layouts: the
/// characters arrive as written, in Chromium and in xterm (Handy #439 is
/// accented letters mangled by direct typing). Layout keys that differ
/// from US (y/z, a/q, the AltGr symbols, dead keys) are in the text.
#[test]
fn typed_text_arrives_exactly_under_german_and_french_layouts() {
    let _desktop = DESKTOP.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (_xvfb, _display) = start_xvfb();
    let mut chromium = Chromium::start(dir.path());
    let xterm = CatTerminal::xterm(dir.path());
    let mut sink = sink(OutputMethod::Type);
    let how = typing(PasteKeys::Standard);
    let text = LAYOUT_TEXT;
    let mut in_terminal = String::new();
    for layout in ["de", "fr", "us"] {
        set_layout(layout);
        chromium.clear();
        focus(&chromium.window);
        let outcome = sink.deliver(text, &how).expect("typed into Chromium");
        assert_eq!(outcome.delivered, Delivered::Typed);
        let arrived = settled(Duration::from_secs(10), text, || chromium.value());
        assert_eq!(arrived, text, "typed into Chromium under {layout}");
        focus(&xterm.window);
        sink.deliver(text, &how).expect("typed into xterm");
        in_terminal.push_str(text);
        let arrived = settled(Duration::from_secs(10), &in_terminal, || xterm.text());
        assert_eq!(arrived, in_terminal, "typed into xterm under {layout}");
    }
}

/// Locks the keyboard's layout group `second` ? the second : the first
/// (what a layout switch key does), through XKB on the test's display.
fn lock_group(second: bool) {
    use x11rb::connection::Connection;
    use x11rb::protocol::xkb::{self, ConnectionExt as _};
    use x11rb::wrapper::ConnectionExt as _;
    let (conn, _) = x11rb::connect(None).unwrap();
    conn.xkb_use_extension(1, 0).unwrap().reply().unwrap();
    let group = if second {
        xkb::Group::M2
    } else {
        xkb::Group::M1
    };
    let none = x11rb::protocol::xproto::ModMask::from(0u16);
    conn.xkb_latch_lock_state(
        xkb::ID::USE_CORE_KBD.into(),
        none,
        none,
        true,
        group,
        none,
        false,
        0,
    )
    .unwrap();
    conn.flush().unwrap();
    conn.sync().unwrap();
}

/// Typing and pasting with a keymap of two layout groups (Russian and US,
/// as a bilingual user has), either first, either active: every character
/// arrives as written — before, with Russian active "Hello" was typed
/// "Hуддщ" — and Ctrl+V still pastes (with Russian first, Chromium took the
/// old chord for no shortcut); the user's group is active again afterwards.
/// Each case loads its keymap again, the same one twice in a row too, which
/// empties the spare keycodes the last text was typed with: before, the
/// letters typed on them afterwards went missing ("Привет" → "Привт").
#[test]
fn typed_text_arrives_exactly_with_two_layout_groups() {
    let _desktop = DESKTOP.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (_xvfb, _display) = start_xvfb();
    let mut chromium = Chromium::start(dir.path());
    let xterm = CatTerminal::xterm(dir.path());
    let mut sink = sink(OutputMethod::Type);
    let how = typing(PasteKeys::Standard);
    let mut pasting = paste_matrix::sink(OutputMethod::Paste);
    let text = "Hello, world! Привет, мир! Ёлка — ok? QWERTY йцукен";
    let mut in_terminal = String::new();
    for (layouts, second) in [
        ("us,ru", false),
        ("us,ru", true),
        ("ru,us", false),
        ("ru,us", true),
    ] {
        set_layout(layouts);
        lock_group(second);
        let layouts = format!("{layouts}, group {}", if second { 2 } else { 1 });
        chromium.clear();
        focus(&chromium.window);
        sink.deliver(text, &how).expect("typed into Chromium");
        let arrived = settled(Duration::from_secs(10), text, || chromium.value());
        assert_eq!(arrived, text, "typed into Chromium under {layouts}");
        focus(&xterm.window);
        sink.deliver(text, &how).expect("typed into xterm");
        in_terminal.push_str(text);
        let arrived = settled(Duration::from_secs(10), &in_terminal, || xterm.text());
        assert_eq!(arrived, in_terminal, "typed into xterm under {layouts}");
        assert_eq!(locked_group(), second, "the user's group, after {layouts}");
        chromium.clear();
        focus(&chromium.window);
        let outcome = pasting
            .deliver(text, &delivery(PasteKeys::Standard))
            .expect("pasted into Chromium");
        assert_eq!(outcome.delivered, Delivered::Pasted, "{layouts}");
        let arrived = settled(Duration::from_secs(10), text, || chromium.value());
        assert_eq!(arrived, text, "pasted into Chromium under {layouts}");
        assert_eq!(locked_group(), second, "the user's group, after {layouts}");
    }
}

/// Whether the keyboard's second layout group is the locked one.
fn locked_group() -> bool {
    use x11rb::protocol::xkb::{self, ConnectionExt as _};
    let (conn, _) = x11rb::connect(None).unwrap();
    conn.xkb_use_extension(1, 0).unwrap().reply().unwrap();
    let state = conn
        .xkb_get_state(xkb::ID::USE_CORE_KBD.into())
        .unwrap()
        .reply()
        .unwrap();
    state.locked_group == xkb::Group::M2
}
