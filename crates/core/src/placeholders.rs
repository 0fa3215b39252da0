//! The values of a snippet's placeholders at the moment it is inserted:
//! `{date}` and `{time}` from the clock in the user's time zone, `{clipboard}`
//! the clipboard's text (read only when a snippet that holds it fires).

use utter_postprocess::{Placeholder, PlaceholderValues};

/// The clock and the system clipboard.
#[derive(Debug, Default)]
pub struct SystemValues;

impl PlaceholderValues for SystemValues {
    fn value(&self, placeholder: Placeholder) -> Option<String> {
        let now = chrono::Local::now();
        match placeholder {
            Placeholder::Date => Some(now.format("%Y-%m-%d").to_string()),
            Placeholder::Time => Some(now.format("%H:%M").to_string()),
            Placeholder::Clipboard => clipboard_text(),
        }
    }
}

/// The clipboard's text; `None` when it holds none or cannot be read (the
/// caller tells the user). arboard opens its own connection (X11, Wayland
/// data-control, NSPasteboard, Win32), usable from any thread.
fn clipboard_text() -> Option<String> {
    let text = arboard::Clipboard::new()
        .and_then(|mut clipboard| clipboard.get_text())
        .map_err(|e| tracing::warn!(error = %e, "a snippet's {{clipboard}} could not be read"))
        .ok()?;
    (!text.is_empty()).then_some(text)
}
