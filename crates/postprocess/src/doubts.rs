//! A listed word heard as another word — often an ordinary one ("clubs"
//! heard as "close", "clothes", "cloves") — which the text alone cannot tell
//! from a right one: [`sounds_like`](crate::sounds_like) never replaces a
//! common word, since it is far more often right than a misheard name.
//!
//! So such a stretch is only a *doubt*, and the engine settles it: the same
//! audio is decoded again with the doubted entries in the model's prompt
//! ([`recheck_prompt`]). Where the engine had doubted the word, the prompt
//! tips it to the entry; where it heard the word clearly, it writes the same
//! word again (measured on real speech, docs/benchmarks.md: "close
//! parenthesis" stays, "four queen of clothes" becomes "clubs"). Only the
//! doubted stretches take the recheck's words ([`confirm`]); the rest of
//! the text stays the first decode's.
//!
//! Token probabilities would say the same thing more cheaply, but the
//! engine (transcribe.cpp 0.4.1) returns none for Whisper or Moonshine: its
//! token rows come only with token timestamps, which those families lack.

use std::ops::Range;

use crate::sounds_like::{letters, split_words, SoundsLike, Word};

/// At most this many entries are rechecked for one text: each doubt costs
/// nothing, but a recheck is a second decode, and more entries in one prompt
/// dilute it.
const MAX_ENTRIES: usize = 3;

/// How often each doubted entry is written in the recheck's prompt: once
/// was not enough to tip a doubted word on real speech; three times was.
const PROMPT_REPEATS: usize = 3;

/// A stretch of the engine's text that may be a listed entry misheard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doubt {
    /// The entry, as the user wrote it.
    pub entry: String,
    /// What the engine wrote instead.
    pub heard: String,
    /// The stretch, as word indices of the text.
    start: usize,
    words: usize,
}

/// The doubts in `text`, closest first and not overlapping; empty when
/// nothing there sounds like an entry (or the entry is already there).
pub(crate) fn find(sounds_like: &SoundsLike, text: &str) -> Vec<Doubt> {
    let words = split_words(text);
    let mut found: Vec<(usize, Doubt)> = Vec::new();
    for start in 0..words.len() {
        for entry in sounds_like.entries() {
            let longest = (entry.words + 1).min(words.len() - start);
            for n in 1..=longest {
                let span = &words[start..start + n];
                if span[..n - 1].iter().any(|w| w.ends_clause) {
                    break;
                }
                if let Some(distance) = sounds_like.doubted(entry, span) {
                    found.push((
                        distance,
                        Doubt {
                            entry: entry.written.clone(),
                            heard: text[span[0].core_start..span[n - 1].core_end].to_string(),
                            start,
                            words: n,
                        },
                    ));
                }
            }
        }
    }
    found.sort_by_key(|(distance, d)| (*distance, d.start));
    let mut taken = vec![false; words.len()];
    let mut doubts = Vec::new();
    for (_, d) in found {
        let range = d.start..d.start + d.words;
        if taken[range.clone()].iter().any(|t| *t) {
            continue;
        }
        taken[range].iter_mut().for_each(|t| *t = true);
        doubts.push(d);
    }
    // The entries to recheck: the closest few, with all their doubts.
    let mut entries: Vec<&str> = Vec::new();
    for d in &doubts {
        if !entries.contains(&d.entry.as_str()) && entries.len() < MAX_ENTRIES {
            entries.push(&d.entry);
        }
    }
    let entries: Vec<String> = entries.into_iter().map(str::to_string).collect();
    doubts.retain(|d| entries.contains(&d.entry));
    doubts.sort_by_key(|d| d.start);
    doubts
}

/// The prompt the recheck decodes with: each doubted entry, a few times.
pub fn recheck_prompt(doubts: &[Doubt]) -> String {
    let mut entries: Vec<&str> = Vec::new();
    for d in doubts {
        if !entries.contains(&d.entry.as_str()) {
            entries.push(&d.entry);
        }
    }
    let said: Vec<&str> = entries
        .iter()
        .flat_map(|e| std::iter::repeat_n(*e, PROMPT_REPEATS))
        .collect();
    // A sentence, as a transcript would have it: capitalised, with a period.
    let sentence = said.join(", ");
    let mut chars = sentence.chars();
    let first: String = chars
        .next()
        .into_iter()
        .flat_map(char::to_uppercase)
        .collect();
    format!("{first}{}.", chars.as_str())
}

