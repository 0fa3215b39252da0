//! Joining pieces of transcribed text into one readable text.

/// Joins segment texts with single spaces, trimming each and skipping empties.
pub fn join_segments<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// Joins dictation segments into one text. Each segment comes back from the
/// engine as if it were a sentence ("So I think." + "That works."); when the
/// previous part does not end a sentence, the next part's capital is lowered
/// ("so I think that works"), except for "I", "I'm"... and acronyms.
pub fn join_dictation<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push_str(part);
            continue;
        }
        let ends_sentence = out.ends_with(['.', '!', '?', ':', ';', '…', '"', ')']);
        out.push(' ');
        let first_word = part.split_whitespace().next().unwrap_or("");
        let keep_capital = ends_sentence
            || first_word == "I"
            || first_word.starts_with("I'")
            || first_word.chars().filter(|c| c.is_alphabetic()).count() > 1
                && first_word
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .all(char::is_uppercase);
        if keep_capital {
            out.push_str(part);
        } else {
            let mut chars = part.chars();
            if let Some(c) = chars.next() {
                out.extend(c.to_lowercase());
                out.push_str(chars.as_str());
            }
        }
    }
    out
}

/// Lowercases, strips punctuation and splits into words (for WER and matching).
pub fn normalize_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '\'' || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .map(|w| w.trim_matches('\'').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word-level edit distance between two word lists.
pub fn word_edit_distance(reference: &[String], hypothesis: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut cur = vec![i + 1; hypothesis.len() + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            let sub = prev[j] + usize::from(r != h);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[hypothesis.len()]
}

/// Word error rate of `hypothesis` against `reference`, after normalisation.
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let r = normalize_words(reference);
    let h = normalize_words(hypothesis);
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    word_edit_distance(&r, &h) as f64 / r.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_with_single_spaces() {
        assert_eq!(join_segments([" Hello.", "", "  world "]), "Hello. world");
    }

    #[test]
    fn dictation_joins_fix_capitals_mid_sentence_only() {
        assert_eq!(
            join_dictation(["Hello there.", "How are you?"]),
            "Hello there. How are you?"
        );
        assert_eq!(
            join_dictation(["So I was thinking", "About the plan."]),
            "So I was thinking about the plan."
        );
        assert_eq!(
            join_dictation(["and then", "I left", "NASA called"]),
            "and then I left NASA called"
        );
        assert_eq!(join_dictation(["", "  Ok  ", " "]), "Ok");
        assert_eq!(join_dictation(["Wait", "Éric came"]), "Wait éric came");
    }

    #[test]
    fn wer_ignores_case_and_punctuation() {
        assert_eq!(word_error_rate("Hello, World!", "hello world"), 0.0);
        assert_eq!(word_error_rate("a b c d", "a x c"), 0.5);
        assert_eq!(word_error_rate("it's fine", "It's fine."), 0.0);
    }
}
