//! Snippets: stored texts that a spoken trigger inserts ("my address" →
//! the address, on three lines). A snippet fires when the whole dictation is
//! its trigger, or, when the user allows it for that snippet, where the
//! trigger is said inside a sentence. Its text may hold `{date}`, `{time}`
//! and `{clipboard}`, filled in at the moment of insertion.
//!
//! The trigger is matched like the vocabulary (see [`crate::sounds_like`]):
//! the same letters (any case, hyphens, spaces, punctuation), or the same
//! phonetic key with the spelling at most one letter in eight off ("my
//! adress"). Guarded against firing on speech that merely shares words with
//! a trigger: every word of the stretch must belong to the match, a stretch
//! never runs over a punctuation mark, and a trigger allowed inside
//! sentences needs two words or more (a single word is said in passing far
//! too often). Measured on the benchmark texts in docs/benchmarks.md
//! ("Snippets: false triggers").

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::sounds_like::{edit_distance, key, letters, split_words, Word};

/// One snippet as the user set it (part of the text rules' settings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Snippet {
    /// What the user says to insert it ("my address").
    pub trigger: String,
    /// What is inserted: any text, on several lines if need be, with
    /// `{date}`, `{time}` or `{clipboard}` where those go.
    pub text: String,
    /// Also inserted where the trigger is said inside a sentence; otherwise
    /// only when the trigger is all that was said.
    #[serde(default)]
    pub in_sentence: bool,
}

/// What a snippet's text can hold besides plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// Today, `2026-12-03` (local time).
    Date,
    /// Now, `14:05` (local time).
    Time,
    /// The clipboard's text at the moment of insertion.
    Clipboard,
}

impl Placeholder {
    pub const ALL: [Self; 3] = [Self::Date, Self::Time, Self::Clipboard];

    /// As written in a snippet, without the braces.
    pub fn name(self) -> &'static str {
        match self {
            Self::Date => "date",
            Self::Time => "time",
            Self::Clipboard => "clipboard",
        }
    }
}

impl fmt::Display for Placeholder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.name())
    }
}

/// Where placeholders get their values (the clock, the clipboard): the
/// app's comes from `utter-core`; this crate stays free of the OS.
pub trait PlaceholderValues: Send + Sync + fmt::Debug {
    /// The value now; `None` when it cannot be had (no clipboard text).
    fn value(&self, placeholder: Placeholder) -> Option<String>;
}

/// No values at all: every placeholder is reported as unavailable.
#[derive(Debug, Default)]
pub struct NoValues;