/// `text` with each doubt that `recheck` (the same audio decoded with
/// [`recheck_prompt`]) wrote as its entry replaced by the entry; every other
/// word as it was.
pub fn confirm(text: &str, doubts: &[Doubt], recheck: &str) -> String {
    apply(text, &confirmed(text, doubts, recheck))
}

/// The doubts of `text` that `recheck` confirms, as byte ranges of `text`
/// and the entry to write there, in order. The two texts are aligned word
/// by word; a doubt is confirmed when the words the recheck has in its
/// place spell the entry.
pub fn confirmed(text: &str, doubts: &[Doubt], recheck: &str) -> Vec<(Range<usize>, String)> {
    if doubts.is_empty() {
        return Vec::new();
    }
    let first = split_words(text);
    let second = split_words(recheck);
    let aligned = align(&first, &second);
    doubts
        .iter()
        .filter(|d| {
            let in_place: String = aligned
                .iter()
                .filter(|(i, _)| i.is_some_and(|i| (d.start..d.start + d.words).contains(&i)))
                .filter_map(|(_, j)| j.map(|j| second[j].letters.as_str()))
                .collect();
            in_place == letters(&d.entry)
        })
        .map(|d| {
            let range = first[d.start].core_start..first[d.start + d.words - 1].core_end;
            (range, d.entry.clone())
        })
        .collect()
}

/// `text` with `replacements` (in order, not overlapping) made.
pub fn apply(text: &str, replacements: &[(Range<usize>, String)]) -> String {
    let mut out = String::new();
    let mut copied_to = 0;
    for (range, entry) in replacements {
        out.push_str(&text[copied_to..range.start]);
        out.push_str(entry);
        copied_to = range.end;
    }
    out.push_str(&text[copied_to..]);
    out
}

