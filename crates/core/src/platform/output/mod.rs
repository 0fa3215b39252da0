//! Delivering text to the user through a [`TextSink`]: paste into the focused
//! app (clipboard + simulated paste keystroke, previous clipboard restored
//! once the paste has been consumed), type it, leave it on the clipboard, or
//! print it. [`open_sink`] picks the sink that can work in this session and
//! says so when it has to fall back.

mod paste_watch;
mod sinks;

use std::time::Duration;

pub use sinks::{ClipboardSink, PasteSink, StdoutSink, TypeSink};

use super::session::DesktopSession;
use super::MainThread;

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

/// Where dictated text goes. The dictation service only ever calls this.
pub trait TextSink {
    /// Delivers `text` (never empty) to the user.
    fn deliver(&mut self, text: &str) -> Result<(), OutputError>;
    /// The method actually in use (after any fallback).
    fn method(&self) -> OutputMethod;
}

/// What the platform offers a sink.
#[derive(Clone)]
pub struct OutputEnv {
    pub session: DesktopSession,
    /// Where key simulation must run on macOS (enigo resolves the paste key
    /// through the keyboard-layout TIS API, which is main-thread only).
    pub main_thread: Option<MainThread>,
}

impl OutputEnv {
    pub fn detect(main_thread: Option<MainThread>) -> Self {
        Self {
            session: DesktopSession::detect(),
            main_thread,
        }
    }
}

/// Whether `method` can work in `session`; `Err` says why not and what
/// happens instead.
pub fn availability(method: OutputMethod, session: &DesktopSession) -> Result<(), String> {
    let needs_keys = matches!(method, OutputMethod::Paste | OutputMethod::Type);
    match session {
        DesktopSession::Wayland { .. } if needs_keys => Err(
            "simulated key presses do not reach Wayland apps from this build (XTest only reaches \
             XWayland windows): the text is put on the clipboard instead, paste it with Ctrl+V"
                .into(),
        ),
        DesktopSession::Headless if method != OutputMethod::Stdout => Err(
            "there is no display to paste into or hold a clipboard (DISPLAY and WAYLAND_DISPLAY \
             are unset): use --output stdout"
                .into(),
        ),
        _ => Ok(()),
    }
}

/// The sink for `config` in this session, and a notice when it had to fall
/// back to a lesser method (never silently).
pub fn open_sink(
    config: &OutputConfig,
    env: &OutputEnv,
) -> Result<(Box<dyn TextSink>, Option<String>), OutputError> {
    let mut method = config.method;
    let mut notice = None;
    if let Err(why) = availability(method, &env.session) {
        if env.session.is_wayland() {
            notice = Some(format!("{} output: {why}", method.name()));
            method = OutputMethod::Clipboard;
        } else {
            return Err(match method {
                OutputMethod::Clipboard => OutputError::Clipboard(why),
                _ => OutputError::Input(why),
            });
        }
    }
    let sink: Box<dyn TextSink> = match method {
        OutputMethod::Stdout => Box::new(StdoutSink::new(config.trailing_space)),
        OutputMethod::Clipboard => Box::new(ClipboardSink::new(config.trailing_space)?),
        OutputMethod::Type => Box::new(TypeSink::new(config.trailing_space)?),
        OutputMethod::Paste => Box::new(PasteSink::new(config.clone(), env.clone())?),
    };
    Ok((sink, notice))
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

/// The text as delivered: with the trailing space when asked.
fn finish(text: &str, trailing_space: bool) -> String {
    if trailing_space {
        format!("{text} ")
    } else {
        text.to_string()
    }
}
