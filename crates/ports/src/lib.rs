//! utter-ports: the ends the dictation service talks through, and nothing
//! else. Each is a small trait with plain data and plain errors, so the
//! service (in utter-core) can be written, read and tested without any OS
//! crate, and the implementations are plugged in at setup:
//!
//! - [`control`]: the messages that drive a dictation (keys, start, stop…).
//! - [`output`]: [`output::TextSink`], where dictated text goes.
//! - [`keys`]: [`keys::RecordingKeys`], the keys grabbed only while recording.
//! - [`focus`]: [`focus::FocusProbe`], which app the user dictates into.
//! - [`selection`]: [`selection::SelectionReader`], the selected text for a command.
//! - [`microphone`]: [`microphone::Microphone`], audio in.
//! - [`clipboard`]: [`clipboard::ClipboardText`], a snippet's `{clipboard}`.
//! - [`other_audio`]: [`other_audio::OtherAudio`], other programs' sound lowered while recording.
//! - [`hotkey`]: the hotkey grammar (pure), so settings are checked without a desktop.
//!
//! It must not know: any OS or desktop crate (arboard, enigo, x11rb, cpal…),
//! engines, models or settings. utter-platform implements the desktop ports,
//! utter-capture the microphone; the tests' fakes implement them all.

pub mod clipboard;
pub mod control;
pub mod focus;
pub mod hotkey;
pub mod keys;
pub mod microphone;
pub mod other_audio;
pub mod output;
pub mod selection;

/// Why the desktop refused a text or a selection, as the platform worded it.
/// Plain strings: the OS crates' own errors stay in utter-platform (its
/// `OutputError`, which converts into this), and the service only reports them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesktopError {
    /// The clipboard could not be read or written.
    #[error("{0}")]
    Clipboard(String),
    /// Key presses could not be simulated (a permission, no keyboard to press with).
    #[error("{0}")]
    Keys(String),
    /// The method cannot work in this session at all (no display, no paste keys).
    #[error("{0}")]
    Unavailable(String),
}
