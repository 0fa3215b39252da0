//! Delivering text to the user: paste into the focused app (clipboard +
//! simulated paste keystroke, previous clipboard restored once the paste has
//! been consumed), type it, leave it on the clipboard, or print it.

use std::time::Duration;

use enigo::{Direction, Enigo, Key, Keyboard, Settings};

use crate::paste_watch::PasteWatch;

/// How dictated text reaches the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMethod {
    Paste,
    Type,
    Clipboard,
    Stdout,
}

impl std::str::FromStr for OutputMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "paste" => Self::Paste,
            "type" => Self::Type,
            "clipboard" => Self::Clipboard,
            "stdout" => Self::Stdout,
            _ => {
                return Err(format!(
                    "unknown output `{s}` (expected paste, type, clipboard or stdout)"
                ))
            }
        })
    }
}

/// The keystroke that pastes in the target app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasteKeys {
    /// Ctrl+V (Cmd+V on macOS).
    Standard,
    /// Shift+Insert: X11 terminals.
    ShiftInsert,
    /// Ctrl+Shift+V: most Linux terminal emulators.
    CtrlShiftV,
}

impl std::str::FromStr for PasteKeys {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "ctrl+v" | "cmd+v" | "standard" => Self::Standard,
            "shift+insert" => Self::ShiftInsert,
            "ctrl+shift+v" => Self::CtrlShiftV,
            _ => {
                return Err(format!(
                    "unknown paste keys `{s}` (expected ctrl+v, shift+insert or ctrl+shift+v)"
                ))
            }
        })
    }
}

#[derive(Debug, Clone)]
pub struct OutputConfig {
    pub method: OutputMethod,
    pub paste_keys: PasteKeys,
    pub restore_clipboard: bool,
    pub trailing_space: bool,
    /// Longest wait for the target app to read the clipboard before restoring it.
    pub paste_timeout: Duration,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            method: OutputMethod::Paste,
            paste_keys: PasteKeys::Standard,
            restore_clipboard: true,
            trailing_space: false,
            paste_timeout: Duration::from_secs(2),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("clipboard unavailable: {0}")]
    Clipboard(String),
    #[error("cannot simulate key presses: {0} (on macOS, allow Utter in System Settings → Privacy & Security → Accessibility)")]
    Input(String),
}

/// Owns the clipboard handle and the input simulator for the process's lifetime
/// (on X11 the clipboard's contents live as long as their owner).
pub struct Output {
    config: OutputConfig,
    clipboard: Option<arboard::Clipboard>,
    enigo: Option<Enigo>,
}

impl Output {
    pub fn new(config: OutputConfig) -> Result<Self, OutputError> {
        let needs_clipboard =
            matches!(config.method, OutputMethod::Paste | OutputMethod::Clipboard);
        let needs_keys = matches!(config.method, OutputMethod::Paste | OutputMethod::Type);
        let clipboard = needs_clipboard
            .then(|| arboard::Clipboard::new().map_err(|e| OutputError::Clipboard(e.to_string())))
            .transpose()?;
        let enigo = needs_keys
            .then(|| {
                Enigo::new(&Settings::default()).map_err(|e| OutputError::Input(e.to_string()))
            })
            .transpose()?;
        Ok(Self {
            config,
            clipboard,
            enigo,
        })
    }

    pub fn method(&self) -> OutputMethod {
        self.config.method
    }

    /// Delivers `text`. Empty text is not delivered.
    pub fn deliver(&mut self, text: &str) -> Result<(), OutputError> {
        if text.is_empty() {
            return Ok(());
        }
        let text = if self.config.trailing_space {
            format!("{text} ")
        } else {
            text.to_string()
        };
        match self.config.method {
            OutputMethod::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
            OutputMethod::Clipboard => self.set_clipboard(&text)?,
            OutputMethod::Type => {
                let enigo = self.enigo.as_mut().expect("created for type");
                enigo
                    .text(&text)
                    .map_err(|e| OutputError::Input(e.to_string()))?;
            }
            OutputMethod::Paste => self.paste(&text)?,
        }
        Ok(())
    }

    fn set_clipboard(&mut self, text: &str) -> Result<(), OutputError> {
        let clipboard = self
            .clipboard
            .as_mut()
            .expect("created for clipboard output");
        clipboard
            .set_text(text.to_string())
            .map_err(|e| OutputError::Clipboard(e.to_string()))
    }

    fn paste(&mut self, text: &str) -> Result<(), OutputError> {
        let previous = if self.config.restore_clipboard {
            self.clipboard.as_mut().and_then(|c| c.get_text().ok())
        } else {
            None
        };
        // Restore only after the target app has read our text: restoring on a
        // timer pastes the OLD clipboard when the target is slow (a known
        // failure of other dictation apps).
        let watch = PasteWatch::serve(text);
        if watch.is_none() {
            self.set_clipboard(text)?;
        }
        self.press_paste_keys()?;
        match &watch {
            Some(w) => {
                let consumed = w.wait_consumed(self.config.paste_timeout);
                if !consumed {
                    tracing::warn!("the target app did not read the clipboard in time");
                }
            }
            None => PasteWatch::fallback_wait(),
        }
        // Hand the clipboard back: the previous text, or ours if there was none
        // (so it stays pasteable after our server stops).
        self.set_clipboard(previous.as_deref().unwrap_or(text))?;
        drop(watch);
        Ok(())
    }

    fn press_paste_keys(&mut self) -> Result<(), OutputError> {
        let enigo = self.enigo.as_mut().expect("created for paste");
        let modifier = if cfg!(target_os = "macos") {
            Key::Meta
        } else {
            Key::Control
        };
        let (mods, key): (Vec<Key>, Key) = match self.config.paste_keys {
            PasteKeys::Standard => (vec![modifier], Key::Unicode('v')),
            PasteKeys::ShiftInsert => (vec![Key::Shift], Key::Insert),
            PasteKeys::CtrlShiftV => (vec![Key::Control, Key::Shift], Key::Unicode('v')),
        };
        let err = |e: enigo::InputError| OutputError::Input(e.to_string());
        for m in &mods {
            enigo.key(*m, Direction::Press).map_err(err)?;
        }
        let result = enigo.key(key, Direction::Click).map_err(err);
        for m in mods.iter().rev() {
            enigo.key(*m, Direction::Release).map_err(err)?;
        }
        result
    }
}
