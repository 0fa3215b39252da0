//! Two hundred pastes into a real X11 window (Xvfb), each read by the target
//! after a random delay, with a sentinel on the clipboard: every paste must
//! insert the dictated text (never the sentinel), the paste must be reported
//! only once read, and the sentinel must be back after every one (once the
//! reader has been quiet: apps read more than once). Prints the
//! restore-latency distribution (docs/reliability.md quotes it).
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use utter_platform::output::{open_sink, Delivered, OutputConfig, OutputEnv, OutputMethod};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt, CreateWindowAux, EventMask, InputFocus, KeyButMask, Window,
    WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::CURRENT_TIME;

#[path = "support/paste_matrix.rs"]
mod paste_matrix;
#[path = "support/x11_apps.rs"]
mod x11_apps;
use x11_apps::start_xvfb;

const CYCLES: usize = 200;
/// The target reads the clipboard 0..=MAX_DELAY_MS after the keystroke.
const MAX_DELAY_MS: u64 = 60;
const SENTINEL: &str = "sentinel: the user's own clipboard ✓";

/// An X client with a window of its own that can read CLIPBOARD the way any
/// app does (ConvertSelection to UTF8_STRING, then the property).
struct Client {
    conn: RustConnection,
    win: Window,
    clipboard: Atom,
    utf8: Atom,
    property: Atom,
}

impl Client {
    fn open(display: &str, mapped: bool) -> Self {
        let (conn, screen) = x11rb::connect(Some(display)).expect("connect to Xvfb");
        let atom = |name: &str| {
            conn.intern_atom(false, name.as_bytes())
                .unwrap()
                .reply()
                .unwrap()
                .atom
        };
        let (clipboard, utf8, property) = (
            atom("CLIPBOARD"),
            atom("UTF8_STRING"),
            atom("UTTER_TEST_PASTE"),
        );
        let root = conn.setup().roots[screen].root;
        let win = conn.generate_id().unwrap();
        conn.create_window(
            0,
            win,
            root,
            0,
            0,
            300,
            100,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new().event_mask(EventMask::KEY_PRESS | EventMask::STRUCTURE_NOTIFY),
        )
        .unwrap();
        let client = Self {
            conn,
            win,
            clipboard,
            utf8,
            property,
        };
        if mapped {
            client.conn.map_window(win).unwrap();
            client.conn.flush().unwrap();
            loop {
                if let Event::MapNotify(_) = client.conn.wait_for_event().unwrap() {
                    break;
                }
            }
            // No window manager: the keyboard goes where we say.
            client
                .conn
                .set_input_focus(InputFocus::PARENT, win, CURRENT_TIME)
                .unwrap();
            client.conn.sync().unwrap();
        }
        client
    }

    /// What a paste would insert now ("<empty>" when nobody serves text).
    fn read_clipboard(&self) -> String {
        self.conn
            .convert_selection(
                self.win,
                self.clipboard,
                self.utf8,
                self.property,
                CURRENT_TIME,
            )
            .unwrap();
        self.conn.flush().unwrap();
        loop {
            match self.conn.wait_for_event().unwrap() {
                Event::SelectionNotify(n) if n.property == x11rb::NONE => return "<empty>".into(),
                Event::SelectionNotify(_) => {
                    let reply = self
                        .conn
                        .get_property(
                            true,
                            self.win,
                            self.property,
                            AtomEnum::ANY,
                            0,
                            u32::MAX / 4,
                        )
                        .unwrap()
                        .reply()
                        .unwrap();
                    return String::from_utf8(reply.value).unwrap();
                }
                Event::KeyPress(k) => panic!("a key press while reading the clipboard: {k:?}"),
                _ => {}
            }
        }
    }
}

/// What the target window read for one paste, when it asked and when it had it.
struct Pasted {
    text: String,
    asked_at: Instant,
    read_at: Instant,
}

