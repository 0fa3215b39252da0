//! utter-postprocess: what happens to the engine's text before the user sees
//! it, in one place for dictation and file transcripts: the user's
//! replacements, spoken punctuation (dictation only), clean-up, and the
//! dictation's first capital. Pure functions over text; the settings say
//! which steps run. `utter-core` re-exports it as `utter_postprocess`.
//!
//! Order: clean-up first (a filler must not split a rule's words), then
//! spoken commands, then the vocabulary's sound-alike corrections, then the
//! user's replacements (their spelling wins, and may itself contain words
//! that sound like commands), then the first capital, then the snippets
//! (dictation only; their stored text is inserted as written).

mod cleanup;
mod commands;
pub mod doubts;
mod replace;
pub mod snippets;
pub mod sounds_like;
mod tokens;
pub mod vocabulary;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use replace::{Replacement, RuleError};
pub use snippets::{Placeholder, PlaceholderValues, Snippet, SnippetError};

/// The text rules as the user set them (part of the settings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
pub struct TextRulesConfig {
    pub replacements: Vec<Replacement>,
    /// "comma", "new line"... are written as marks (English).
    pub spoken_punctuation: bool,
    /// Drop fillers and stuttered repeats.
    pub clean_up: bool,
    /// Stored texts inserted by a spoken trigger (dictation only).
    pub snippets: Vec<Snippet>,
}

/// The rules, checked and compiled once per settings change.
#[derive(Debug, Clone)]
pub struct TextRules {
    /// The user's vocabulary as a correction of what sounds like it.
    sounds_like: sounds_like::SoundsLike,
    replacements: Vec<replace::Compiled>,
    spoken_punctuation: bool,
    clean_up: bool,
    snippets: snippets::Snippets,
    /// Off for an app whose profile turns snippets off.
    snippets_on: bool,
    placeholders: Arc<dyn PlaceholderValues>,
}

impl Default for TextRules {
    fn default() -> Self {
        Self {
            sounds_like: Default::default(),
            replacements: Vec::new(),
            spoken_punctuation: false,
            clean_up: false,
            snippets: Default::default(),
            snippets_on: true,
            placeholders: Arc::new(snippets::NoValues),
        }
    }
}

/// Text as the user gets it, and the engine's text when a rule changed it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Processed {
    pub text: String,
    pub raw: Option<String>,
    /// The triggers of the snippets inserted (their text is to arrive as
    /// stored: the AI rewrite leaves such a dictation alone).
    pub snippets: Vec<String>,
    /// Placeholders of an inserted snippet that had no value ("the
    /// clipboard holds no text"), to be told to the user.
    pub unavailable: Vec<Placeholder>,
}

impl Processed {
    fn new(raw: &str, text: String) -> Self {
        let raw = raw.trim();
        let raw = (text != raw).then(|| raw.to_string());
        Self {
            text,
            raw,
            ..Self::default()
        }
    }
}

