//! The vocabulary as a correction after the engine, for every model family:
//! a listed word or phrase replaces a stretch of one to four transcript
//! words that sounds like it ("old-sposed" → "ill-disposed", "inter-astress
//! exchange" → "Inter-Asterisk Exchange"), and a listed word heard with
//! another spelling gets the user's ("asterisk" → "Asterisk").
//!
//! "Sounds like" is an edit distance between phonetic keys: the letters
//! with English spelling rules folded (ph → f, soft c → s, ck → k...), every
//! vowel after the first dropped, doubled letters collapsed. Guarded against
//! false hits, since a wrong replacement is worse than none:
//! - keys shorter than four sounds only match exactly (letters, not sounds);
//! - a key of under six sounds must agree exactly; in a longer one about
//!   one sound in six may differ (and the first must agree) when the
//!   spelling is close too;
//! - a single common English word is never replaced by a sound-alike (only
//!   respelled when it is the listed word itself), since it is far more
//!   often right than a misheard name;
//! - a stretch is replaced only if every word of it is part of the match
//!   (no partial words), and matches never overlap.
//!
//! Measured on real speech and on text without vocabulary words in
//! docs/benchmarks.md ("The vocabulary as a correction").

/// A vocabulary, prepared once per settings change.
#[derive(Debug, Clone, Default)]
pub struct SoundsLike {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) written: String,
    letters: String,
    key: String,
    pub(crate) words: usize,
}

/// Up to this many transcript words may stand for one entry (one more than
/// the entry has: a name is often heard split, "Digium" → "dig e um").
const MAX_SPAN_WORDS: usize = 4;

