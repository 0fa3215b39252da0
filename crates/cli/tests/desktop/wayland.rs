//! Wayland: what an X11-less session says and how `utter ptt` still
//! dictates; on a headless sway, pasting into foot, Chromium and Firefox, and the
//! desktop app's dictation and window.

use std::path::Path;
use std::time::{Duration, Instant};

use utter_core::text::word_error_rate;

use crate::harness::dictate::{ptt, Dictate, Take, HOTKEY};
use crate::harness::speech::{clip, truth};
use crate::harness::sway::{dictate_in_sway, start_app_in_sway, sway, Sway};
use crate::harness::x11::{desktop, Desktop};
use crate::harness::{kill_when_tests_end, serial, wait_until};

#[test]
fn on_wayland_hotkeys_and_paste_say_why_not_and_ptt_still_dictates() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    // A Wayland session as the environment describes it (XWayland's DISPLAY too):
    // X11 grabs would register "successfully" and never fire there.
    let wayland = [
        ("WAYLAND_DISPLAY", "wayland-utter-test"),
        ("XDG_SESSION_TYPE", "wayland"),
    ];
    let dictate = Dictate::start_with_env(d, tmp.path(), &["--output", "paste"], &wayland);
    let notices: Vec<String> = dictate
        .seen
        .borrow()
        .iter()
        .filter(|ev| ev["event"] == "notice")
        .map(|ev| ev["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("Wayland session") && n.contains("utter ptt press")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("paste output") && n.contains("clipboard instead")),
        "{notices:?}"
    );
    // The hotkey was not grabbed: pressing it starts nothing.
    d.xdotool(&["key", HOTKEY]);
    dictate.no_event("recording_started", Duration::from_millis(500));
    // `utter ptt` dictates; the text is left on the clipboard.
    let ev = Take::keys(
        d,
        &clip(3),
        || assert_eq!(ptt(d, "press").0, Some(0)),
        || assert_eq!(ptt(d, "release").0, Some(0)),
    )
    .run(&dictate);
    assert_eq!(ev["output"], "clipboard");
    let text = ev["text"].as_str().unwrap().to_string();
    assert!(word_error_rate(&truth(3), &text) <= 0.15, "{text}");
    assert_eq!(d.clipboard(), text);
    dictate.stop();
}

#[test]
fn on_sway_ptt_dictates_into_a_wayland_app_and_the_clipboard_is_restored() {
    let _guard = serial();
    let d = desktop();
    let s = sway();
    let tmp = tempfile::tempdir().unwrap();
    let mark = s.typed_mark();
    s.set_clipboard("previous clipboard ✓");
    let (dictate, ptt) = dictate_in_sway(d, s, tmp.path());
    s.focus_foot();
    let ev = Take::keys(d, &clip(0), || ptt("press"), || ptt("release")).run(&dictate);
    assert_eq!(ev["output"], "paste");
    let started = dictate.seen("recording_started").pop().unwrap();
    assert_eq!(
        started["app"], "foot",
        "sway's IPC named the focused app: {started}"
    );
    assert_eq!(started["profile"], "Terminals (Ctrl+Shift+V)", "{started}");
    let text = ev["text"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.typed_since(mark).trim() != text && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        s.typed_since(mark).trim(),
        text,
        "what foot received\n{}",
        s.logs()
    );
    assert!(
        word_error_rate(&truth(0), &s.typed_since(mark)) <= 0.15,
        "{}",
        s.typed_since(mark)
    );
    wait_until(
        "the previous clipboard back",
        Duration::from_secs(5),
        || s.clipboard() == "previous clipboard ✓",
    );

    // Issue 39: the whole clipboard comes back, not only text. An image
    // copied alone (image/png, no text type) is offered again, byte for byte.
    let image: Vec<u8> = b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain((0..40_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8))
        .collect();
    s.set_clipboard_data("image/png", &image);
    let mark = s.typed_mark();
    let ev = Take::keys(d, &clip(1), || ptt("press"), || ptt("release")).run(&dictate);
    assert_eq!(ev["delivered"], "pasted", "{ev}");
    let text = ev["text"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.typed_since(mark).trim() != text && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.typed_since(mark).trim(), text, "{}", s.logs());
    wait_until("the copied image back", Duration::from_secs(5), || {
        s.clipboard_types() == ["image/png"]
    });
    assert!(
        s.clipboard_data("image/png") == image,
        "the image came back changed"
    );
    dictate.stop();
}