impl PlaceholderValues for NoValues {
    fn value(&self, _: Placeholder) -> Option<String> {
        None
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnippetError {
    #[error("snippet {index}: the trigger is empty")]
    EmptyTrigger { index: usize },
    #[error("snippet \"{trigger}\": the text to insert is empty")]
    EmptyText { trigger: String },
    #[error("snippet \"{trigger}\": {{{name}}} is not a placeholder (use {{date}}, {{time}} or {{clipboard}})")]
    UnknownPlaceholder { trigger: String, name: String },
    #[error("snippet \"{trigger}\": a trigger used inside sentences needs two words or more, so that everyday speech does not set it off")]
    OneWordInSentence { trigger: String },
    #[error("snippets \"{first}\" and \"{second}\" have the same trigger")]
    SameTrigger { first: String, second: String },
}

/// The snippets, checked and prepared once per settings change.
#[derive(Debug, Clone, Default)]
pub struct Snippets {
    entries: Vec<Compiled>,
}

#[derive(Debug, Clone)]
struct Compiled {
    trigger: String,
    parts: Vec<Part>,
    in_sentence: bool,
    letters: String,
    key: String,
    /// Each word's letters.
    word_letters: Vec<String>,
    words: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Value(Placeholder),
}

/// A dictation with snippets inserted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    pub text: String,
    /// The triggers that fired, in order.
    pub triggers: Vec<String>,
    /// Placeholders that had no value (left out of the text).
    pub unavailable: Vec<Placeholder>,
}

impl Snippets {
    pub fn new(snippets: &[Snippet]) -> Result<Self, SnippetError> {
        let mut entries: Vec<Compiled> = Vec::with_capacity(snippets.len());
        for (i, snippet) in snippets.iter().enumerate() {
            let entry = Compiled::new(i + 1, snippet)?;
            if let Some(same) = entries.iter().find(|e| e.letters == entry.letters) {
                return Err(SnippetError::SameTrigger {
                    first: same.trigger.clone(),
                    second: entry.trigger,
                });
            }
            entries.push(entry);
        }
        Ok(Self { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `text` with its snippets inserted, or `None` when no trigger was said.
    pub fn apply(&self, text: &str, values: &dyn PlaceholderValues) -> Option<Inserted> {
        let words = split_words(text);
        if words.is_empty() {
            return None;
        }
        // The whole dictation is a trigger: the snippet's text, exactly.
        let whole = self
            .entries
            .iter()
            .filter_map(|e| e.matches(&words).map(|d| (d, e)))
            .min_by_key(|&(d, _)| d);
        if let Some((_, entry)) = whole {
            let mut unavailable = Vec::new();
            return Some(Inserted {
                text: entry.expand(values, &mut unavailable),
                triggers: vec![entry.trigger.clone()],
                unavailable,
            });
        }
        let chosen = self.in_sentence_matches(&words);
        if chosen.is_empty() {
            return None;
        }
        let mut inserted = Inserted {
            text: String::new(),
            triggers: Vec::new(),
            unavailable: Vec::new(),
        };
        let mut copied_to = 0; // byte offset in `text`
        for (start, n, entry) in chosen {
            inserted
                .text
                .push_str(&text[copied_to..words[start].core_start]);
            let expanded = entry.expand(values, &mut inserted.unavailable);
            inserted.text.push_str(&expanded);
            inserted.triggers.push(entry.trigger.clone());
            copied_to = words[start + n - 1].core_end;
        }
        inserted.text.push_str(&text[copied_to..]);
        Some(inserted)
    }

    /// Stretches inside the text that are a trigger allowed there: the
    /// closest first where they overlap, then in order of the text.
    fn in_sentence_matches(&self, words: &[Word]) -> Vec<(usize, usize, &Compiled)> {
        let mut candidates = Vec::new(); // (distance, start, words, entry)
        for entry in self.entries.iter().filter(|e| e.in_sentence) {
            // A word heard split or two heard joined ("sign off", "signoff").
            let fewest = entry.words.saturating_sub(1).max(1);
            for start in 0..words.len() {
                for n in fewest..=(entry.words + 1).min(words.len() - start) {
                    let span = &words[start..start + n];
                    if span[..n - 1].iter().any(|w| w.ends_clause) {
                        break;
                    }
                    if let Some(distance) = entry.matches(span) {
                        candidates.push((distance, start, n, entry));
                    }
                }
            }
        }
        candidates.sort_by_key(|&(distance, start, n, _)| (distance, start, std::cmp::Reverse(n)));
        let mut taken = vec![false; words.len()];
        let mut chosen = Vec::new();
        for (_, start, n, entry) in candidates {
            if taken[start..start + n].iter().any(|t| *t) {
                continue;
            }
            taken[start..start + n].iter_mut().for_each(|t| *t = true);
            chosen.push((start, n, entry));
        }
        chosen.sort_by_key(|&(start, ..)| start);
        chosen
    }
}

impl Compiled {
    fn new(index: usize, snippet: &Snippet) -> Result<Self, SnippetError> {
        let trigger = snippet.trigger.trim();
        let letters = letters(trigger);
        if letters.is_empty() {
            return Err(SnippetError::EmptyTrigger { index });
        }
        if snippet.text.trim().is_empty() {
            return Err(SnippetError::EmptyText {
                trigger: trigger.into(),
            });
        }
        let word_letters: Vec<String> = split_words(trigger)
            .into_iter()
            .map(|w| w.letters)
            .collect();
        let words = word_letters.len();
        if snippet.in_sentence && words < 2 {
            return Err(SnippetError::OneWordInSentence {
                trigger: trigger.into(),
            });
        }
        Ok(Self {
            trigger: trigger.into(),
            parts: parse(trigger, &snippet.text)?,
            in_sentence: snippet.in_sentence,
            key: key(&letters),
            letters,
            word_letters,
            words,
        })
    }

    /// How far `span` is from the trigger (0: the same letters), if it is
    /// the trigger.
    fn matches(&self, span: &[Word]) -> Option<usize> {
        let heard: String = span.iter().map(|w| w.letters.as_str()).collect();
        if heard == self.letters {
            return Some(0);
        }
        // The same sounds and nearly the same spelling, word for word: "my
        // adress", not "my dress" (two letters off), "by address" (another
        // sound) or "the licenses" for "the license" (another form of the
        // word, not a mishearing of it).
        if self.key.len() < 4 || key(&heard) != self.key || span.len() != self.word_letters.len() {
            return None;
        }
        let inflected = span.iter().zip(&self.word_letters).any(|(heard, listed)| {
            heard.letters != *listed
                && (heard.letters.starts_with(listed.as_str())
                    || listed.starts_with(heard.letters.as_str()))
        });
        if inflected {
            return None;
        }
        let distance = edit_distance(heard.as_bytes(), self.letters.as_bytes());
        (distance <= (self.letters.len() / 8).max(1)).then_some(distance)
    }

    fn expand(&self, values: &dyn PlaceholderValues, unavailable: &mut Vec<Placeholder>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Value(placeholder) => match values.value(*placeholder) {
                    Some(value) => out.push_str(&value),
                    None => {
                        if !unavailable.contains(placeholder) {
                            unavailable.push(*placeholder);
                        }
                    }
                },
            }
        }
        out
    }
}

/// The text split at its placeholders. `{word}` must be one of
/// [`Placeholder::ALL`]; other braces (code, `{}`) are text.
fn parse(trigger: &str, text: &str) -> Result<Vec<Part>, SnippetError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(after.len());
        if name_len == 0 || !after[name_len..].starts_with('}') {
            literal.push_str(&rest[..=open]);
            rest = after;
            continue;
        }
        let name = &after[..name_len];
        let placeholder = Placeholder::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| SnippetError::UnknownPlaceholder {
                trigger: trigger.into(),
                name: name.into(),
            })?;
        literal.push_str(&rest[..open]);
        if !literal.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut literal)));
        }
        parts.push(Part::Value(placeholder));
        rest = &after[name_len + 1..];
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        parts.push(Part::Text(literal));
    }
    Ok(parts)
}

