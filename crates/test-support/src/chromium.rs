//! Chromium showing one text area, its value read through the DevTools
//! protocol: what a paste or typing into a browser (and every Electron app)
//! really put there. Needs Debian's `chromium`, `node` and the repository's
//! `playwright-core` (a dev dependency in package.json).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::desktop::{wait_until, KilledOnDrop};

/// The page's title, for finding its window (xdotool, sway criteria).
pub const TITLE: &str = "PasteTarget-Chromium";

pub struct TextAreaPage {
    commands: ChildStdin,
    answers: BufReader<ChildStdout>,
    // Dropped after the pipes: the reader ends first, then the browser.
    _reader: KilledOnDrop,
    _browser: KilledOnDrop,
}

impl TextAreaPage {
    /// Opens the page in `browser` (the `chromium` command with the session's
    /// environment and `--ozone-platform`); its profile lives in `dir`.
    pub fn start(mut browser: Command, dir: &Path) -> Self {
        let page = dir.join("page.html");
        std::fs::write(
            &page,
            format!(
                "<html><head><title>{TITLE}</title></head>\
                 <body><textarea id=t rows=20 cols=80 autofocus></textarea></body></html>"
            ),
        )
        .unwrap();
        let profile = dir.join("chromium-profile");
        let browser = crate::desktop::own_group(&mut browser)
            .args([
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("file://{}", page.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium is installed (apt install chromium)");
        let browser = KilledOnDrop(browser);
        let mut port = String::new();
        wait_until("Chromium's DevTools port", Duration::from_secs(30), || {
            port = std::fs::read_to_string(profile.join("DevToolsActivePort"))
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            !port.is_empty()
        });
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/chromium_page.mjs");
        let mut reader = Command::new("node")
            .arg(script)
            .arg(&port)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node is installed");
        let mut page = Self {
            commands: reader.stdin.take().unwrap(),
            answers: BufReader::new(reader.stdout.take().unwrap()),
            _reader: KilledOnDrop(reader),
            _browser: browser,
        };
        let ready = page.answer();
        assert_eq!(ready, "ready", "the DevTools reader");
        page
    }

    fn answer(&mut self) -> String {
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the DevTools reader ended");
        line.trim_end().to_string()
    }

    /// Empties the text area and gives it the page's focus.
    pub fn clear(&mut self) {
        writeln!(self.commands, "clear").unwrap();
        assert_eq!(self.answer(), "ok");
    }

    /// The text area's value, as the page sees it.
    pub fn value(&mut self) -> String {
        writeln!(self.commands, "value").unwrap();
        let hex = self.answer();
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex from the reader"))
            .collect();
        String::from_utf8(bytes).expect("UTF-8 from the page")
    }
}
