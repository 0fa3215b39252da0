//! What every paste-matrix test shares, X11 or Wayland: the texts each app
//! must receive exactly, the user's copied image, the delivery asked for,
//! reading an app until it settles, an editor's saved file read back, and
//! the figures' arithmetic. Each test binary uses part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use utter_platform::output::{
    open_sink, Delivered, Delivery, OutputConfig, OutputEnv, OutputMethod, PasteKeys, Submit,
    TextSink,
};

/// One app receiving pastes, and how to read back what it holds.
pub trait Target {
    fn name(&self) -> &'static str;
    /// Gives it the keyboard focus.
    fn focus(&self);
    /// The keys its built-in profile pastes with (Ctrl+V but in terminals).
    fn keys(&self) -> PasteKeys {
        PasteKeys::Standard
    }
    /// Whether it keeps a multi-line text as it is (not a terminal, which
    /// turns a newline into Enter).
    fn multi_line(&self) -> bool {
        true
    }
    /// What it holds once `text` is pasted: the text itself, unless the
    /// app's own paste changes it by design (Writer makes no empty last
    /// paragraph of a final line break).
    fn after_paste(&self, text: &str) -> String {
        text.to_string()
    }
    /// Empties it, so that what it reads next is the next paste alone.
    fn clear(&mut self);
    /// What it holds now, as the app itself says.
    fn read(&mut self) -> String;
}

/// The clipboard as another program of the desktop sees it (xclip,
/// wl-paste): not through Utter.
pub trait Clipboard {
    /// Whether it offers `mime` now.
    fn offers(&self, mime: &str) -> bool;
    /// What it gives as `mime`.
    fn data(&self, mime: &str) -> Vec<u8>;
    /// What it offers, for a failure message.
    fn offered(&self) -> String;
}

/// Times for one app: delivery start → the app holds the text, → the
/// user's image is back on the clipboard.
pub struct Figures {
    pub read: Vec<Duration>,
    pub restored: Vec<Duration>,
}

impl Figures {
    /// One line for docs/benchmarks.md.
    pub fn report(&self, name: &str) -> String {
        format!(
            "{name}: {} pastes, the text in the app {:.0} ms after the delivery started \
             (median; max {:.0}), the image back after {:.0} ms (median)",
            self.read.len(),
            ms(median(self.read.clone())),
            ms(*self.read.iter().max().unwrap()),
            ms(median(self.restored.clone())),
        )
    }
}

/// Types [`LAYOUT_TEXT`] into `target` through `typing` (a sink of the
/// type method): it must be in the app exactly, said typed.
pub fn type_layout_text(target: &mut dyn Target, typing: &mut dyn TextSink) {
    let name = target.name();
    target.clear();
    target.focus();
    let outcome = typing
        .deliver(LAYOUT_TEXT, &self::typing(target.keys()))
        .unwrap_or_else(|e| panic!("{name}, typing: {e}"));
    assert_eq!(outcome.delivered, Delivered::Typed, "{name}");
    let arrived = settled(Duration::from_secs(10), LAYOUT_TEXT, || target.read());
    assert_eq!(arrived, LAYOUT_TEXT, "{name}: what typing put there");
}

