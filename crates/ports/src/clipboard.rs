//! The clipboard's text, for a snippet's `{clipboard}` placeholder: read on
//! the service thread only when such a snippet fires.

use std::fmt;

/// Reads the clipboard's text. `None` when it holds none or cannot be read
/// (the implementation logs why; the snippet says the value is missing).
pub trait ClipboardText: Send + Sync + fmt::Debug {
    fn text(&self) -> Option<String>;
}

/// No clipboard (a server, a test): `{clipboard}` is always missing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoClipboard;

impl ClipboardText for NoClipboard {
    fn text(&self) -> Option<String> {
        None
    }
}
