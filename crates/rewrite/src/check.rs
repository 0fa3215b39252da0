//! Is the model's answer usable in place of what was said? Small local
//! models wrap their answer (a `<think>` block, quotes, a code fence), run
//! on, or refuse; the first is tidied away, the others keep the dictation.

use crate::Notice;

/// An answer longer than this many times the input, plus [`LENGTH_SLACK`]
/// characters (an email's greeting and closing around a short dictation),
/// is not a rewrite of it.
const LENGTH_FACTOR: usize = 3;
const LENGTH_SLACK: usize = 200;

/// The longest answer to a command without a selection (nothing to compare
/// its length with).
pub const COMMAND_ANSWER_MAX: usize = 4_000;

/// The longest acceptable answer to an input of `input_chars` characters.
pub fn length_limit(input_chars: usize) -> usize {
    input_chars * LENGTH_FACTOR + LENGTH_SLACK
}

/// Characters per token that the token cap assumes: English runs about four
/// a token, so an answer as long as [`length_limit`] allows fits twice over;
/// Chinese or Japanese (about one a token) still fits up to the input's
/// length again plus the slack.
const CHARS_PER_TOKEN: usize = 2;
/// Tokens added for a reasoning model's hidden thinking (a `<think>` block,
/// or a hosted model's reasoning tokens, which count against the cap too).
const THINKING_TOKENS: usize = 512;

/// The `max_tokens` sent with a request whose visible answer may be
/// `max_chars` long. Without one a small local model can loop for minutes
/// after Utter has given up on it (SmolLM2 ran 1,980 tokens, 490 s); the
/// server stops at the cap even when nobody reads the answer.
pub fn token_cap(max_chars: usize) -> usize {
    max_chars.div_ceil(CHARS_PER_TOKEN) + THINKING_TOKENS
}

/// How to judge one answer.
#[derive(Debug, Clone)]
pub struct Rules<'a> {
    /// What the model was given (refusal-like words in it are not refusals).
    pub input: &'a str,
    pub max_chars: usize,
    /// Strip quotes or a code fence around the whole answer (a dictation's
    /// rewrite; a command may have asked for them).
    pub unwrap: bool,
}

/// The answer as it will be delivered, or why it will not be.
pub fn accept(answer: &str, rules: &Rules) -> Result<String, Notice> {
    let mut text = visible(answer).trim();
    if rules.unwrap {
        text = unwrap(text, rules.input.trim());
    }
    if text.is_empty() {
        return Err(Notice::EmptyAnswer);
    }
    let chars = text.chars().count();
    if chars > rules.max_chars {
        return Err(too_long(chars, rules.input));
    }
    if looks_like_refusal(text, rules.input) {
        return Err(Notice::Refusal);
    }
    Ok(text.to_string())
}

pub fn too_long(answer_chars: usize, input: &str) -> Notice {
    Notice::TooLong {
        answer_chars: answer_chars as u64,
        input_chars: input.trim().chars().count() as u64,
    }
}

/// The answer without a leading `<think>…</think>` block (reasoning models
/// served locally put one first); nothing yet while the block is open.
pub fn visible(answer: &str) -> &str {
    let trimmed = answer.trim_start();
    match trimmed.strip_prefix("<think>") {
        Some(rest) => rest.split_once("</think>").map_or("", |(_, after)| after),
        None => answer,
    }
}

/// One pair of quotes or a code fence around the whole text, unless the
/// input itself was written so.
fn unwrap<'a>(text: &'a str, input: &str) -> &'a str {
    if text.starts_with("```") && !input.starts_with("```") {
        if let Some(inner) = text.strip_suffix("```") {
            // The fence's first line may name a language (```text).
            let inner = inner.trim_start_matches('`');
            let body = inner.split_once('\n').map_or("", |(_, body)| body);
            return body.trim();
        }
    }
    for (open, close) in [('"', '"'), ('“', '”'), ('\'', '\'')] {
        if text.len() > 1
            && text.starts_with(open)
            && text.ends_with(close)
            && !input.starts_with(open)
        {
            let inner = &text[open.len_utf8()..text.len() - close.len_utf8()];
            // `"a" and "b"` is not one quoted text.
            if !inner.contains(open) && !inner.contains(close) {
                return inner.trim();
            }
        }
    }
    text
}