/// The focused window: on each Ctrl+<key> press it waits its delay, then
/// reads the clipboard like an app pasting.
fn run_target(target: Client, delays: Vec<Duration>, out: mpsc::Sender<Pasted>) {
    let mut delays = delays.into_iter();
    loop {
        let Ok(event) = target.conn.wait_for_event() else {
            return;
        };
        if let Event::KeyPress(key) = event {
            if !key.state.contains(KeyButMask::CONTROL) {
                continue;
            }
            std::thread::sleep(delays.next().unwrap_or_default());
            let asked_at = Instant::now();
            let text = target.read_clipboard();
            let read_at = Instant::now();
            if out
                .send(Pasted {
                    text,
                    asked_at,
                    read_at,
                })
                .is_err()
            {
                return;
            }
        }
    }
}

/// Delays from a fixed-seed xorshift: the same run every time.
fn random_delays(n: usize) -> Vec<Duration> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            Duration::from_millis(state % (MAX_DELAY_MS + 1))
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[test]
fn two_hundred_pastes_insert_the_text_and_always_give_the_clipboard_back() {
    // The only test in this binary, so nothing else reads the environment.
    let (_xvfb, display) = start_xvfb();

    // The sentinel comes from another program, as a user's clipboard does.
    let mut xclip = Command::new("xclip")
        .args(["-selection", "clipboard", "-quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xclip is installed");
    {
        use std::io::Write;
        xclip
            .stdin
            .take()
            .unwrap()
            .write_all(SENTINEL.as_bytes())
            .unwrap();
    }
    let checker = Client::open(&display, false);
    let deadline = Instant::now() + Duration::from_secs(5);
    while checker.read_clipboard() != SENTINEL {
        assert!(Instant::now() < deadline, "xclip never served the sentinel");
        std::thread::sleep(Duration::from_millis(20));
    }

    let target = Client::open(&display, true);
    let (pasted_tx, pasted) = mpsc::channel();
    std::thread::spawn(move || run_target(target, random_delays(CYCLES), pasted_tx));

    let config = OutputConfig {
        method: OutputMethod::Paste,
        ..OutputConfig::default()
    };
    let (mut sink, notice) =
        open_sink(&config, &OutputEnv::detect(None)).expect("a paste sink on X11");
    assert_eq!(notice, None);

    let mut restore = Vec::with_capacity(CYCLES); // target's read → sentinel back
    let mut whole = Vec::with_capacity(CYCLES); // deliver() call, start to end
    for i in 0..CYCLES {
        let text = format!("dictation {i}: «ünïcode» ✓");
        let started = Instant::now();
        let outcome = sink
            .deliver(&text, &config.delivery())
            .unwrap_or_else(|e| panic!("cycle {i}: {e}"));
        let returned = Instant::now();
        // Pasted: the paste method itself delivered (no fallback).
        assert_eq!(outcome.delivered, Delivered::Pasted, "cycle {i}");
        let got = pasted
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("cycle {i}: the target never saw the paste"));
        assert_eq!(
            got.text, text,
            "cycle {i}: the paste inserted something else"
        );
        assert!(
            got.asked_at <= returned,
            "cycle {i}: the paste was reported before the target asked for it"
        );
        let deadline = Instant::now() + Duration::from_secs(3);
        while checker.read_clipboard() != SENTINEL {
            assert!(
                Instant::now() < deadline,
                "cycle {i}: the clipboard was not given back"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        restore.push(got.read_at.elapsed());
        whole.push(returned - started);
    }
    let _ = xclip.kill();
    let _ = xclip.wait();

    restore.sort();
    whole.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{CYCLES} pastes, target delay 0–{MAX_DELAY_MS} ms. Clipboard back after the target's read: \
         p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms. Whole delivery: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        ms(percentile(&restore, 0.5)),
        ms(percentile(&restore, 0.95)),
        ms(percentile(&restore, 0.99)),
        ms(*restore.last().unwrap()),
        ms(percentile(&whole, 0.5)),
        ms(percentile(&whole, 0.95)),
        ms(*whole.last().unwrap()),
    );
}
