//! Edit commands: a dictation that is nothing but a command edits instead
//! of typing — "scratch that" takes the last text back out of the app,
//! "press enter" (tab, escape) presses the key. Said inside a sentence
//! ("I told him to scratch that idea") it is text: only a whole dictation
//! is a command. "New line" and "new paragraph" are spoken punctuation
//! (utter-postprocess). Pure: the service acts on the answer.

use std::time::Duration;

use utter_ports::output::EditKey;

/// What a dictation that is a command asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditCommand {
    /// Take the last text back out of the app.
    ScratchThat,
    Press(EditKey),
}

impl EditCommand {
    /// As `text_delivered`'s `edit` says it.
    pub fn name(self) -> &'static str {
        match self {
            Self::ScratchThat => "scratch that",
            Self::Press(EditKey::Enter) => "press enter",
            Self::Press(EditKey::Tab) => "press tab",
            Self::Press(EditKey::Escape) => "press escape",
            Self::Press(EditKey::Backspace) => "press backspace",
        }
    }
}

/// The last text is taken back only this soon after it went in: later,
/// the user has likely moved on and the keys would erase their own typing.
pub const SCRATCH_WITHIN: Duration = Duration::from_secs(120);

/// The command a whole dictation is, if it is one (any case, the
/// engine's punctuation around it ignored).
pub fn command(text: &str) -> Option<EditCommand> {
    let said: String = text
        .trim()
        .trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let key = |name: &str| match name {
        "enter" | "return" => Some(EditKey::Enter),
        "tab" => Some(EditKey::Tab),
        "escape" => Some(EditKey::Escape),
        _ => None,
    };
    match said.as_str() {
        "scratch that" | "delete that" | "undo that" => Some(EditCommand::ScratchThat),
        _ => said
            .strip_prefix("press ")
            .and_then(key)
            .map(EditCommand::Press),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_dictation_that_is_a_command_edits() {
        assert_eq!(command("Scratch that."), Some(EditCommand::ScratchThat));
        assert_eq!(command(" delete that "), Some(EditCommand::ScratchThat));
        assert_eq!(
            command("Press Enter."),
            Some(EditCommand::Press(EditKey::Enter))
        );
        assert_eq!(
            command("press  tab"),
            Some(EditCommand::Press(EditKey::Tab))
        );
        assert_eq!(
            command("Press escape!"),
            Some(EditCommand::Press(EditKey::Escape))
        );
    }

    #[test]
    fn a_command_inside_prose_is_text() {
        for text in [
            "I told him to scratch that idea.",
            "Scratch that, I meant Tuesday.",
            "Please press enter when you are done.",
            "Press the red button.",
            "press",
            "",
        ] {
            assert_eq!(command(text), None, "{text}");
        }
    }
}