/// Issue 39: Chromium as a Wayland client (`--ozone-platform=wayland`, as
/// Chrome and every Electron app run on a Wayland desktop) gets the spoken
/// dictation, read back from the page through DevTools; `pasted` is said
/// only after it read the text, and the previous clipboard comes back.
#[test]
fn on_sway_a_dictation_pastes_into_chromium_running_on_wayland() {
    use utter_test_support::chromium::TextAreaPage;
    let _guard = serial();
    let d = desktop();
    let s = sway();
    let tmp = tempfile::tempdir().unwrap();
    let mut browser = s.cmd("chromium");
    browser.arg("--ozone-platform=wayland");
    let mut page = TextAreaPage::start(browser, tmp.path());
    page.clear();
    s.focus("app_id=chromium");
    dictate_into_a_browser_page(d, s, tmp.path(), "chromium", || page.value());
}

/// Issue 39: Firefox ESR as a Wayland client (`MOZ_ENABLE_WAYLAND=1`) gets
/// the spoken dictation, read back from the page itself (it posts its text
/// area's value to a loopback server); `pasted` is said only after Firefox
/// read the text, and the previous clipboard comes back.
#[test]
fn on_sway_a_dictation_pastes_into_firefox_running_on_wayland() {
    use utter_test_support::firefox::TextAreaPage;
    let _guard = serial();
    let d = desktop();
    let s = sway();
    let tmp = tempfile::tempdir().unwrap();
    let mut browser = s.cmd_as_session_user("firefox-esr");
    browser.env("MOZ_ENABLE_WAYLAND", "1");
    let page = TextAreaPage::start(browser, tmp.path());
    s.wait_for_window("\"app_id\": \"firefox-esr\"", Duration::from_secs(60));
    s.focus("app_id=firefox-esr");
    dictate_into_a_browser_page(d, s, tmp.path(), "firefox-esr", || page.value());
}

