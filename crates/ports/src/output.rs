//! Where dictated text goes: the [`TextSink`] port and the words its callers
//! use — the method, the paste keys, the fallback, what became of a text.
//! The sinks themselves are utter-platform's (paste, type, clipboard, stdout).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::DesktopError;

/// How dictated text reaches the user. Spelled as in the settings file,
/// which the CLI's `--output` takes too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum OutputMethod {
    Paste,
    Type,
    Clipboard,
    /// Printed: the command line only.
    Stdout,
}

/// The keystroke that pastes in the target app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub enum PasteKeys {
    /// Ctrl+V (Cmd+V on macOS).
    #[serde(rename = "ctrl+v")]
    Standard,
    /// Shift+Insert: X11 terminals. Not on macOS (Mac keyboards have no Insert key).
    #[serde(rename = "shift+insert")]
    ShiftInsert,
    /// Ctrl+Shift+V: most Linux terminal emulators.
    #[serde(rename = "ctrl+shift+v")]
    CtrlShiftV,
}

/// What to do when the focused app never reads a paste (it ignores the
/// paste keys, or nothing that takes text has focus). Spelled as in the
/// settings file; the CLI's `--paste-fallback` takes the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PasteFallback {
    /// Leave the text on the clipboard and say "press Ctrl+V": nothing is
    /// typed into a window that may take key presses as commands.
    #[default]
    Clipboard,
    /// Type the text instead (apps that block paste).
    Type,
}

/// The key pressed after a dictation's text, to send it (a chat box, a
/// terminal, an AI agent's prompt). Spelled as in the settings file; the
/// CLI's `--submit` takes the same words in kebab case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Submit {
    /// Nothing after the text.
    #[default]
    None,
    Enter,
    /// Ctrl+Enter (Cmd+Enter on macOS): sends in apps where Enter makes a new line.
    CtrlEnter,
    /// Shift+Enter.
    ShiftEnter,
}

impl Submit {
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Enter => "Enter",
            Self::CtrlEnter if cfg!(target_os = "macos") => "Cmd+Enter",
            Self::CtrlEnter => "Ctrl+Enter",
            Self::ShiftEnter => "Shift+Enter",
        }
    }
}

/// A key an edit command presses ("press tab"), or that takes a text back
/// out ("scratch that": Backspace once per character).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum EditKey {
    Backspace,
    Enter,
    Tab,
    Escape,
}

/// What became of a delivered text, as far as this desktop can tell. Utter
/// reports `pasted` only where the app was seen reading the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Delivered {
    /// The focused app read the pasted text (X11; Wayland with data-control).
    Pasted,
    /// The paste keys were sent, but this desktop gives no sign of the app
    /// reading the clipboard (macOS, Windows, GNOME on Wayland).
    PasteUnconfirmed,
    /// The app never read the paste: the text was typed instead.
    TypedAfterUnreadPaste,
    /// The app never read the paste: the text is left on the clipboard.
    LeftOnClipboard,
    Typed,
    OnClipboard,
    Printed,
}

impl Delivered {
    /// The method that actually delivered the text (a paste the app never
    /// read was typed, or left on the clipboard).
    pub fn method(self) -> OutputMethod {
        match self {
            Self::Pasted | Self::PasteUnconfirmed => OutputMethod::Paste,
            Self::TypedAfterUnreadPaste | Self::Typed => OutputMethod::Type,
            Self::LeftOnClipboard | Self::OnClipboard => OutputMethod::Clipboard,
            Self::Printed => OutputMethod::Stdout,
        }
    }

    /// Whether the text went into the app (not onto the clipboard or stdout).
    pub fn in_app(self) -> bool {
        matches!(
            self,
            Self::Pasted | Self::PasteUnconfirmed | Self::TypedAfterUnreadPaste | Self::Typed
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Pasted => "pasted",
            Self::PasteUnconfirmed => "paste sent, unconfirmed",
            Self::TypedAfterUnreadPaste => "typed (the paste was not read)",
            Self::LeftOnClipboard => "left on the clipboard (the paste was not read)",
            Self::Typed => "typed",
            Self::OnClipboard => "on the clipboard",
            Self::Printed => "printed",
        }
    }
}

/// A delivery's outcome, and what the user should be told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub delivered: Delivered,
    /// Something the user must know (the paste was not read; part of their
    /// clipboard could not be kept).
    pub notice: Option<String>,
}

impl From<Delivered> for Outcome {
    fn from(delivered: Delivered) -> Self {
        Self {
            delivered,
            notice: None,
        }
    }
}

/// How one text is delivered: the output settings, with the focused app's
/// profile applied (the core's `profiles` module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    pub method: OutputMethod,
    pub paste_keys: PasteKeys,
    pub trailing_space: bool,
    /// The key pressed once the text is in the app.
    pub submit: Submit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OutputConfig {
    pub method: OutputMethod,
    pub paste_keys: PasteKeys,
    pub restore_clipboard: bool,
    pub trailing_space: bool,
    /// Longest wait for the target app to read the clipboard before restoring it.
    pub paste_timeout: Duration,
    /// What happens when the app does not read the paste within `paste_timeout`.
    pub paste_fallback: PasteFallback,
    /// The key pressed after each text (none by default).
    pub submit: Submit,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            method: OutputMethod::Paste,
            paste_keys: PasteKeys::Standard,
            restore_clipboard: true,
            trailing_space: false,
            paste_timeout: Duration::from_secs(2),
            paste_fallback: PasteFallback::default(),
            submit: Submit::None,
        }
    }
}

impl OutputConfig {
    /// Delivery as configured, before any profile.
    pub fn delivery(&self) -> Delivery {
        Delivery {
            method: self.method,
            paste_keys: self.paste_keys,
            trailing_space: self.trailing_space,
            submit: self.submit,
        }
    }
}

impl OutputMethod {
    pub fn name(self) -> &'static str {
        match self {
            Self::Paste => "paste",
            Self::Type => "type",
            Self::Clipboard => "clipboard",
            Self::Stdout => "stdout",
        }
    }
}

/// Where dictated text goes. The dictation service only ever calls this.
pub trait TextSink {
    /// Delivers `text` (never empty) to the user as `how` says: the paste
    /// keys and trailing space always; a set of sinks (utter-platform's `SinkSet`) also switches method.
    /// The outcome's [`Delivered::method`] is the method actually used.
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError>;

    /// Presses `key` in the focused app, after a text was delivered into it.
    /// Sinks that cannot press keys (the clipboard, stdout) refuse.
    fn press_submit(&mut self, key: Submit) -> Result<(), DesktopError> {
        Err(DesktopError::Unavailable(format!(
            "this output cannot press {}",
            key.name()
        )))
    }

    /// Presses `key` `times` times in the focused app (an edit command).
    /// Sinks that cannot press keys refuse.
    fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), DesktopError> {
        let _ = times;
        Err(DesktopError::Unavailable(format!(
            "this output cannot press {key:?}"
        )))
    }
}