impl TextRules {
    pub fn new(config: &TextRulesConfig) -> Result<Self, RuleError> {
        let replacements = config
            .replacements
            .iter()
            .enumerate()
            .map(|(i, r)| replace::Compiled::new(i, r))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            replacements,
            spoken_punctuation: config.spoken_punctuation,
            clean_up: config.clean_up,
            snippets: snippets::Snippets::new(&config.snippets)?,
            ..Self::default()
        })
    }

    /// The rules with snippets on or off (a per-app profile's choice).
    pub fn with_snippets(mut self, on: bool) -> Self {
        self.snippets_on = on;
        self
    }

    /// Where a snippet's `{date}`, `{time}` and `{clipboard}` get their
    /// values (without this, none have one).
    pub fn with_placeholders(mut self, values: Arc<dyn PlaceholderValues>) -> Self {
        self.placeholders = values;
        self
    }

    /// The rules, with stretches of text that sound like an entry of
    /// `vocabulary` written as the entry (every model family; see
    /// [`sounds_like`]).
    pub fn with_vocabulary(mut self, vocabulary: &[String]) -> Self {
        self.sounds_like = sounds_like::SoundsLike::new(vocabulary);
        self
    }

    /// Stretches of the engine's `raw` text that may be a listed entry
    /// misheard as another word, for the engine to recheck (see [`doubts`]).
    pub fn vocabulary_doubts(&self, raw: &str) -> Vec<doubts::Doubt> {
        doubts::find(&self.sounds_like, raw)
    }

    /// The rules with spoken punctuation ("comma", "new line") on or off
    /// (a per-app profile's choice).
    pub fn with_spoken_punctuation(mut self, on: bool) -> Self {
        self.spoken_punctuation = on;
        self
    }

    /// The rules with clean-up (fillers, stutters) on or off.
    pub fn with_clean_up(mut self, on: bool) -> Self {
        self.clean_up = on;
        self
    }

    /// The rules for dictating in `language` (`None`: detected): spoken
    /// commands are English words, so they are off for another language.
    pub fn for_language(mut self, language: Option<&str>) -> Self {
        if language.is_some_and(|l| l != "en") {
            self.spoken_punctuation = false;
        }
        self
    }

    /// A dictation's text. `continues_sentence`: the user's previous
    /// dictation, just before, ended mid-sentence, so this one starts in
    /// lower case ("Dear Anna," + "thanks for...").
    pub fn dictation(&self, raw: &str, continues_sentence: bool) -> Processed {
        let mut text = self.common(raw, self.spoken_punctuation);
        if continues_sentence {
            let mut tokens = tokens::tokenize(&text);
            if let Some(first) = tokens.first_mut() {
                first.decapitalize();
            }
            text = tokens::render(&tokens);
        }
        let inserted = self
            .snippets_on
            .then(|| self.snippets.apply(&text, self.placeholders.as_ref()))
            .flatten();
        match inserted {
            Some(inserted) => Processed {
                snippets: inserted.triggers,
                unavailable: inserted.unavailable,
                ..Processed::new(raw, inserted.text)
            },
            None => Processed::new(raw, text),
        }
    }

    /// One segment of a file transcript: replacements and clean-up, no
    /// commands (a recording's "new paragraph" was said to its listeners).
    pub fn transcript(&self, raw: &str) -> Processed {
        Processed::new(raw, self.common(raw, false))
    }

    fn common(&self, raw: &str, commands: bool) -> String {
        let mut text = raw.trim().to_string();
        if self.clean_up || commands {
            let mut t = tokens::tokenize(&text);
            if self.clean_up {
                t = cleanup::apply(t);
            }
            if commands {
                t = commands::apply(t);
            }
            text = tokens::render(&t);
        }
        text = self.sounds_like.apply(&text);
        for rule in &self.replacements {
            text = rule.apply(&text);
        }
        text
    }
}