/// A spoken dictation into the focused browser `app_id`, whose page's text
/// `read` gives: sway names the app, `pasted` is said, the page holds the
/// text exactly, and the previous clipboard comes back.
fn dictate_into_a_browser_page(
    d: &Desktop,
    s: &Sway,
    dir: &Path,
    app_id: &str,
    mut read: impl FnMut() -> String,
) {
    s.set_clipboard("previous clipboard ✓");
    let (dictate, ptt) = dictate_in_sway(d, s, dir);
    let ev = Take::keys(d, &clip(0), || ptt("press"), || ptt("release")).run(&dictate);
    let started = dictate.seen("recording_started").pop().unwrap();
    assert_eq!(
        started["app"], app_id,
        "sway's IPC named the focused app: {started}"
    );
    assert_eq!(ev["delivered"], "pasted", "{ev}");
    let text = ev["text"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut in_page = String::new();
    while Instant::now() < deadline {
        in_page = read();
        if in_page == text {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(in_page, text, "what the page received\n{}", s.logs());
    assert!(word_error_rate(&truth(0), &in_page) <= 0.15, "{in_page}");
    wait_until(
        "the previous clipboard back",
        Duration::from_secs(5),
        || s.clipboard() == "previous clipboard ✓",
    );
    dictate.stop();
}

/// Issue 10: the desktop app (not only the CLI) dictates on Wayland. The real
/// app runs in the headless sway session; `utter ptt` (what a compositor key
/// binding runs) drives it, and the text is pasted into foot, a Wayland app,
/// with the clipboard restored after.
#[test]
fn on_sway_the_desktop_app_dictates_into_a_wayland_app() {
    let _guard = serial();
    let d = desktop();
    let s = sway();
    let tmp = tempfile::tempdir().unwrap();
    let mark = s.typed_mark();
    s.set_clipboard("clipboard before the app ✓");
    let socket = d.runtime_dir.join("ptt-app-sway.sock");
    // As autostart launches it (into the tray), so foot keeps the focus.
    let (mut app, log_path) = start_app_in_sway(d, s, tmp.path(), &socket, &["--hidden"]);
    // Killed by the end of this test, or by the watchdog if it panics first.
    let mut watchdog = kill_when_tests_end(&[app.id()]);
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let ptt = |arg: &str| {
        d.cmd(env!("CARGO_BIN_EXE_utter"))
            .args(["ptt", arg])
            .env("UTTER_PTT_SOCKET", &socket)
            .output()
            .unwrap()
    };
    // The first press that the running app's dictation accepts starts it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = ptt("press");
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline && app.try_wait().unwrap().is_none(),
            "the app never took `utter ptt press`: {}\n--- app ---\n{}",
            String::from_utf8_lossy(&out.stderr),
            log()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    // The press opens the microphone (a message away): let it.
    std::thread::sleep(Duration::from_millis(300));
    d.speak(&clip(2));
    assert!(ptt("release").status.success());
    let deadline = Instant::now() + Duration::from_secs(45);
    while s.typed_since(mark).trim().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let typed = s.typed_since(mark);
    assert!(
        word_error_rate(&truth(2), &typed) <= 0.15,
        "what foot received: {typed:?}\n--- app ---\n{}\n{}",
        log(),
        s.logs()
    );
    wait_until(
        "the clipboard from before the dictation back",
        Duration::from_secs(5),
        || s.clipboard() == "clipboard before the app ✓",
    );
    let _ = app.kill();
    let _ = app.wait();
    let _ = watchdog.kill();
    let _ = watchdog.wait();
}

#[test]
fn on_sway_the_app_window_opens_as_a_wayland_window_and_draws_its_page() {
    let _guard = serial();
    let d = desktop();
    let s = sway();
    let tmp = tempfile::tempdir().unwrap();
    let socket = d.runtime_dir.join("ptt-app-window.sock");
    // Started as a user starts it: the window shows.
    let (mut app, log_path) = start_app_in_sway(d, s, tmp.path(), &socket, &[]);
    let mut watchdog = kill_when_tests_end(&[app.id()]);
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let mut window = None;
    wait_until(
        "the app's window in sway's tree",
        Duration::from_secs(60),
        || {
            assert!(
                app.try_wait().unwrap().is_none(),
                "the app exited:\n{}",
                log()
            );
            window = s.window_named("Utter");
            window.is_some()
        },
    );
    let window = window.unwrap();
    // A native Wayland toplevel (this sway has no XWayland at all).
    assert_eq!(window["shell"], "xdg_shell", "{window}");
    // The web page painted: the window is not one flat colour (a blank
    // webview is), but text, buttons and icons.
    let rect = &window["rect"];
    let at = |k: &str| rect[k].as_u64().unwrap() as usize;
    let mut colours = 0;
    let drawn = Instant::now() + Duration::from_secs(30);
    while Instant::now() < drawn {
        colours = s.distinct_colours(at("x"), at("y"), at("width"), at("height"));
        if colours > 50 {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        colours > 50,
        "the window shows {colours} colours: is the page drawn?\n--- app ---\n{}\n{}",
        log(),
        s.logs()
    );
    let _ = app.kill();
    let _ = app.wait();
    let _ = watchdog.kill();
    let _ = watchdog.wait();
    // foot has the focus again for the tests that paste into it.
    s.focus_foot();
}
