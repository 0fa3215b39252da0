//! Spoken punctuation and layout commands (English): "comma", "period",
//! "new line"... become the marks they name.
//!
//! The rule for telling a command from the same word in a sentence: a
//! command phrase is written as its mark unless
//! - it follows "literal" ("literal comma" → "comma"),
//! - it is used as a noun: the word right before it is an article, a
//!   determiner or a possessive ("a comma", "the question mark", "that
//!   period", "add a new line"), or the word after it is "of" ("period of
//!   grace").
//!
//! The engine often punctuates around a spoken command ("Hello. Comma. How
//! are you? Question mark."): its marks next to the command are replaced by
//! the command's, and a capital it gave the next word after a mark that does
//! not end a sentence is lowered.

use crate::tokens::Token;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// Attaches to the word before: `.` `,` `?`...
    After(&'static str),
    /// A line break.
    Break(&'static str),
    /// Attaches to the word after: an opening quote.
    Before(&'static str),
}

const COMMANDS: &[(&[&str], Mark)] = &[
    (&["new", "paragraph"], Mark::Break("\n\n")),
    (&["new", "line"], Mark::Break("\n")),
    (&["question", "mark"], Mark::After("?")),
    (&["exclamation", "mark"], Mark::After("!")),
    (&["exclamation", "point"], Mark::After("!")),
    (&["full", "stop"], Mark::After(".")),
    (&["open", "quote"], Mark::Before("\"")),
    (&["begin", "quote"], Mark::Before("\"")),
    (&["close", "quote"], Mark::After("\"")),
    (&["end", "quote"], Mark::After("\"")),
    (&["unquote"], Mark::After("\"")),
    (&["period"], Mark::After(".")),
    (&["comma"], Mark::After(",")),
    (&["colon"], Mark::After(":")),
    (&["semicolon"], Mark::After(";")),
];

/// Words before a noun: after one of these, a command word is just a word.
const DETERMINERS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our",
    "their", "each", "every", "no", "any", "some", "one", "another", "which", "what", "whose",
    "same",
];

fn find_command(tokens: &[Token], at: usize) -> Option<(usize, Mark)> {
    COMMANDS.iter().find_map(|(words, mark)| {
        let matches = words.iter().enumerate().all(|(i, w)| {
            tokens
                .get(at + i)
                .and_then(Token::key)
                .is_some_and(|k| k == *w)
        });
        // Inside a multi-word command, only the last word may carry marks.
        let unbroken = tokens[at..at + words.len().min(tokens.len() - at)]
            .iter()
            .rev()
            .skip(1)
            .all(|t| t.trail().trim_end_matches(['.', ',']).is_empty());
        (matches && unbroken).then_some((words.len(), *mark))
    })
}

fn used_as_noun(out: &[Token], tokens: &[Token], after: usize) -> bool {
    let determiner_before = out
        .last()
        .filter(|t| t.trail().is_empty())
        .and_then(Token::key)
        .is_some_and(|k| DETERMINERS.contains(&k.as_str()));
    let of_after = tokens
        .get(after)
        .and_then(Token::key)
        .is_some_and(|k| k == "of");
    determiner_before || of_after
}

/// Writes spoken commands as marks.
pub fn apply(tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut lead_next = String::new();
    let mut capitalize_next = false;
    let mut lower_next = false;
    let mut i = 0;
    while i < tokens.len() {
        // "literal": the next word stays a word.
        let literal = tokens[i].key().is_some_and(|k| k == "literal")
            && i + 1 < tokens.len()
            && find_command(&tokens, i + 1).is_some();
        if literal {
            i += 1;
        }
        let command = find_command(&tokens, i)
            .filter(|&(len, _)| !literal && !used_as_noun(&out, &tokens, i + len));
        let Some((len, mark)) = command else {
            out.push(with_pending(
                tokens[i].clone(),
                &mut lead_next,
                &mut capitalize_next,
                &mut lower_next,
            ));
            i += 1;
            continue;
        };
        let engine_ended_sentence = tokens[i + len - 1].ends_sentence();
        match mark {
            Mark::After(m) => {
                match out.last_mut() {
                    Some(prev @ Token::Word { .. }) => {
                        // A closing quote goes after the sentence's mark.
                        if m != "\"" {
                            prev.strip_clause_marks();
                        }
                        prev.push_trail(m);
                    }
                    _ => out.push(Token::word("", "", m)),
                }
                let ends = m != "\""
                    && super::tokens::SENTENCE_END
                        .iter()
                        .any(|c| m.starts_with(*c));
                capitalize_next = ends;
                lower_next = !ends && engine_ended_sentence;
            }
            Mark::Break(b) => {
                out.push(Token::Break(b));
                capitalize_next = true;
                lower_next = false;
            }
            Mark::Before(m) => {
                lead_next.push_str(m);
                lower_next = false;
            }
        }
        i += len;
    }
    if !lead_next.is_empty() {
        out.push(Token::word(&lead_next, "", ""));
    }
    out
}

/// Applies what the last command asked of the word after it.
fn with_pending(
    mut token: Token,
    lead: &mut String,
    capitalize: &mut bool,
    lower: &mut bool,
) -> Token {
    if matches!(token, Token::Break(_)) {
        return token;
    }
    if !lead.is_empty() {
        token.prepend_lead(lead);
        lead.clear();
    }
    if std::mem::take(capitalize) {
        token.capitalize();
    }
    if std::mem::take(lower) {
        token.decapitalize();
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{render, tokenize};

    fn run(text: &str) -> String {
        render(&apply(tokenize(text)))
    }

    #[test]
    fn commands_become_marks() {
        let table = [
            // Plain, as the engine often writes them.
            ("I went home period", "I went home."),
            (
                "hello comma how are you question mark",
                "hello, how are you?",
            ),
            (
                "Dear Anna comma new line thanks for the notes period",
                "Dear Anna,\nThanks for the notes.",
            ),
            (
                "first point new paragraph second point",
                "first point\n\nSecond point",
            ),
            ("wow exclamation mark that worked", "wow! That worked"),
            ("Stop full stop", "Stop."),
            ("the list colon eggs semicolon milk", "the list: eggs; milk"),
            ("he said open quote hello close quote", "he said \"hello\""),
            // With the engine's own punctuation around the command.
            (
                "Hello. Comma. How are you? Question mark.",
                "Hello, how are you?",
            ),
            ("I'm here. Period.", "I'm here."),
            (
                "Send it, comma, and call me. New line. Bye.",
                "Send it, and call me.\nBye.",
            ),
            (
                "He said, open quote, yes. Close quote.",
                "He said, \"yes.\"",
            ),
            // Capitals the engine gave are kept for I, names after a break, acronyms.
            ("Okay. Comma. I will.", "Okay, I will."),
            ("Okay. Comma. NASA called.", "Okay, NASA called."),
            ("Ünïcode comma ça va question mark", "Ünïcode, ça va?"),
        ];
        for (input, expected) in table {
            assert_eq!(run(input), expected, "{input}");
        }
    }

    #[test]
    fn the_same_words_inside_a_sentence_stay_words() {
        let table = [
            "It was a long period of calm.",
            "Add a comma after the name.",
            "During that period we grew.",
            "The question mark is missing.",
            "Start a new paragraph here.",
            "Put a new line after each entry.",
            "A period of grace applies.",
            "His colon was fine.",
        ];
        for input in table {
            assert_eq!(run(input), input);
        }
    }

    #[test]
    fn literal_keeps_the_word() {
        assert_eq!(
            run("type the word literal comma here"),
            "type the word comma here"
        );
        assert_eq!(run("I said literal period"), "I said period");
    }

    #[test]
    fn a_command_at_the_start_or_alone_is_still_written() {
        assert_eq!(run("period"), ".");
        assert_eq!(run("New line"), "\n");
        assert_eq!(run("open quote"), "\"");
    }
}
