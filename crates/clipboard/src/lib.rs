//! The whole clipboard kept across a paste on macOS and Windows: every type or
//! format the previous owner put there (an image, rich text, a file list, an
//! app's own registered formats) is copied before Utter puts the dictated text
//! on the clipboard, and written back afterwards. Linux's X11 and Wayland
//! equivalents live in utter-core (`platform::output`), whose paste sink uses
//! this crate's [`Snapshot`] the same way.
//!
//! What cannot be copied is named in [`Snapshot::lost`] so that the user is
//! told, never silently left with less than they had.

/// Longest the whole copy may take: it is on the path from the key release to
/// the text (as on Wayland), and an owner that is slow to render its data must
/// not hold a paste up for long.
#[cfg(any(windows, target_os = "macos"))]
const SNAPSHOT_BUDGET: std::time::Duration = std::time::Duration::from_millis(1500);
/// The most we copy (as on X11 and Wayland): a bigger clipboard is not kept.
#[cfg(any(windows, target_os = "macos"))]
const MAX_BYTES: usize = 64 << 20;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{ClipboardError, Snapshot};

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub use macos::{mark_transient, ClipboardError, Snapshot};
