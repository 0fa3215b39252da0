//! The values of a snippet's placeholders at the moment it is inserted:
//! `{date}` and `{time}` from the clock in the user's time zone, `{clipboard}`
//! the clipboard's text through utter-ports' [`ClipboardText`] (read only
//! when a snippet that holds it fires).

use std::sync::Arc;

use utter_ports::clipboard::ClipboardText;
use utter_postprocess::{Placeholder, PlaceholderValues};

/// The clock and a clipboard.
#[derive(Debug)]
pub struct SystemValues {
    pub clipboard: Arc<dyn ClipboardText>,
}

impl PlaceholderValues for SystemValues {
    fn value(&self, placeholder: Placeholder) -> Option<String> {
        let now = chrono::Local::now();
        match placeholder {
            Placeholder::Date => Some(now.format("%Y-%m-%d").to_string()),
            Placeholder::Time => Some(now.format("%H:%M").to_string()),
            Placeholder::Clipboard => self.clipboard.text(),
        }
    }
}