impl SoundsLike {
    pub fn new(vocabulary: &[String]) -> Self {
        let entries = vocabulary
            .iter()
            .map(|w| w.trim())
            .filter(|w| !w.is_empty())
            .map(|w| Entry {
                written: w.to_string(),
                letters: letters(w),
                key: key(w),
                words: w.split_whitespace().count(),
            })
            .filter(|e| !e.letters.is_empty())
            .collect();
        Self { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// How far `span` is from `entry` when it is no match [`apply`] makes
    /// but sounds close enough that the engine may have misheard the entry
    /// (see [`crate::doubts`]): an ordinary word, or a short name's
    /// sound-alike. Voiced and voiceless sounds count as one here ("gloves"
    /// for "clubs").
    pub(crate) fn doubted(&self, entry: &Entry, span: &[Word]) -> Option<usize> {
        let heard_letters: String = span.iter().map(|w| w.letters.as_str()).collect();
        if heard_letters == entry.letters || matches(entry, span).is_some() {
            return None;
        }
        let function_word = |w: &Word| FUNCTION_WORDS.contains(&w.letters.as_str());
        if function_word(&span[0]) || function_word(&span[span.len() - 1]) {
            return None;
        }
        // An acronym is said letter by letter: its spelling is no sound.
        let acronym = entry.written.chars().filter(|c| c.is_alphabetic()).count() > 1
            && !entry.written.chars().any(char::is_lowercase);
        let (heard, listed) = (loose_key(&heard_letters), loose_key(&entry.letters));
        if acronym || listed.len() < 3 || heard.is_empty() {
            return None;
        }
        // The same first and last sound, and a short key exactly: measured
        // on the GPL's words (doubts::tests), looser keys doubted most lines.
        if heard[..1] != listed[..1] || heard[heard.len() - 1..] != listed[listed.len() - 1..] {
            return None;
        }
        let allowed = match listed.len() {
            0..4 => 0,
            4..8 => 1,
            _ => 2,
        };
        let distance = edit_distance(heard.as_bytes(), listed.as_bytes());
        (distance <= allowed).then_some(distance)
    }

    /// `text` with each stretch that sounds like a listed entry written as
    /// the entry. Punctuation around a replaced stretch is kept. Where
    /// candidate stretches overlap, the closest wins ("an old-sposed": the
    /// one word, not the two).
    pub fn apply(&self, text: &str) -> String {
        if self.entries.is_empty() {
            return text.to_string();
        }
        let words: Vec<Word> = split_words(text);
        let mut candidates = Vec::new(); // (distance, words, start, entry)
        for start in 0..words.len() {
            for entry in &self.entries {
                let longest = (entry.words + 1)
                    .min(MAX_SPAN_WORDS)
                    .min(words.len() - start);
                for n in 1..=longest {
                    let span = &words[start..start + n];
                    // A stretch does not go on past a punctuation mark.
                    if span[..n - 1].iter().any(|w| w.ends_clause) {
                        break;
                    }
                    if let Some(distance) = matches(entry, span) {
                        candidates.push((distance, n, start, entry));
                    }
                }
            }
        }
        candidates.sort_by_key(|&(distance, n, start, _)| (distance, std::cmp::Reverse(n), start));
        let mut taken = vec![false; words.len()];
        let mut chosen = Vec::new();
        for (_, n, start, entry) in candidates {
            if taken[start..start + n].iter().any(|t| *t) {
                continue;
            }
            taken[start..start + n].iter_mut().for_each(|t| *t = true);
            chosen.push((start, n, entry));
        }
        chosen.sort_by_key(|&(start, ..)| start);
        let mut out = String::new();
        let mut copied_to = 0; // byte offset in `text`
        for (start, n, entry) in chosen {
            out.push_str(&text[copied_to..words[start].core_start]);
            out.push_str(&entry.written);
            copied_to = words[start + n - 1].core_end;
        }
        out.push_str(&text[copied_to..]);
        out
    }
}

/// How far `span` is from `entry` (0: the same letters), if it is a match.
fn matches(entry: &Entry, span: &[Word]) -> Option<usize> {
    // Common words side by side ("no matter most") are right far more often
    // than they are a misheard name ("Mattermost").
    let all_common = span
        .iter()
        .all(|w| COMMON_WORDS.contains(&w.letters.as_str()));
    let heard_letters: String = span.iter().map(|w| w.letters.as_str()).collect();
    if heard_letters == entry.letters {
        // The listed word itself, spelled another way (case, hyphens,
        // spaces): the user's spelling, unless it already is.
        let heard: Vec<&str> = span.iter().map(|w| w.core.as_str()).collect();
        let respelled = heard.join(" ") != entry.written;
        return (respelled && (span.len() == 1 || !all_common)).then_some(0);
    }
    if all_common {
        return None;
    }
    // A little word at either end is its own word ("an inter-astress
    // exchange" is "an" + the name), unless the entry itself has it there.
    let (first, last) = (&span[0].letters, &span[span.len() - 1].letters);
    let edge_word = |w: &String, at_start: bool| {
        FUNCTION_WORDS.contains(&w.as_str())
            && !(if at_start {
                entry.letters.starts_with(w.as_str())
            } else {
                entry.letters.ends_with(w.as_str())
            })
    };
    if span.len() > 1 && (edge_word(first, true) || edge_word(last, false)) {
        return None;
    }
    let heard_key = key(&heard_letters);
    if entry.key.len() < 4 || heard_key.is_empty() || heard_key[..1] != entry.key[..1] {
        return None;
    }
    // A short key must agree exactly; one sound off is allowed from six
    // sounds, one in six from twelve, and only when the spelling is close
    // too ("ill-sposed" for "ill-disposed", but not "entire risk" for
    // "Asterisk": one sound apart, five letters).
    let allowed = match entry.key.len() {
        0..6 => 0,
        6..12 => 1,
        n => n / 6,
    };
    let distance = edit_distance(heard_key.as_bytes(), entry.key.as_bytes());
    let spelled_close = || {
        edit_distance(heard_letters.as_bytes(), entry.letters.as_bytes())
            <= (entry.letters.len() / 4).max(2)
    };
    if distance > 0 && !spelled_close() {
        return None;
    }
    (distance <= allowed).then_some(distance + 1)
}

/// A word of the transcript: the letters between its punctuation.
#[derive(Debug)]
pub(crate) struct Word {
    /// The word without leading/trailing punctuation (hyphens inside kept).
    pub core: String,
    pub letters: String,
    pub core_start: usize,
    pub core_end: usize,
    pub ends_clause: bool,
}

pub(crate) fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut at = 0;
    for piece in text.split_inclusive(char::is_whitespace) {
        let token = piece.trim_end();
        let lead = token.len()
            - token
                .trim_start_matches(|c: char| !c.is_alphanumeric())
                .len();
        let core = token
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .trim_end_matches(|c: char| !c.is_alphanumeric());
        if !core.is_empty() {
            let start = at + lead;
            words.push(Word {
                core: core.to_string(),
                letters: letters(core),
                core_start: start,
                core_end: start + core.len(),
                ends_clause: token.ends_with(['.', '!', '?', ',', ';', ':']),
            });
        }
        at += piece.len();
    }
    words
}

/// Lower-case letters and digits only.
pub(crate) fn letters(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A phonetic key: English spelling folded to sounds, vowels after the
/// first dropped, doubled sounds collapsed. Not a full Metaphone: enough
/// that a misheard name and its spelling meet.
pub(crate) fn key(s: &str) -> String {
    let l: Vec<char> = letters(s).chars().collect();
    let vowel = |c: char| "aeiouy".contains(c);
    let mut sounds = String::new();
    let mut i = 0;
    while i < l.len() {
        let c = l[i];
        let next = l.get(i + 1).copied().unwrap_or(' ');
        let (sound, width) = match (c, next) {
            ('p', 'h') => ("f", 2),
            ('c', 'k') => ("k", 2),
            ('c', 'h') | ('s', 'h') => ("x", 2),
            ('t', 'h') => ("0", 2),
            ('g', 'h') => ("", 2),
            ('q', 'u') => ("k", 2),
            ('w', 'r') | ('k', 'n') if i == 0 => ("", 1),
            ('c', 'e' | 'i' | 'y') => ("s", 1),
            ('g', 'e' | 'i' | 'y') => ("j", 1),
            ('d', 'g') => ("j", 2),
            ('c' | 'q', _) => ("k", 1),
            ('x', _) => ("ks", 1),
            ('z', _) => ("s", 1),
            ('v', _) => ("f", 1),
            ('w' | 'h', _) if !vowel(next) => ("", 1),
            (c, _) if vowel(c) => (if i == 0 { "a" } else { "" }, 1),
            _ => ("", 0),
        };
        if width == 0 {
            sounds.push(c);
            i += 1;
        } else {
            sounds.push_str(sound);
            i += width;
        }
    }
    let mut collapsed = String::new();
    for c in sounds.chars() {
        if !collapsed.ends_with(c) {
            collapsed.push(c);
        }
    }
    collapsed
}

/// [`key`] with voiced and voiceless sounds folded together (b/p, d/t,
/// g/k): what a small model confuses, for doubts only.
fn loose_key(s: &str) -> String {
    let mut folded = String::new();
    for c in key(s).chars() {
        let c = match c {
            'b' => 'p',
            'd' => 't',
            'g' => 'k',
            c => c,
        };
        if !folded.ends_with(c) {
            folded.push(c);
        }
    }
    folded
}

pub(crate) fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, y) in b.iter().enumerate() {
            cur.push(
                (prev[j + 1] + 1)
                    .min(cur[j] + 1)
                    .min(prev[j] + usize::from(x != y)),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Words that begin or end a stretch only when the entry has them there.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "he", "her", "his", "i", "in",
    "is", "it", "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "the", "to", "up",
    "us", "was", "we", "you",
];

/// Common English words, which a sound-alike never replaces on its own.
const COMMON_WORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "almost",
    "along",
    "already",
    "also",
    "although",
    "always",
    "among",
    "another",
    "answer",
    "anything",
    "around",
    "asked",
    "away",
    "back",
    "because",
    "become",
    "been",
    "before",
    "began",
    "behind",
    "being",
    "believe",
    "below",
    "best",
    "better",
    "between",
    "both",
    "bring",
    "brought",
    "business",
    "call",
    "called",
    "came",
    "cannot",
    "care",
    "case",
    "cause",
    "certain",
    "change",
    "children",
    "city",
    "close",
    "cold",
    "come",
    "coming",
    "common",
    "communities",
    "community",
    "company",
    "consider",
    "could",
    "country",
    "course",
    "court",
    "days",
    "death",
    "different",
    "does",
    "done",
    "door",
    "down",
    "during",
    "each",
    "early",
    "either",
    "else",
    "end",
    "enough",
    "enter",
    "even",
    "ever",
    "every",
    "everything",
    "exchange",
    "eyes",
    "face",
    "fact",
    "family",
    "father",
    "feel",
    "felt",
    "few",
    "find",
    "first",
    "five",
    "following",
    "found",
    "four",
    "friend",
    "from",
    "full",
    "gave",
    "general",
    "given",
    "give",
    "going",
    "gone",
    "good",
    "great",
    "half",
    "hand",
    "hands",
    "hard",
    "have",
    "having",
    "head",
    "hear",
    "heard",
    "heart",
    "held",
    "help",
    "here",
    "high",
    "himself",
    "home",
    "hope",
    "house",
    "however",
    "human",
    "idea",
    "important",
    "indeed",
    "interest",
    "into",
    "itself",
    "just",
    "keep",
    "kind",
    "knew",
    "know",
    "known",
    "large",
    "last",
    "later",
    "least",
    "leave",
    "left",
    "less",
    "letter",
    "life",
    "light",
    "like",
    "little",
    "live",
    "long",
    "look",
    "looked",
    "made",
    "make",
    "making",
    "many",
    "matter",
    "mean",
    "means",
    "might",
    "mind",
    "minutes",
    "moment",
    "money",
    "more",
    "morning",
    "most",
    "mother",
    "much",
    "must",
    "myself",
    "name",
    "nature",
    "near",
    "need",
    "never",
    "next",
    "night",
    "nothing",
    "number",
    "often",
    "once",
    "only",
    "open",
    "order",
    "other",
    "others",
    "over",
    "own",
    "part",
    "past",
    "people",
    "perhaps",
    "person",
    "place",
    "point",
    "possible",
    "power",
    "present",
    "public",
    "put",
    "question",
    "quite",
    "rather",
    "read",
    "real",
    "reason",
    "right",
    "room",
    "round",
    "said",
    "same",
    "saw",
    "says",
    "second",
    "seemed",
    "seen",
    "sense",
    "service",
    "set",
    "several",
    "shall",
    "should",
    "show",
    "side",
    "since",
    "small",
    "some",
    "something",
    "soon",
    "sort",
    "speak",
    "still",
    "story",
    "such",
    "sure",
    "system",
    "take",
    "taken",
    "tell",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "think",
    "this",
    "those",
    "though",
    "thought",
    "three",
    "through",
    "time",
    "times",
    "together",
    "told",
    "took",
    "toward",
    "turn",
    "turned",
    "under",
    "until",
    "upon",
    "used",
    "very",
    "voice",
    "want",
    "wanted",
    "water",
    "well",
    "went",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "white",
    "whole",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "woman",
    "word",
    "words",
    "work",
    "world",
    "would",
    "write",
    "year",
    "years",
    "young",
    "your",
];

/// Ordinary English and a vocabulary of names and terms, for the tests
/// that count what the vocabulary does to text without those names.
#[cfg(test)]
pub(crate) mod guard_text {
    /// The GPL's 5,600 words (every Debian system has them: base-files).
    pub fn gpl() -> String {
        let path = "/usr/share/common-licenses/GPL-3";
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{path} (Debian's base-files): {e}"))
    }

    /// The names and terms of the vocabulary benchmark
    /// (tests/bench/vocabulary_fix.py) before its everyday-sounding ones.
    pub const NAMES: &[&str] = &[
        "Kubernetes",
        "PostgreSQL",
        "GitHub",
        "Tauri",
        "Mattermost",
        "Siobhan",
        "Grafana",
        "Terraform",
        "OAuth",
        "Nguyen",
        "WebAssembly",
        "Dashwood",
        "Digium",
        "Asterisk",
        "Inter-Asterisk Exchange",
        "ill-disposed",
        "IAX",
        "PBX",
        "IVR",
        "voicemail",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(vocabulary: &[&str], text: &str) -> String {
        let v: Vec<String> = vocabulary.iter().map(|s| s.to_string()).collect();
        SoundsLike::new(&v).apply(text)
    }

    #[test]
    fn misheard_listed_words_are_corrected() {
        // Real whisper tiny.en and Moonshine mishearings (docs/benchmarks.md).
        assert_eq!(
            fix(&["ill-disposed"], "He was not an old-sposed young man."),
            "He was not an ill-disposed young man."
        );
        assert_eq!(
            fix(&["ill-disposed"], "He was not an ill-sposed young man."),
            "He was not an ill-disposed young man."
        );
        assert_eq!(
            fix(
                &["Inter-Asterisk Exchange"],
                "to attempt an inter-astress exchange or IAX connection"
            ),
            "to attempt an Inter-Asterisk Exchange or IAX connection"
        );
        assert_eq!(
            fix(
                &["Asterisk"],
                "asterisk is an open source PBX, visit the asterisk console."
            ),
            "Asterisk is an open source PBX, visit the Asterisk console."
        );
    }

    #[test]
    fn a_name_heard_as_several_words_is_found_without_the_little_words_around_it() {
        // whisper tiny.en on Asterisk's "demo-abouttotry" prompt.
        assert_eq!(
            fix(
                &["Inter-Asterisk Exchange"],
                "I am about to attempt and enter asterisk exchange connection"
            ),
            "I am about to attempt and Inter-Asterisk Exchange connection"
        );
    }

    #[test]
    fn the_same_sentence_without_the_vocabulary_is_unchanged() {
        let text = "He was not an old-sposed young man.";
        assert_eq!(fix(&[], text), text);
        assert_eq!(fix(&["Kubernetes", "PostgreSQL"], text), text);
    }

    #[test]
    fn a_right_common_word_is_not_replaced() {
        // "enter" sounds like the start of "Inter-Asterisk", "matter" like
        // "Mattermost": both are right here.
        assert_eq!(
            fix(&["Inter"], "Please enter your code."),
            "Please enter your code."
        );
        assert_eq!(
            fix(&["Mattermost"], "No matter most of the time."),
            "No matter most of the time."
        );
        assert_eq!(
            fix(&["Dashwood"], "And Mr. John Dashwood had then leisure"),
            "And Mr. John Dashwood had then leisure"
        );
        assert_eq!(fix(&["Tauri"], "the story was told"), "the story was told");
    }

    #[test]
    fn matches_do_not_cross_a_sentence_end_and_keep_punctuation() {
        assert_eq!(
            fix(&["Kubernetes"], "Deploy koober netties, then test."),
            "Deploy Kubernetes, then test."
        );
        assert_eq!(
            fix(&["Kubernetes"], "It is koober. Netties are fine."),
            "It is koober. Netties are fine."
        );
    }

    /// False replacements on real English without any vocabulary word: the
    /// GPL's 5,600 words (every Debian system has them) under a vocabulary
    /// of names and terms (docs/benchmarks.md has the figures).
    #[test]
    fn text_without_vocabulary_words_is_left_alone() {
        let text = guard_text::gpl();
        let v: Vec<String> = guard_text::NAMES.iter().map(|s| s.to_string()).collect();
        let fixer = SoundsLike::new(&v);
        let mut changed = Vec::new();
        for line in text.lines() {
            let out = fixer.apply(line);
            if out != line {
                changed.push((line.to_string(), out));
            }
        }
        assert!(
            changed.is_empty(),
            "{} lines changed: {changed:#?}",
            changed.len()
        );
    }

    #[test]
    fn keys_fold_spelling_to_sound() {
        assert_eq!(key("ill-disposed"), key("old-sposed"));
        assert_eq!(
            key("Inter-Asterisk Exchange"),
            key("inter-astress exchange")
        );
        assert_eq!(key("phone"), key("fone"));
        assert_eq!(key("city"), key("sity"));
    }
}