/// How refusals and chatbot disclaimers begin, in [`normalize`]d form.
const REFUSALS: [&str; 17] = [
    "im sorry",
    "i am sorry",
    "sorry i",
    "sorry but",
    "i cant",
    "i cannot",
    "i can not",
    "im unable",
    "i am unable",
    "im not able",
    "i am not able",
    "i wont",
    "i will not",
    "i apologize",
    "i apologise",
    "as an ai",
    "as a language model",
];

/// The answer opens like a refusal that the input did not contain (so a
/// dictated "I'm sorry I missed your call" stays a rewrite).
fn looks_like_refusal(answer: &str, input: &str) -> bool {
    let answer = normalize(answer);
    let input = normalize(input);
    REFUSALS
        .iter()
        .any(|phrase| answer.starts_with(phrase) && !input.contains(phrase))
        || (answer.contains("as an ai language model") && !input.contains("as an ai"))
}

/// Lower-case words without punctuation or apostrophes: engines write
/// "im sorry" as often as "I'm sorry".
fn normalize(text: &str) -> String {
    let letters: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '\'' | '’' | '‘'))
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    letters.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(input: &str) -> Rules<'_> {
        Rules {
            input,
            max_chars: length_limit(input.chars().count()),
            unwrap: true,
        }
    }

    #[test]
    fn a_good_answer_is_trimmed_and_kept() {
        let input = "um so send the the report to ana by friday";
        assert_eq!(
            accept("  Send the report to Ana by Friday.\n", &rules(input)),
            Ok("Send the report to Ana by Friday.".into())
        );
    }

    #[test]
    fn thinking_quotes_and_fences_are_unwrapped() {
        let r = rules("hello there");
        assert_eq!(
            accept("<think>\nThe user wants...\n</think>\n\nHello there.", &r),
            Ok("Hello there.".into())
        );
        assert_eq!(accept("\"Hello there.\"", &r), Ok("Hello there.".into()));
        assert_eq!(accept("“Hello there.”", &r), Ok("Hello there.".into()));
        assert_eq!(
            accept("```text\nHello there.\n```", &r),
            Ok("Hello there.".into())
        );
        assert_eq!(accept("\"a\" and \"b\"", &r), Ok("\"a\" and \"b\"".into()));
        // Quotes the speaker dictated stay.
        let quoted = rules("\"quote\" he said");
        assert_eq!(
            accept("\"Quote,\" he said", &quoted),
            Ok("\"Quote,\" he said".into())
        );
        // A command asked for them: nothing is unwrapped.
        let command = Rules {
            unwrap: false,
            ..rules("put it in quotes: hi")
        };
        assert_eq!(accept("\"Hi\"", &command), Ok("\"Hi\"".into()));
        assert_eq!(visible("<think>still thinking"), "");
    }

    #[test]
    fn empty_oversized_and_refusing_answers_are_refused() {
        let r = rules("call me back");
        assert_eq!(accept(" \n ", &r), Err(Notice::EmptyAnswer));
        assert_eq!(accept("<think>hmm</think>", &r), Err(Notice::EmptyAnswer));
        let long = "word ".repeat(60);
        assert_eq!(
            accept(&long, &r),
            Err(Notice::TooLong {
                answer_chars: 299,
                input_chars: 12
            })
        );
        for refusal in [
            "I'm sorry, but I can't help with that.",
            "I can’t assist with this request.",
            "As an AI, I do not have opinions.",
            "Sure! As an AI language model I would say: call me back.",
        ] {
            assert_eq!(accept(refusal, &r), Err(Notice::Refusal), "{refusal}");
        }
    }

    #[test]
    fn dictated_apologies_are_not_refusals() {
        for input in [
            "im sorry i cant make it tomorrow",
            "I’m sorry, I can’t make it tomorrow",
        ] {
            assert_eq!(
                accept("I'm sorry, I can't make it tomorrow.", &rules(input)),
                Ok("I'm sorry, I can't make it tomorrow.".into()),
                "{input}"
            );
        }
    }
}
