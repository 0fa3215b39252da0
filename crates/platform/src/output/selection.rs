//! The text selected in the focused app, for AI command mode, read when the
//! command key goes down (before the user's focus can move).
//!
//! - Linux (X11, and Wayland compositors with data-control): the PRIMARY
//!   selection, which holds the selected text without a key press or a
//!   clipboard change (Ctrl+C would interrupt a terminal). An app may keep
//!   owning PRIMARY after its text is deselected, so the text last selected
//!   there can come back; the result is then inserted at the cursor.
//! - macOS and Windows, which have no PRIMARY: the copy keystroke (Cmd+C /
//!   Ctrl+C, on the main thread on macOS as enigo's TIS lookup requires), the
//!   clipboard read once it changes, and the previous clipboard put back. A
//!   marker put on the clipboard first tells "nothing selected" (it stays)
//!   from a selection (it is replaced).

use std::time::Duration;

pub use utter_ports::selection::{NoSelection, SelectionReader};

use super::{DesktopError, OutputEnv, OutputError};

/// The desktop's selection, as the module says.
pub struct SystemSelection {
    #[cfg_attr(desktop_linux, allow(dead_code))]
    env: OutputEnv,
    clipboard: arboard::Clipboard,
}

/// How long the app may take to answer the copy keystroke.
#[cfg_attr(desktop_linux, allow(dead_code))]
const COPY_TIMEOUT: Duration = Duration::from_millis(600);

impl SystemSelection {
    pub fn new(env: OutputEnv) -> Result<Self, OutputError> {
        Ok(Self {
            env,
            clipboard: arboard::Clipboard::new().map_err(OutputError::Clipboard)?,
        })
    }
}

impl SelectionReader for SystemSelection {
    #[cfg(desktop_linux)]
    fn selected_text(&mut self) -> Result<Option<String>, DesktopError> {
        use arboard::{GetExtLinux, LinuxClipboardKind};
        let read = self
            .clipboard
            .get()
            .clipboard(LinuxClipboardKind::Primary)
            .text();
        match read {
            Ok(text) if !text.trim().is_empty() => Ok(Some(text)),
            Ok(_) | Err(arboard::Error::ContentNotAvailable) => Ok(None),
            Err(e) => Err(OutputError::Clipboard(e).into()),
        }
    }

    #[cfg(not(desktop_linux))]
    fn selected_text(&mut self) -> Result<Option<String>, DesktopError> {
        use std::time::Instant;
        let previous = self.clipboard.get_text().ok();
        let marker = format!(
            "utter: no selection {:?}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
        );
        self.clipboard
            .set_text(marker.clone())
            .map_err(OutputError::Clipboard)?;
        let copied = super::sinks::press_copy_keys(&self.env).map(|()| {
            let deadline = Instant::now() + COPY_TIMEOUT;
            loop {
                match self.clipboard.get_text() {
                    Ok(text) if text != marker => break Some(text),
                    _ if Instant::now() >= deadline => break None,
                    _ => std::thread::sleep(Duration::from_millis(15)),
                }
            }
        });
        // The clipboard as it was, whatever happened.
        let restored = match previous {
            Some(text) => self.clipboard.set_text(text),
            None => self.clipboard.clear(),
        };
        let copied = copied?;
        restored.map_err(OutputError::Clipboard)?;
        Ok(copied.filter(|t| !t.trim().is_empty()))
    }
}