/// A word-level alignment of `a` and `b` (least edits): pairs of indices,
/// `None` on the side a word is missing from.
fn align(a: &[Word], b: &[Word]) -> Vec<(Option<usize>, Option<usize>)> {
    let (n, m) = (a.len(), b.len());
    let mut cost = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in cost.iter_mut().enumerate() {
        row[0] = i;
    }
    cost[0] = (0..=m).collect();
    for i in 1..=n {
        for j in 1..=m {
            let same = a[i - 1].letters == b[j - 1].letters;
            cost[i][j] = (cost[i - 1][j - 1] + usize::from(!same))
                .min(cost[i - 1][j] + 1)
                .min(cost[i][j - 1] + 1);
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let same = i > 0 && j > 0 && a[i - 1].letters == b[j - 1].letters;
        if i > 0 && j > 0 && cost[i][j] == cost[i - 1][j - 1] + usize::from(!same) {
            pairs.push((Some(i - 1), Some(j - 1)));
            i -= 1;
            j -= 1;
        } else if i > 0 && cost[i][j] == cost[i - 1][j] + 1 {
            pairs.push((Some(i - 1), None));
            i -= 1;
        } else {
            pairs.push((None, Some(j - 1)));
            j -= 1;
        }
    }
    pairs.reverse();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doubts(vocabulary: &[&str], text: &str) -> Vec<Doubt> {
        let v: Vec<String> = vocabulary.iter().map(|s| s.to_string()).collect();
        find(&SoundsLike::new(&v), text)
    }

    fn heard(d: &[Doubt]) -> Vec<&str> {
        d.iter().map(|d| d.heard.as_str()).collect()
    }

    #[test]
    fn an_ordinary_word_that_sounds_like_an_entry_is_a_doubt() {
        // What whisper tiny.en, whisper base and moonshine tiny wrote for
        // "clubs" in pocketsphinx's card recordings.
        for (text, word) in [
            ("Ten of close.", "close"),
            ("Four queen of clothes.", "clothes"),
            ("Four of cloves, seven of hearts.", "cloves"),
            ("Four queen of gloves.", "gloves"),
        ] {
            let d = doubts(&["clubs"], text);
            assert_eq!(heard(&d), [word], "{text}");
            assert_eq!(d[0].entry, "clubs");
        }
        assert_eq!(heard(&doubts(&["caret"], "Carrot.")), ["Carrot"]);
        assert_eq!(
            heard(&doubts(&["caller"], "Send this color to voicemail.")),
            ["color"]
        );
    }

    #[test]
    fn no_doubt_without_a_sound_alike_or_with_the_entry_there() {
        assert!(doubts(&["clubs"], "Seven of clubs.").is_empty());
        assert!(doubts(&["clubs"], "The meeting is on Monday at noon.").is_empty());
        assert!(doubts(&[], "Ten of close.").is_empty());
        // Little words are never a doubt on their own.
        assert!(doubts(&["Oz"], "It is as it was.").is_empty());
    }

    #[test]
    fn the_recheck_confirms_only_where_it_wrote_the_entry() {
        let d = doubts(
            &["clubs"],
            "Eight of spades, four of close, seven of hearts.",
        );
        assert_eq!(recheck_prompt(&d), "Clubs, clubs, clubs.");
        // The recheck wrote the entry in the doubted place (and changed an
        // unrelated word, which stays the first decode's).
        assert_eq!(
            confirm(
                "Eight of spades, four of close, seven of hearts.",
                &d,
                "8 of spades, four of clubs, seven of hearts."
            ),
            "Eight of spades, four of clubs, seven of hearts."
        );
        // The engine heard the word again: unchanged.
        assert_eq!(
            confirm(
                "Eight of spades, four of close, seven of hearts.",
                &d,
                "Eight of spades, four of clothes, seven of hearts."
            ),
            "Eight of spades, four of close, seven of hearts."
        );
        let d = doubts(&["clubs"], "Close parenthesis.");
        assert_eq!(
            confirm("Close parenthesis.", &d, "Clothes parenthesis"),
            "Close parenthesis."
        );
    }

    #[test]
    fn several_entries_share_one_recheck() {
        let d = doubts(&["clubs", "caller"], "Four of close for the color.");
        assert_eq!(heard(&d), ["close", "color"]);
        assert_eq!(
            recheck_prompt(&d),
            "Clubs, clubs, clubs, caller, caller, caller."
        );
        assert_eq!(
            confirm(
                "Four of close for the color.",
                &d,
                "Four of clubs for the color."
            ),
            "Four of clubs for the color."
        );
    }

    /// How often ordinary English makes a recheck (a second decode): the
    /// GPL's 5,600 words, line by line as if each were a dictation, under
    /// the benchmark's vocabulary with its everyday-sounding entries. The
    /// text itself never changes without the engine (see `confirm`); this
    /// bounds the cost. docs/benchmarks.md has the figure.
    #[test]
    fn ordinary_text_rarely_asks_for_a_recheck() {
        let text = crate::sounds_like::guard_text::gpl();
        let everyday = ["clubs", "caller", "caret", "comma", "colon", "DAHDI"];
        let vocabulary: Vec<String> = crate::sounds_like::guard_text::NAMES
            .iter()
            .chain(&everyday)
            .map(|s| s.to_string())
            .collect();
        let sounds_like = SoundsLike::new(&vocabulary);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut rechecked = 0;
        let mut heard = std::collections::BTreeMap::<String, usize>::new();
        for line in &lines {
            let d = find(&sounds_like, line);
            if !d.is_empty() {
                rechecked += 1;
            }
            for d in d {
                *heard
                    .entry(format!("{} for {}", d.heard.to_lowercase(), d.entry))
                    .or_default() += 1;
            }
        }
        let share = rechecked as f64 / lines.len() as f64;
        println!(
            "{rechecked} of {} lines would be rechecked ({:.1} %): {heard:?}",
            lines.len(),
            share * 100.0
        );
        assert!(
            share < 0.10,
            "{rechecked} of {} lines: {heard:?}",
            lines.len()
        );
    }
}
