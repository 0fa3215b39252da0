//! The text selected in the focused app, for a spoken command: the
//! [`SelectionReader`] port. How each desktop reads it is utter-platform's.

use crate::DesktopError;

/// Reads the focused app's selected text.
pub trait SelectionReader {
    /// `None` when nothing is selected.
    fn selected_text(&mut self) -> Result<Option<String>, DesktopError>;
}

/// No selection can be read (no display; scripts with `--output stdout`).
pub struct NoSelection;

impl SelectionReader for NoSelection {
    fn selected_text(&mut self) -> Result<Option<String>, DesktopError> {
        Ok(None)
    }
}