/// Pastes every text twice into `target` through `sink`: each must be in
/// the app exactly, said pasted, and the user's `image` back on the
/// clipboard after it (byte for byte at the end).
pub fn paste_every_text(
    target: &mut dyn Target,
    sink: &mut dyn TextSink,
    clipboard: &dyn Clipboard,
    image: &[u8],
) -> Figures {
    let mut figures = Figures {
        read: Vec::new(),
        restored: Vec::new(),
    };
    let name = target.name();
    for (i, text) in texts().iter().chain(texts().iter()).enumerate() {
        let text = match target.multi_line() {
            true => text.clone(),
            false => text.lines().next().unwrap().to_string(),
        };
        target.clear();
        target.focus();
        let started = Instant::now();
        let outcome = sink
            .deliver(&text, &delivery(target.keys()))
            .unwrap_or_else(|e| panic!("{name}, paste {i}: {e}"));
        assert_eq!(outcome.delivered, Delivered::Pasted, "{name}, paste {i}");
        assert_eq!(outcome.notice, None, "{name}, paste {i}");
        let expected = target.after_paste(&text);
        let arrived = settled(Duration::from_secs(10), &expected, || target.read());
        assert_eq!(arrived, expected, "{name}, paste {i}: what the app holds");
        figures.read.push(started.elapsed());
        let back = Instant::now() + Duration::from_secs(3);
        while !clipboard.offers("image/png") {
            assert!(
                Instant::now() < back,
                "{name}, paste {i}: the image is not back on the clipboard, which offers {:?}",
                clipboard.offered()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        figures.restored.push(started.elapsed());
    }
    assert_eq!(
        clipboard.data("image/png"),
        image,
        "{name}: the copied image, byte for byte"
    );
    figures
}

/// What `read` gives once it equals `expected`, or its last answer at the
/// timeout (for the failure message).
pub fn settled(timeout: Duration, expected: &str, mut read: impl FnMut() -> String) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let now = read();
        if now == expected || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Accents, quotes, emoji and CJK, and a 2,000-character multi-line text.
pub fn texts() -> Vec<String> {
    let long: String = (0..40)
        .map(|i| format!("Line {i:02}: the quick brown fox jumps over the lazy dog.\n"))
        .collect();
    assert!(long.chars().count() >= 2000);
    vec![
        "Perché no? Già fatto: «così è» — naïve café, São Paulo.".into(),
        "She said \"it's 'quoted'\" and left; ok?".into(),
        "Emoji 🎉👍 and a CJK word: 日本語 (にほんご), 中文.".into(),
        long,
    ]
}

/// What typing must get right whatever the keyboard layout: the keys that
/// differ between US, German and French (y/z, a/q, the AltGr symbols, dead
/// keys), accents, and characters no layout has.
pub const LAYOUT_TEXT: &str =
    "Grüße aus Köln: Zürich, Quai d'Orsay; ÄÖÜ ß — 5 € «très» élève, ça, \
     œuvre, naïve; @ # { } [ ] | \\ ~ ^ ` y z q a m w! 日本";

/// A sink of `method` with the default settings for this process's
/// desktop; it must work here (no fallback notice).
pub fn sink(method: OutputMethod) -> Box<dyn TextSink> {
    let config = OutputConfig {
        method,
        ..OutputConfig::default()
    };
    let (sink, notice) = open_sink(&config, &OutputEnv::detect(None)).expect("a sink");
    assert_eq!(notice, None, "{method:?} works here");
    sink
}

/// Typing, with `keys` for the paste a type sink never sends.
pub fn typing(keys: PasteKeys) -> Delivery {
    Delivery {
        method: OutputMethod::Type,
        paste_keys: keys,
        trailing_space: false,
        submit: Submit::None,
    }
}

pub fn delivery(keys: PasteKeys) -> Delivery {
    Delivery {
        method: OutputMethod::Paste,
        paste_keys: keys,
        trailing_space: false,
        submit: Submit::None,
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// What an editor does to the end of a text: when it saves it, and for
/// Writer when it pastes it.
#[derive(Clone, Copy)]
pub enum FinalNewline {
    /// Saves the text as it is (Mousepad).
    Kept,
    /// Adds a newline (GtkSourceView's implicit trailing newline, which it
    /// takes off again when it opens the file: GNOME Text Editor).
    Added,
    /// Ends every paragraph with a newline, the last included (LibreOffice
    /// Writer's text export), and pastes a text's final line break as no
    /// paragraph at all (its plain-text import; `xclip` + Ctrl+V does the
    /// same).
    Paragraphs,
    /// Ends a text that does not end with one with a newline (FeatherPad).
    Ensured,
}

impl FinalNewline {
    /// How `program` saves.
    pub fn of(program: &str) -> Self {
        match program {
            "gnome-text-editor" => Self::Added,
            "soffice" => Self::Paragraphs,
            "featherpad" => Self::Ensured,
            _ => Self::Kept,
        }
    }

    /// What the editor holds once `text` is pasted.
    pub fn after_paste(self, text: &str) -> String {
        match self {
            Self::Paragraphs => text.strip_suffix('\n').unwrap_or(text).to_string(),
            _ => text.to_string(),
        }
    }

    /// The text the editor held, from the file it `saved` (without the
    /// byte-order mark LibreOffice writes first: a mark is not text).
    pub fn text_of(self, saved: String) -> String {
        let saved = match saved.strip_prefix('\u{feff}') {
            Some(text) => text.to_string(),
            None => saved,
        };
        match self {
            Self::Kept => saved,
            Self::Added | Self::Paragraphs => {
                saved.strip_suffix('\n').unwrap_or(&saved).to_string()
            }
            // The texts that end with a newline are multi-line: they are
            // read back whole, the others without the newline added.
            Self::Ensured if saved.matches('\n').count() > 1 => saved,
            Self::Ensured => saved.strip_suffix('\n').unwrap_or(&saved).to_string(),
        }
    }
}