/// A dictation that follows `previous` continues its sentence: the previous
/// text ended without a mark that closes a sentence (or a line).
pub fn continues_sentence(previous: &str) -> bool {
    let end = previous.trim_end_matches(' ');
    !end.is_empty() && !end.ends_with(['.', '!', '?', '…', '\n', ':', '"', ')'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(replacements: &[(&str, &str)], spoken_punctuation: bool, clean_up: bool) -> TextRules {
        TextRules::new(&TextRulesConfig {
            replacements: replacements
                .iter()
                .map(|(h, w)| Replacement {
                    heard: h.to_string(),
                    written: w.to_string(),
                    regex: false,
                })
                .collect(),
            spoken_punctuation,
            clean_up,
            snippets: Vec::new(),
        })
        .unwrap()
    }

    #[test]
    fn no_rules_change_nothing_and_keep_no_raw_copy() {
        let p = TextRules::default().dictation("  Hello there.  ", false);
        assert_eq!(p, Processed::new("Hello there.", "Hello there.".into()));
        assert_eq!(p.raw, None);
    }

    #[test]
    fn all_steps_together_keep_the_engine_text_alongside() {
        let r = rules(&[("cooper netties", "Kubernetes")], true, true);
        let p = r.dictation(
            "Um, deploy cooper netties comma then, uh, test. New line. Done period",
            false,
        );
        assert_eq!(p.text, "Deploy Kubernetes, then test.\nDone.");
        assert_eq!(
            p.raw.as_deref(),
            Some("Um, deploy cooper netties comma then, uh, test. New line. Done period")
        );
    }

    #[test]
    fn file_transcripts_get_replacements_and_clean_up_but_no_commands() {
        let r = rules(&[("get hub", "GitHub")], true, true);
        let p = r.transcript("Um, open get hub, comma, new line.");
        assert_eq!(p.text, "Open GitHub, comma, new line.");
    }

    #[test]
    fn a_dictation_that_continues_a_sentence_starts_in_lower_case() {
        let r = TextRules::default();
        assert!(continues_sentence("Dear Anna,"));
        assert!(!continues_sentence("Done."));
        assert!(!continues_sentence(""));
        assert_eq!(
            r.dictation("Thanks for the notes.", true).text,
            "thanks for the notes."
        );
        assert_eq!(r.dictation("I agree.", true).text, "I agree.");
        assert_eq!(
            r.dictation("Thanks for the notes.", false).text,
            "Thanks for the notes."
        );
    }

    #[test]
    fn spoken_commands_are_english_only() {
        let r = rules(&[], true, false);
        assert_eq!(
            r.clone()
                .for_language(Some("en"))
                .dictation("yes comma no", false)
                .text,
            "yes, no"
        );
        assert_eq!(
            r.clone()
                .for_language(None)
                .dictation("yes comma no", false)
                .text,
            "yes, no"
        );
        assert_eq!(
            r.for_language(Some("de"))
                .dictation("yes comma no", false)
                .text,
            "yes comma no"
        );
    }

    #[derive(Debug)]
    struct Today;

    impl PlaceholderValues for Today {
        fn value(&self, placeholder: Placeholder) -> Option<String> {
            (placeholder == Placeholder::Date).then(|| "2026-12-03".into())
        }
    }

    fn with_snippets() -> TextRules {
        TextRules::new(&TextRulesConfig {
            spoken_punctuation: true,
            clean_up: true,
            snippets: vec![
                Snippet {
                    trigger: "my address".into(),
                    text: "12 Main Street\nSpringfield".into(),
                    in_sentence: true,
                },
                Snippet {
                    trigger: "sign off".into(),
                    text: "Best regards,\nAnna ({date})".into(),
                    in_sentence: false,
                },
            ],
            ..TextRulesConfig::default()
        })
        .unwrap()
        .with_placeholders(Arc::new(Today))
    }

    #[test]
    fn a_snippet_alone_or_in_a_sentence_after_the_other_rules() {
        let r = with_snippets();
        let p = r.dictation("Um, sign off.", false);
        assert_eq!(p.text, "Best regards,\nAnna (2026-12-03)");
        assert_eq!(p.raw.as_deref(), Some("Um, sign off."));
        assert_eq!(p.snippets, ["sign off"]);
        let p = r.dictation("Ship it to uh my address comma please", true);
        assert_eq!(p.text, "ship it to 12 Main Street\nSpringfield, please");
        assert_eq!(p.snippets, ["my address"]);
        // Not a trigger: the words stay.
        let p = r.dictation("Please sign off on it.", false);
        assert_eq!(p.text, "Please sign off on it.");
        assert!(p.snippets.is_empty());
        // File transcripts never insert snippets.
        assert_eq!(r.transcript("Sign off.").text, "Sign off.");
    }

    #[test]
    fn snippets_turned_off_leave_the_trigger_as_words() {
        let r = with_snippets().with_snippets(false);
        let p = r.dictation("Sign off.", false);
        assert_eq!(p.text, "Sign off.");
        assert!(p.snippets.is_empty());
    }

    #[test]
    fn a_replacement_next_to_punctuation_and_a_command() {
        let r = rules(&[("utter", "Utter")], true, false);
        assert_eq!(
            r.dictation("I use utter period", false).text,
            "I use Utter."
        );
        assert_eq!(
            r.dictation("Utter, comma, utter?", false).text,
            "Utter, Utter?"
        );
    }
}
