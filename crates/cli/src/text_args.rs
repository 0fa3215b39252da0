//! The options that teach Utter the user's words, shared by `transcribe` and
//! `dictate`: vocabulary, replacements, spoken punctuation, clean-up,
//! snippets.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use utter_core::settings::VOCABULARY_MAX;
use utter_postprocess::snippets::file as snippet_file;
use utter_postprocess::{vocabulary, Replacement, TextRules, TextRulesConfig};

#[derive(Args, Debug, Default)]
pub struct TextArgs {
    /// A word or name to spell as written here (repeatable), e.g. --vocab Kubernetes
    #[arg(long = "vocab", value_name = "WORD")]
    vocab: Vec<String>,
    /// A file of words or names, one per line (`#` starts a comment)
    #[arg(long, value_name = "FILE")]
    vocab_file: Option<PathBuf>,
    /// Replace what the engine heard by what you write (repeatable; whole
    /// words, any case), e.g. --replace "get hub=GitHub"
    #[arg(long = "replace", value_name = "HEARD=WRITTEN", value_parser = parse_replacement)]
    replace: Vec<Replacement>,
    /// Write spoken "comma", "period", "new line", "question mark"... as marks
    /// (dictation, English)
    #[arg(long)]
    spoken_punctuation: bool,
    /// Drop fillers ("um", "uh") and stuttered repeats ("I I think")
    #[arg(long)]
    clean_up: bool,
    /// Stored texts a spoken trigger inserts (dictation): a file where
    /// "== my address" starts a snippet ("==+ ..." also inside a sentence)
    /// and its text, any number of lines with {date}, {time} or {clipboard},
    /// follows
    #[arg(long, value_name = "FILE")]
    snippets_file: Option<PathBuf>,
}

/// `--replace HEARD=WRITTEN`, checked while the command line is parsed (a
/// usage error, exit status 2, like every other bad flag).
fn parse_replacement(r: &str) -> Result<Replacement, String> {
    let (heard, written) = r
        .split_once('=')
        .ok_or_else(|| format!("expected HEARD=WRITTEN, e.g. \"get hub=GitHub\", not `{r}`"))?;
    if heard.trim().is_empty() {
        return Err(format!("nothing to replace before `=` in `{r}`"));
    }
    Ok(Replacement {
        heard: heard.trim().into(),
        written: written.trim().into(),
        regex: false,
    })
}

impl TextArgs {
    /// Refuses the options only dictation uses (a recording's words are kept
    /// as said to its listeners), for `transcribe` and `meeting`, rather than
    /// ignore them.
    pub fn refuse_dictation_only(&self) -> std::result::Result<(), String> {
        let mut given = Vec::new();
        if self.spoken_punctuation {
            given.push("--spoken-punctuation");
        }
        if self.snippets_file.is_some() {
            given.push("--snippets-file");
        }
        if given.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{} only apply to dictation (`utter dictate` and the app): a recording's words are \
             kept as they were said; leave them out",
            given.join(" and ")
        ))
    }

    /// The vocabulary, command-line words first, then the file's.
    pub fn vocabulary(&self) -> Result<Vec<String>> {
        let mut words: Vec<String> = self.vocab.iter().map(|w| w.trim().to_string()).collect();
        if let Some(path) = &self.vocab_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the vocabulary file {}", path.display()))?;
            words.extend(vocabulary::parse(&text));
        }
        words.retain(|w| !w.is_empty());
        if words.len() > VOCABULARY_MAX {
            bail!(
                "{} vocabulary entries; at most {VOCABULARY_MAX} are allowed (the model reads only the first 15–20): put the most important first and shorten the list",
                words.len()
            );
        }
        Ok(words)
    }

    pub fn rules(&self) -> Result<TextRules> {
        Ok(TextRules::new(&self.config()?)?)
    }

    /// The rules as settings hold them, checked.
    pub fn config(&self) -> Result<TextRulesConfig> {
        let replacements = self.replace.clone();
        let snippets = match &self.snippets_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the snippets file {}", path.display()))?;
                snippet_file::parse(&text)
                    .with_context(|| format!("the snippets file {}", path.display()))?
            }
            None => Vec::new(),
        };
        let config = TextRulesConfig {
            replacements,
            spoken_punctuation: self.spoken_punctuation,
            clean_up: self.clean_up,
            snippets,
        };
        TextRules::new(&config)?; // fail on a bad rule or snippet now, not at the first dictation
        Ok(config)
    }
}
