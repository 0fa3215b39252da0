//! How a subtitle cue's text is laid out: the line length of the common
//! convention, the two lines a cue may have, where a line breaks. Used by the
//! exports (SRT, VTT) and by the cutting of untimed text into cues.

/// The longest subtitle line, by the common convention (Netflix, BBC: 37–42).
pub const LINE_CHARS: usize = 42;

/// Two subtitle lines for `words`, each at most [`LINE_CHARS`]:
/// the break that makes the longer line shortest; none where two cannot hold them.
pub fn two_lines<S: AsRef<str>>(words: &[S]) -> Option<(String, String)> {
    let len = |s: &str| s.chars().count();
    let join = |w: &[S]| w.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ");
    (1..words.len())
        .map(|cut| (join(&words[..cut]), join(&words[cut..])))
        .filter(|(a, b)| len(a) <= LINE_CHARS && len(b) <= LINE_CHARS)
        .min_by_key(|(a, b)| len(a).max(len(b)))
}

/// Whether `words` fit one subtitle cue: one line, or two.
pub fn fits_a_cue<S: AsRef<str>>(words: &[S]) -> bool {
    let one_line: usize = words.iter().map(|w| w.as_ref().chars().count() + 1).sum();
    one_line <= LINE_CHARS + 1 || two_lines(words).is_some()
}

/// A cue's text as subtitle lines: as it is when it fits one line, else two
/// about even lines where two can hold it, else lines filled to
/// [`LINE_CHARS`] (a long timed segment; a word longer than a line
/// stays whole).
pub fn lines(text: &str) -> String {
    let len = |s: &str| s.chars().count();
    if len(text) <= LINE_CHARS {
        return text.to_string();
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if let Some((a, b)) = two_lines(&words) {
        return format!("{a}\n{b}");
    }
    let mut lines: Vec<String> = Vec::new();
    for word in words {
        match lines.last_mut() {
            Some(line) if len(line) + 1 + len(word) <= LINE_CHARS => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_cues_become_two_even_lines_within_the_convention() {
        let text =
            "And Mr. John Dashwood had then leisure to consider how much there might be prudently";
        let two: Vec<String> = lines(text).lines().map(String::from).collect();
        assert_eq!(two.len(), 2, "{two:?}");
        assert!(
            two.iter().all(|l| l.chars().count() <= LINE_CHARS),
            "{two:?}"
        );
        assert_eq!(two.join(" "), text, "no word lost or split");
        let diff = two[0].chars().count().abs_diff(two[1].chars().count());
        assert!(diff <= 12, "about even: {two:?}");
        assert!(fits_a_cue(&text.split_whitespace().collect::<Vec<_>>()));
        assert_eq!(lines("Short."), "Short.");
        let long = "word ".repeat(40);
        let filled = lines(long.trim());
        assert!(filled.lines().count() > 2);
        assert!(filled.lines().all(|l| l.chars().count() <= 42), "{filled}");
    }
}
