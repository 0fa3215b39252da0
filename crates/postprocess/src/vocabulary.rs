//! The vocabulary as a text file: one word or phrase per line, `#` starts a
//! comment line. The same format for the CLI's `--vocab-file` and the app's
//! import and export.

/// The entries of a vocabulary file, in order, without blanks, comments or
/// repeats.
pub fn parse(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !words.iter().any(|w| w.eq_ignore_ascii_case(line)) {
            words.push(line.to_string());
        }
    }
    words
}

/// A vocabulary file for `words`.
pub fn render(words: &[String]) -> String {
    let mut out =
        String::from("# Utter vocabulary: one word or phrase per line, most important first.\n");
    for w in words {
        out.push_str(w.trim());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_round_trips_without_comments_blanks_or_repeats() {
        let words = parse("# mine\n  Kubernetes \n\nAnna Åberg\r\nkubernetes\n#skip\nC++\n");
        assert_eq!(words, ["Kubernetes", "Anna Åberg", "C++"]);
        assert_eq!(parse(&render(&words)), words);
    }
}