/// Snippets as a text file, for the CLI's `--snippets-file` and the app's
/// import and export: each snippet starts with a `== trigger` line (`==+
/// trigger` for one that may fire inside a sentence), and its text is every
/// line up to the next such line, blank lines at either end dropped. Lines
/// starting with `#` before the first snippet are comments.
pub mod file {
    use super::Snippet;

    /// A line that is neither a comment nor inside a snippet.
    #[derive(Debug, thiserror::Error, PartialEq, Eq)]
    #[error("line {line}: text before the first \"== trigger\" line (a snippet file starts each snippet with one)")]
    pub struct FileError {
        pub line: usize,
    }

    pub fn parse(text: &str) -> Result<Vec<Snippet>, FileError> {
        let mut snippets: Vec<Snippet> = Vec::new();
        let mut body: Vec<&str> = Vec::new();
        let finish = |snippets: &mut Vec<Snippet>, body: &mut Vec<&str>| {
            if let Some(last) = snippets.last_mut() {
                while body.last().is_some_and(|l| l.trim().is_empty()) {
                    body.pop();
                }
                let first = body.iter().position(|l| !l.trim().is_empty());
                last.text = first.map_or(String::new(), |f| body[f..].join("\n"));
            }
            body.clear();
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let header = line
                .strip_prefix("==+")
                .map(|t| (t, true))
                .or_else(|| line.strip_prefix("==").map(|t| (t, false)));
            if let Some((trigger, in_sentence)) = header {
                finish(&mut snippets, &mut body);
                snippets.push(Snippet {
                    trigger: trigger.trim().into(),
                    text: String::new(),
                    in_sentence,
                });
            } else if snippets.is_empty() {
                if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
                    return Err(FileError { line: i + 1 });
                }
            } else {
                body.push(line);
            }
        }
        finish(&mut snippets, &mut body);
        Ok(snippets)
    }

    pub fn render(snippets: &[Snippet]) -> String {
        let mut out = String::from(
            "# Utter snippets: \"== trigger\" starts one (\"==+ trigger\": also inside a sentence);\n\
             # its text follows, {date}, {time} and {clipboard} filled in when it is inserted.\n",
        );
        for s in snippets {
            let mark = if s.in_sentence { "==+" } else { "==" };
            out.push_str(&format!("{mark} {}\n{}\n\n", s.trigger.trim(), s.text));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fixed;

    impl PlaceholderValues for Fixed {
        fn value(&self, placeholder: Placeholder) -> Option<String> {
            match placeholder {
                Placeholder::Date => Some("2026-12-03".into()),
                Placeholder::Time => Some("21:30".into()),
                Placeholder::Clipboard => None,
            }
        }
    }

    fn snippet(trigger: &str, text: &str, in_sentence: bool) -> Snippet {
        Snippet {
            trigger: trigger.into(),
            text: text.into(),
            in_sentence,
        }
    }

    fn snippets() -> Snippets {
        Snippets::new(&[
            snippet("my address", "12 Main Street\nSpringfield", true),
            snippet("sign off", "Best regards,\nAnna\n{date}", false),
            snippet("paste link", "See {clipboard} for more", false),
        ])
        .unwrap()
    }

    fn apply(text: &str) -> Option<String> {
        snippets().apply(text, &Fixed).map(|i| i.text)
    }

    #[test]
    fn a_trigger_said_alone_inserts_the_text_exactly() {
        for said in ["Sign off.", "sign off", "Sign-off!", "Signoff."] {
            assert_eq!(
                apply(said).as_deref(),
                Some("Best regards,\nAnna\n2026-12-03"),
                "{said}"
            );
        }
        assert_eq!(
            apply("My address.").as_deref(),
            Some("12 Main Street\nSpringfield")
        );
    }

    #[test]
    fn a_trigger_inside_a_sentence_fires_only_where_allowed() {
        assert_eq!(
            apply("Please send it to my address, thanks.").as_deref(),
            Some("Please send it to 12 Main Street\nSpringfield, thanks.")
        );
        assert_eq!(apply("Please sign off on the budget."), None);
    }

    #[test]
    fn near_misses_and_shared_words_do_not_fire() {
        for said in [
            "My dress.",
            "By address.",
            "My new address is secret.",
            "What is the address of my office?",
            "Sign of the times.",
            "Sign on.",
            "Sign offs.",
            "Send it to my. Address books are full.",
        ] {
            assert_eq!(apply(said), None, "{said}");
        }
        // Nearly the same spelling and the same sounds does.
        assert_eq!(
            apply("My adress.").as_deref(),
            Some("12 Main Street\nSpringfield")
        );
    }

    #[test]
    fn a_placeholder_without_a_value_is_left_out_and_reported() {
        let inserted = snippets().apply("Paste link.", &Fixed).unwrap();
        assert_eq!(inserted.text, "See  for more");
        assert_eq!(inserted.unavailable, [Placeholder::Clipboard]);
        assert_eq!(inserted.triggers, ["paste link"]);
    }

    #[test]
    fn bad_snippets_are_refused_with_the_reason() {
        let err = |s: Snippet| Snippets::new(&[s]).unwrap_err().to_string();
        assert_eq!(
            err(snippet(" ", "x", false)),
            "snippet 1: the trigger is empty"
        );
        assert!(err(snippet("sig", " \n", false)).contains("the text to insert is empty"));
        assert!(err(snippet("sig", "on {dat}", false)).contains("{dat} is not a placeholder"));
        assert!(err(snippet("thanks", "Thank you!", true)).contains("two words or more"));
        assert!(matches!(
            Snippets::new(&[
                snippet("my address", "a", false),
                snippet("My-Address", "b", false)
            ]),
            Err(SnippetError::SameTrigger { .. })
        ));
        // Braces that are not a placeholder are text.
        let code =
            Snippets::new(&[snippet("main function", "fn main() {}\n{ x }", false)]).unwrap();
        assert_eq!(
            code.apply("Main function.", &Fixed).unwrap().text,
            "fn main() {}\n{ x }"
        );
    }

    #[test]
    fn a_snippet_file_round_trips() {
        let text =
            "# mine\n\n== sign off\nBest regards,\n\n  Anna\n\n==+ my address\n12 Main St\r\n";
        let parsed = file::parse(text).unwrap();
        assert_eq!(
            parsed,
            [
                snippet("sign off", "Best regards,\n\n  Anna", false),
                snippet("my address", "12 Main St", true),
            ]
        );
        assert_eq!(file::parse(&file::render(&parsed)).unwrap(), parsed);
        assert_eq!(file::parse("hello\n== x\ny").unwrap_err().line, 1);
    }

    /// False triggers on real English: the GPL's 5,600 words and the
    /// LibriVox clips' transcripts (every Debian system with the test
    /// packages has them), read as one text (triggers allowed inside
    /// sentences) and sentence by sentence as dictations (triggers alone),
    /// under twelve everyday triggers. A fire counts as false unless the
    /// trigger's words are there as they are. Figures in docs/benchmarks.md
    /// (`cargo test -p utter-postprocess --lib false_triggers -- --nocapture`).
    #[test]
    fn false_triggers_on_the_benchmark_texts() {
        let mut texts = Vec::new();
        for path in [
            "/usr/share/common-licenses/GPL-3",
            "/usr/share/pocketsphinx/test/data/librivox/transcription",
        ] {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
                panic!("{path}: {e} (base-files; pocketsphinx-testdata, which npm test installs)")
            });
            texts.push(text.replace("<s>", "").replace("</s>", ""));
        }
        let triggers = [
            "my address",
            "sign off",
            "my email",
            "meeting link",
            "best regards",
            "phone number",
            "home address",
            "bank details",
            "work email",
            "insert date",
            "the license",
            "free software",
        ];
        let list = |in_sentence: bool| {
            let list: Vec<Snippet> = triggers
                .iter()
                .map(|t| snippet(t, &format!("<<{t}>>"), in_sentence))
                .collect();
            Snippets::new(&list).unwrap()
        };
        let (anywhere, alone) = (list(true), list(false));
        let spoken = |t: &str| {
            split_words(t)
                .iter()
                .map(|w| w.letters.clone())
                .collect::<Vec<_>>()
        };
        let (mut words, mut exact, mut fired, mut sentences, mut alone_fired) = (0, 0, 0, 0, 0);
        for text in &texts {
            let heard = spoken(text);
            words += heard.len();
            for trigger in triggers {
                let t = spoken(trigger);
                exact += heard
                    .windows(t.len())
                    .filter(|w| *w == t.as_slice())
                    .count();
            }
            if let Some(inserted) = anywhere.apply(text, &NoValues) {
                fired += inserted.triggers.len();
            }
            for sentence in text.split(['.', '\n', ';', ':', '?', '!']) {
                if split_words(sentence).is_empty() {
                    continue;
                }
                sentences += 1;
                alone_fired += usize::from(alone.apply(sentence, &NoValues).is_some());
            }
        }
        eprintln!(
            "{words} words: {fired} fires inside sentences where the trigger's words occur {exact} times; \
             {sentences} sentences as dictations: {alone_fired} fires of a trigger said alone"
        );
        assert!(words > 5_600, "{words}");
        // Only where the trigger's own words were said ("free software", "the license").
        assert_eq!(fired, exact, "false triggers inside sentences");
        assert!(
            exact > 0,
            "the texts hold some triggers, so the count can fail"
        );
        assert_eq!(
            alone_fired, 0,
            "a sentence is never one of these triggers alone"
        );
    }
}
