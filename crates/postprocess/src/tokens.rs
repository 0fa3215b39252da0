//! Text as a list of words with their punctuation, so rules can drop or
//! change a word and fix the punctuation around it without touching the rest.

/// One word as written: `("`, `Hello`, `,")` for `"Hello,"`, or a line break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word {
        /// Punctuation before the word (opening quotes, brackets).
        lead: String,
        /// The word itself; may hold inner hyphens and apostrophes.
        core: String,
        /// Punctuation after it.
        trail: String,
    },
    /// `"\n"` or `"\n\n"`.
    Break(&'static str),
}

/// Marks that end a sentence; the next word starts with a capital.
pub const SENTENCE_END: [char; 4] = ['.', '!', '?', '…'];
/// Punctuation the engine puts after a word that a rule may replace.
pub const CLAUSE_MARKS: [char; 7] = ['.', ',', ';', ':', '!', '?', '…'];

impl Token {
    pub fn word(lead: &str, core: &str, trail: &str) -> Self {
        Self::Word {
            lead: lead.into(),
            core: core.into(),
            trail: trail.into(),
        }
    }

    /// The word lowercased, for matching; `None` for a break or bare punctuation.
    pub fn key(&self) -> Option<String> {
        match self {
            Self::Word { core, .. } if !core.is_empty() => Some(core.to_lowercase()),
            _ => None,
        }
    }

    pub fn trail(&self) -> &str {
        match self {
            Self::Word { trail, .. } => trail,
            Self::Break(_) => "",
        }
    }

    /// The word ends a sentence (or is a line break).
    pub fn ends_sentence(&self) -> bool {
        match self {
            Self::Word { trail, .. } => trail
                .trim_end_matches(['"', '”', ')', '\''])
                .ends_with(SENTENCE_END),
            Self::Break(_) => true,
        }
    }

    /// Removes the clause marks at the end of the trail (`"you?"` → `"you"`).
    pub fn strip_clause_marks(&mut self) {
        if let Self::Word { trail, .. } = self {
            let kept = trail.trim_end_matches(CLAUSE_MARKS).len();
            trail.truncate(kept);
        }
    }

    pub fn push_trail(&mut self, mark: &str) {
        if let Self::Word { trail, .. } = self {
            trail.push_str(mark);
        }
    }

    pub fn prepend_lead(&mut self, mark: &str) {
        if let Self::Word { lead, .. } = self {
            lead.insert_str(0, mark);
        }
    }

    pub fn capitalize(&mut self) {
        if let Self::Word { core, .. } = self {
            *core = with_first_letter(core, true);
        }
    }

    /// Lowers an initial capital the engine gave a sentence it started, but
    /// keeps "I", "I'm" and acronyms.
    pub fn decapitalize(&mut self) {
        if let Self::Word { core, .. } = self {
            let letters: Vec<char> = core.chars().filter(|c| c.is_alphabetic()).collect();
            let acronym = letters.len() > 1 && letters.iter().all(|c| c.is_uppercase());
            if core != "I" && !core.starts_with("I'") && !acronym {
                *core = with_first_letter(core, false);
            }
        }
    }

    pub fn starts_with_capital(&self) -> bool {
        match self {
            Self::Word { core, .. } => core.chars().next().is_some_and(char::is_uppercase),
            Self::Break(_) => false,
        }
    }
}

fn with_first_letter(word: &str, upper: bool) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) if upper => c.to_uppercase().chain(chars).collect(),
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Splits text at whitespace; line breaks become [`Token::Break`].
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut lines = text.split('\n').peekable();
    let mut blank_lines = 0;
    while let Some(line) = lines.next() {
        if line.trim().is_empty() && lines.peek().is_some() {
            blank_lines += 1;
            continue;
        }
        if !tokens.is_empty() {
            tokens.push(Token::Break(if blank_lines > 0 { "\n\n" } else { "\n" }));
        }
        blank_lines = 0;
        tokens.extend(line.split_whitespace().map(split_word));
    }
    tokens
}

fn split_word(piece: &str) -> Token {
    let Some(first) = piece.find(char::is_alphanumeric) else {
        return Token::word(piece, "", "");
    };
    let last = piece
        .char_indices()
        .rfind(|(_, c)| c.is_alphanumeric())
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(piece.len());
    Token::word(&piece[..first], &piece[first..last], &piece[last..])
}

/// Joins tokens with single spaces, and no space around line breaks.
pub fn render(tokens: &[Token]) -> String {
    let mut out = String::new();
    let mut after_break = true;
    for token in tokens {
        match token {
            Token::Break(b) => {
                out.push_str(b);
                after_break = true;
            }
            Token::Word { lead, core, trail } => {
                if lead.is_empty() && core.is_empty() && trail.is_empty() {
                    continue;
                }
                if !after_break {
                    out.push(' ');
                }
                out.push_str(lead);
                out.push_str(core);
                out.push_str(trail);
                after_break = false;
            }
        }
    }
    out.trim_matches(' ').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_punctuation_and_round_trip() {
        let text = "\"Hello,\" she said (quietly) — don't-stop… 3.5 km?";
        let tokens = tokenize(text);
        assert_eq!(tokens[0], Token::word("\"", "Hello", ",\""));
        assert_eq!(tokens[3], Token::word("(", "quietly", ")"));
        assert_eq!(tokens[4], Token::word("—", "", ""));
        assert_eq!(tokens[5], Token::word("", "don't-stop", "…"));
        assert_eq!(tokens[6], Token::word("", "3.5", ""));
        assert_eq!(render(&tokens), text);
    }

    #[test]
    fn line_breaks_survive_without_spaces_around_them() {
        let tokens = tokenize("One.\nTwo.\n\nThree.");
        assert_eq!(tokens[1], Token::Break("\n"));
        assert_eq!(tokens[3], Token::Break("\n\n"));
        assert_eq!(render(&tokens), "One.\nTwo.\n\nThree.");
    }

    #[test]
    fn capitals_are_raised_and_lowered_but_not_for_i_or_acronyms() {
        let mut w = Token::word("", "émile", "");
        w.capitalize();
        assert_eq!(w, Token::word("", "Émile", ""));
        for (word, lowered) in [("How", "how"), ("I", "I"), ("I'm", "I'm"), ("NASA", "NASA")] {
            let mut t = Token::word("", word, "");
            t.decapitalize();
            assert_eq!(t, Token::word("", lowered, ""), "{word}");
        }
    }
}
