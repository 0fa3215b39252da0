//! Auto-submit: the key pressed after a dictation's text (Enter in a chat
//! box, a terminal, an AI agent's prompt), pressed only once the text is
//! known to be in the app; and the spoken trigger ("send") that asks for it
//! at the very end of a dictation. Pure: the service acts on the answers.

use std::time::Duration;

use utter_ports::output::{Delivered, Submit};

/// Where the desktop cannot tell that the app read a paste (macOS,
/// Windows, GNOME on Wayland), the key waits this long after the paste
/// keys, so the app has taken the text before Enter sends it.
pub const UNCONFIRMED_PASTE_WAIT: Duration = Duration::from_millis(250);

/// What to do after a delivery when a submit key is wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubmitStep {
    Press,
    /// The paste could not be confirmed: press after [`UNCONFIRMED_PASTE_WAIT`].
    PressAfter(Duration),
    /// Not pressed, and the user is told why.
    Skip(String),
}

/// Whether `key` is pressed after a text `delivered` so: only where the
/// text is in the app. A text left on the clipboard (the paste was not
/// read, or the clipboard was asked for) is never sent.
pub fn after_delivery(delivered: Delivered, key: Submit) -> SubmitStep {
    let key = key.name();
    match delivered {
        Delivered::Pasted | Delivered::Typed | Delivered::TypedAfterUnreadPaste => {
            SubmitStep::Press
        }
        Delivered::PasteUnconfirmed => SubmitStep::PressAfter(UNCONFIRMED_PASTE_WAIT),
        Delivered::LeftOnClipboard | Delivered::OnClipboard => SubmitStep::Skip(format!(
            "{key} was not pressed: the text is on the clipboard, not in the app"
        )),
        Delivered::Printed => SubmitStep::Skip(format!(
            "{key} was not pressed: the text was printed, not put in an app"
        )),
    }
}

/// The words that send a dictation (the settings': `settings::defaults`).
pub use crate::settings::defaults::SPOKEN_SUBMIT_WORDS;

/// `text` without its spoken trigger, when its last sentence is one of
/// `words` and nothing else ("See you at six. Send." → "See you at six.").
/// A trigger inside a sentence ("I will send it tomorrow.") is text, and a
/// dictation that is only the trigger sends nothing (there is no text).
pub fn strip_spoken_submit(text: &str, words: &[String]) -> Option<String> {
    let trimmed = text.trim_end();
    let body = trimmed.trim_end_matches(['.', '!', '?', '。', ' ']);
    let cut = body
        .char_indices()
        .rev()
        .find(|(_, c)| matches!(c, '.' | '!' | '?' | '\n' | '。'))
        .map(|(i, c)| i + c.len_utf8())?;
    let (before, last) = body.split_at(cut);
    let last = last.trim();
    let last = last.to_lowercase();
    let said = words.iter().any(|w| w.trim().to_lowercase() == last);
    (said && !before.trim().is_empty()).then(|| before.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words() -> Vec<String> {
        SPOKEN_SUBMIT_WORDS.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn enter_waits_for_the_text_to_be_in_the_app() {
        assert_eq!(
            after_delivery(Delivered::Pasted, Submit::Enter),
            SubmitStep::Press
        );
        assert_eq!(
            after_delivery(Delivered::TypedAfterUnreadPaste, Submit::Enter),
            SubmitStep::Press
        );
        assert_eq!(
            after_delivery(Delivered::PasteUnconfirmed, Submit::CtrlEnter),
            SubmitStep::PressAfter(UNCONFIRMED_PASTE_WAIT)
        );
        for unread in [Delivered::LeftOnClipboard, Delivered::OnClipboard] {
            assert!(matches!(
                after_delivery(unread, Submit::Enter),
                SubmitStep::Skip(why) if why.contains("on the clipboard")
            ));
        }
    }

    #[test]
    fn a_trigger_said_alone_at_the_end_is_taken_off_and_sends() {
        let w = words();
        assert_eq!(
            strip_spoken_submit("See you at six. Send.", &w).as_deref(),
            Some("See you at six.")
        );
        assert_eq!(
            strip_spoken_submit("Ready when you are! Send it", &w).as_deref(),
            Some("Ready when you are!")
        );
        assert_eq!(
            strip_spoken_submit("On arrive à huit heures. Envoyer.", &w).as_deref(),
            Some("On arrive à huit heures.")
        );
        assert_eq!(
            strip_spoken_submit("Llego tarde. Envíalo.", &w).as_deref(),
            Some("Llego tarde.")
        );
    }

    #[test]
    fn a_trigger_inside_a_sentence_or_alone_is_text() {
        let w = words();
        for text in [
            "I will send it tomorrow.",
            "Please send.",
            "Send the report to Anna.",
            "Send.",
            "send",
            "The word is send, not sent.",
        ] {
            assert_eq!(strip_spoken_submit(text, &w), None, "{text}");
        }
    }
}
