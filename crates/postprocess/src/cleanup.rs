//! Clean-up: drops fillers ("um", "uh", "er", "ah") and stuttered repeats
//! ("I, I think" → "I think"). Every other word is left as it is.

use crate::tokens::Token;

const FILLERS: &[&str] = &["um", "umm", "uh", "uhh", "uhm", "er", "erm", "ah"];

/// Words that are doubled on purpose ("he had had enough", "I know that
/// that works", "no, no"): never taken for a stutter.
const MEANT_TWICE: &[&str] = &[
    "had", "that", "is", "do", "does", "did", "very", "really", "so", "no", "yes", "bye", "knock",
    "ha", "yeah", "well", "now", "there", "too", "far", "more", "many", "much", "again", "on",
    "over", "round", "by", "out", "up", "down", "little", "long", "blah", "tick", "go", "come",
    "quick", "wait", "please", "help", "stop", "okay", "ok", "oh", "hey", "hi", "ho", "la", "tut",
    "chop", "bang", "boo", "hush",
];

/// "Um", "uh,"... but not an acronym that spells the same ("ER").
fn is_filler(t: &Token) -> bool {
    let Token::Word { core, .. } = t else {
        return false;
    };
    let acronym = core.chars().count() > 1 && core.chars().all(char::is_uppercase);
    !acronym && FILLERS.contains(&core.to_lowercase().as_str())
}

/// A repeat of the next word, with at most a comma or a dash between them.
fn is_stutter(t: &Token, next: Option<&Token>) -> bool {
    let (Some(word), Some(next_word)) = (t.key(), next.and_then(Token::key)) else {
        return false;
    };
    word == next_word
        && !MEANT_TWICE.contains(&word.as_str())
        && matches!(t.trail(), "" | "," | "-" | "—" | "..." | "…")
}

pub fn apply(tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut pending_lead = String::new();
    let mut capitalize_next = false;
    for i in 0..tokens.len() {
        let token = &tokens[i];
        let filler = is_filler(token);
        if filler || is_stutter(token, tokens.get(i + 1)) {
            let Token::Word { lead, trail, .. } = token else {
                unreachable!("only words are fillers or stutters")
            };
            pending_lead.push_str(lead);
            let starts_sentence = out.last().is_none_or(Token::ends_sentence);
            if filler {
                let ends_sentence = token.ends_sentence();
                match out.last_mut() {
                    // "We should, um. Go" → "We should. Go"
                    Some(prev @ Token::Word { .. }) if ends_sentence && !prev.ends_sentence() => {
                        prev.strip_clause_marks();
                        prev.push_trail(trail.trim_start_matches(','));
                    }
                    // "I think, uh, we" → "I think we"
                    Some(prev @ Token::Word { .. }) if trail == "," && prev.trail() == "," => {
                        prev.strip_clause_marks();
                    }
                    _ => {}
                }
            }
            capitalize_next |= starts_sentence && token.starts_with_capital();
            continue;
        }
        let mut token = token.clone();
        if !pending_lead.is_empty() {
            token.prepend_lead(&pending_lead);
            pending_lead.clear();
        }
        if std::mem::take(&mut capitalize_next) {
            token.capitalize();
        }
        out.push(token);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{render, tokenize};

    fn run(text: &str) -> String {
        render(&apply(tokenize(text)))
    }

    #[test]
    fn fillers_and_stutters_go() {
        let table = [
            ("Um, I think we should go.", "I think we should go."),
            ("I think, uh, we should go.", "I think we should go."),
            ("So, um, yes.", "So yes."),
            ("We should, um.", "We should."),
            ("Uh, so we agreed.", "So we agreed."),
            ("I, I think so.", "I think so."),
            ("I I I think so.", "I think so."),
            ("The the report is done.", "The report is done."),
            ("We we- we did it.", "We did it."),
            ("\"Um, hello,\" she said.", "\"Hello,\" she said."),
            ("Ah, Érik, ah, came.", "Érik came."),
        ];
        for (input, expected) in table {
            assert_eq!(run(input), expected, "{input}");
        }
    }

    #[test]
    fn other_words_are_never_changed() {
        let table = [
            "He had had enough.",
            "I know that that works.",
            "No, no, no.",
            "Error: the umbrella was erm-shaped? No.",
            "Ahmed and Uhura met at the ER.",
            "It is what it is.",
            "Bye bye.",
            "They were very, very kind.",
        ];
        for input in table {
            assert_eq!(run(input), input);
        }
    }
}
