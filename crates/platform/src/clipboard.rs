//! The system clipboard's text for a snippet's `{clipboard}`
//! (utter-ports' [`ClipboardText`]).

use utter_ports::clipboard::ClipboardText;

/// Reads the clipboard when asked. arboard opens its own connection (X11,
/// Wayland data-control, NSPasteboard, Win32) for each read, usable from
/// any thread, so nothing is held between snippets.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClipboard;

impl ClipboardText for SystemClipboard {
    fn text(&self) -> Option<String> {
        let text = arboard::Clipboard::new()
            .and_then(|mut clipboard| clipboard.get_text())
            .map_err(|e| tracing::warn!(error = %e, "a snippet's {{clipboard}} could not be read"))
            .ok()?;
        (!text.is_empty()).then_some(text)
    }
}
