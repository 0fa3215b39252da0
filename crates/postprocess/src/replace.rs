//! The user's replacement rules, "heard → written": whole words, any case,
//! written exactly as the user typed them; or, marked as advanced, a regular
//! expression with `$1`-style groups.

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Replacement {
    pub heard: String,
    pub written: String,
    /// `heard` is a regular expression (advanced).
    #[serde(default)]
    pub regex: bool,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RuleError {
    #[error("replacement {index}: the heard text is empty")]
    Empty { index: usize },
    #[error("replacement {index}: `{pattern}` is not a valid regular expression: {why}")]
    BadRegex {
        index: usize,
        pattern: String,
        why: String,
    },
    #[error(transparent)]
    Snippet(#[from] crate::SnippetError),
}

/// A rule ready to apply.
#[derive(Debug, Clone)]
pub struct Compiled {
    pattern: Regex,
    written: String,
    regex: bool,
    /// Whole-word rules: the match must not touch a letter or digit on the
    /// side where `heard` starts or ends with one.
    word_start: bool,
    word_end: bool,
}

/// Big enough for any sane rule; a rule that compiles to more is refused
/// rather than slowing every dictation down.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl Compiled {
    pub fn new(index: usize, rule: &Replacement) -> Result<Self, RuleError> {
        let heard = rule.heard.trim();
        if heard.is_empty() {
            return Err(RuleError::Empty { index: index + 1 });
        }
        let source = if rule.regex {
            heard.to_string()
        } else {
            // Any run of spaces in the rule matches any run in the text.
            heard
                .split_whitespace()
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(r"\s+")
        };
        let pattern = RegexBuilder::new(&source)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| RuleError::BadRegex {
                index: index + 1,
                pattern: heard.to_string(),
                why: e.to_string(),
            })?;
        Ok(Self {
            pattern,
            written: rule.written.clone(),
            regex: rule.regex,
            word_start: !rule.regex && heard.starts_with(char::is_alphanumeric),
            word_end: !rule.regex && heard.ends_with(char::is_alphanumeric),
        })
    }

    pub fn apply(&self, text: &str) -> String {
        if self.regex {
            return self
                .pattern
                .replace_all(text, self.written.as_str())
                .into_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut at = 0;
        while let Some(m) = self.pattern.find_at(text, at) {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let whole = !(self.word_start && before.is_some_and(char::is_alphanumeric)
                || self.word_end && after.is_some_and(char::is_alphanumeric));
            if whole && !m.as_str().is_empty() {
                out.push_str(&text[copied..m.start()]);
                out.push_str(&self.written);
                copied = m.end();
                at = m.end();
            } else {
                // Try again from the next character (a match may start inside this one).
                at = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
            }
            if at > text.len() {
                break;
            }
        }
        out.push_str(&text[copied..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(heard: &str, written: &str) -> Replacement {
        Replacement {
            heard: heard.into(),
            written: written.into(),
            regex: false,
        }
    }

    fn run(rule: &Replacement, text: &str) -> String {
        Compiled::new(0, rule).unwrap().apply(text)
    }

    #[test]
    fn whole_words_any_case_written_as_typed() {
        let table = [
            (
                rule("cooper netties", "Kubernetes"),
                "Deploy to Cooper  Netties, then test.",
                "Deploy to Kubernetes, then test.",
            ),
            (
                rule("get hub", "GitHub"),
                "Push to get hub. Get Hub is down? GET HUB!",
                "Push to GitHub. GitHub is down? GitHub!",
            ),
            (
                rule("cat", "dog"),
                "A cat, a catalog, a concat and CAT.",
                "A dog, a catalog, a concat and dog.",
            ),
            (
                rule("utter", "Utter"),
                "(utter) utter's \"utter\"",
                "(Utter) Utter's \"Utter\"",
            ),
            (
                rule("c sharp", "C#"),
                "I write c sharp and C Sharp.",
                "I write C# and C#.",
            ),
            (
                rule("C++", "C plus plus"),
                "I like C++. And c++!",
                "I like C plus plus. And C plus plus!",
            ),
            (
                rule("muller", "Müller"),
                "Ask Muller or MULLER.",
                "Ask Müller or Müller.",
            ),
            (
                rule("straße", "Strasse"),
                "Die STRASSE? Die Straße.",
                "Die STRASSE? Die Strasse.",
            ),
            (rule("éclair", "eclair"), "Un Éclair.", "Un eclair."),
            (
                rule("new york", "New York"),
                "no match here",
                "no match here",
            ),
        ];
        for (r, input, expected) in table {
            assert_eq!(run(&r, input), expected, "{r:?} on {input}");
        }
    }

    #[test]
    fn regex_rules_are_advanced_and_may_use_groups() {
        let r = Replacement {
            heard: r"(\d+) percent".into(),
            written: "$1%".into(),
            regex: true,
        };
        assert_eq!(
            run(&r, "Up 5 percent, down 10 Percent."),
            "Up 5%, down 10%."
        );
    }

    #[test]
    fn bad_rules_say_which_and_why() {
        assert_eq!(
            Compiled::new(2, &rule("  ", "x")).unwrap_err(),
            RuleError::Empty { index: 3 }
        );
        let bad = Replacement {
            heard: "(unclosed".into(),
            written: "x".into(),
            regex: true,
        };
        let err = Compiled::new(0, &bad).unwrap_err().to_string();
        assert!(
            err.starts_with("replacement 1: `(unclosed` is not a valid regular expression"),
            "{err}"
        );
    }
}
