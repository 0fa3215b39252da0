//! Does a run's text cover the speech it was given? Whisper sometimes ends
//! its output early (its end-of-text after a sentence) with speech still to
//! come, and nothing else notices: the words are silently gone. Every
//! dictation's final runs and every file window are checked here; where the
//! text ends well before the speech does, the caller runs the engine over
//! the rest and joins the texts with [`join_recovered`].
//!
//! Where the run has timestamps, its last segment says where the text ends.
//! A run without them (a transcript prefix turns them off; some models have
//! none) is judged by its length: text that a slow speaker would say in far
//! less time than the speech lasted leaves some of it out.
//!
//! Pure functions over samples and text, tested on their own.

use crate::audio::{ms_to_samples, samples_to_ms};
use utter_engine::Utterance;

/// Speech left after the text's end that counts as missing: less is the
/// coarseness of timestamps and the span's trailing pad.
pub const MIN_UNCOVERED_MS: u64 = 1_200;
/// The VAD's padding on each side of a span (the dictation and file
/// defaults): silence, not speech.
const PAD_MS: u64 = 300;
/// Characters of text per second of speech, slow: text shorter than this
/// rate allows for the speech is missing some of it. tiny.en's text of the
/// LibriVox readings runs at 15–17 characters a second of VAD speech (pads
/// left out), the slower speaker at about 13. A false alarm costs one
/// run and no words: [`join_recovered`] writes what both runs heard once.
const SLOW_CHARS_PER_S: f64 = 12.0;
/// ... and fast: where text of unknown timing is assumed to end at the
/// earliest, so the run over the rest starts early rather than late (the
/// overlap is removed by [`join_recovered`]).
const FAST_CHARS_PER_S: f64 = 20.0;
/// Audio heard again before the end a timestamp gives (they are coarse).
const OVERLAP_MS: u64 = 500;

/// Where the text of a run ends, as far as can be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEnd {
    /// The run's last segment ends here (sample in the run's audio).
    At(u64),
    /// No timestamps: judged by the text's length.
    Unknown,
}

impl TextEnd {
    /// The end `u`'s timestamps give; `timed` says whether the run had any
    /// (a prefixed Whisper run's single segment spans the whole audio).
    pub fn of(u: &Utterance, timed: bool) -> Self {
        match u.segments.last() {
            Some(s) if timed => Self::At(ms_to_samples(s.end_ms.max(0) as u64)),
            _ => Self::Unknown,
        }
    }
}

/// What a run's text leaves out of its speech.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    Full,
    /// Speech after `from` (a sample in the run's audio) is not in the
    /// text: about `missing_ms` of it.
    EndsEarly {
        from: u64,
        missing_ms: u64,
    },
}

/// Checks `text` (ending at `end`) against the speech `spans` of the run's
/// audio (samples in that audio, pads included, in order).
pub fn check(text: &str, end: TextEnd, spans: &[(u64, u64)]) -> Coverage {
    let speech_ms = |from: u64| -> u64 {
        spans
            .iter()
            .map(|&(a, b)| {
                if b <= from {
                    return 0;
                }
                // Pads are silence; a span cut by `from` keeps only its end pad.
                let pads = if a >= from { 2 * PAD_MS } else { PAD_MS };
                samples_to_ms(b - a.max(from)).saturating_sub(pads)
            })
            .sum()
    };
    match end {
        TextEnd::At(at) => {
            let missing_ms = speech_ms(at);
            if missing_ms < MIN_UNCOVERED_MS {
                return Coverage::Full;
            }
            Coverage::EndsEarly {
                from: at.saturating_sub(ms_to_samples(OVERLAP_MS)),
                missing_ms,
            }
        }
        TextEnd::Unknown => {
            let chars = text.trim().chars().count() as f64;
            let total = speech_ms(0);
            let said_ms = (chars / SLOW_CHARS_PER_S * 1000.0) as u64;
            let missing_ms = total.saturating_sub(said_ms);
            if missing_ms < MIN_UNCOVERED_MS {
                return Coverage::Full;
            }
            let earliest_ms = (chars / FAST_CHARS_PER_S * 1000.0) as u64;
            Coverage::EndsEarly {
                from: speech_point(spans, earliest_ms),
                missing_ms,
            }
        }
    }
}

/// The sample where `ms` of speech (pads left out) have gone by, moved back
/// to the start of its span: a pause is a clean place to start a run.
fn speech_point(spans: &[(u64, u64)], ms: u64) -> u64 {
    let mut left = ms;
    for &(a, b) in spans {
        let len = samples_to_ms(b - a).saturating_sub(2 * PAD_MS);
        if left < len {
            // Within this span: from its start if the point is near it,
            // else a little before the point (mid-sentence).
            let back = ms_to_samples(PAD_MS + left).saturating_sub(ms_to_samples(1_000));
            return a + back;
        }
        left -= len;
    }
    spans.last().map_or(0, |&(_, b)| b)
}

/// `existing` followed by `recovered`, a run over audio that may overlap
/// the end of `existing`'s: the words both have (the end of one, the start
/// of the other, a few words' differences allowed) are written once.
pub fn join_recovered(existing: &str, recovered: &str) -> String {
    let skip = repeated_words(existing, recovered);
    let rest: Vec<&str> = recovered.split_whitespace().skip(skip).collect();
    crate::text::join_dictation([existing, rest.join(" ").as_str()])
}

/// How many leading words of `recovered` repeat the end of `existing`.
pub fn repeated_words(existing: &str, recovered: &str) -> usize {
    let ours: Vec<&str> = existing.split_whitespace().collect();
    let theirs: Vec<&str> = recovered.split_whitespace().collect();
    overlap(&ours, &theirs)
}

/// How many leading words of `theirs` repeat the end of `ours`: the longest
/// suffix of `ours` that a prefix of `theirs` matches with about one edit
/// in three words.
fn overlap(ours: &[&str], theirs: &[&str]) -> usize {
    const LOOK_BACK: usize = 40;
    let norm = |w: &&str| -> String {
        w.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let ours: Vec<String> = ours[ours.len().saturating_sub(LOOK_BACK)..]
        .iter()
        .map(norm)
        .collect();
    let theirs: Vec<String> = theirs.iter().map(norm).collect();
    // Longest suffix first: the first that matches is the overlap.
    for n in (2..=ours.len()).rev() {
        let suffix = &ours[ours.len() - n..];
        // Edit distance of `suffix` against every prefix of `theirs`.
        let mut prev: Vec<usize> = (0..=theirs.len()).collect();
        for (i, a) in suffix.iter().enumerate() {
            let mut cur = vec![i + 1; theirs.len() + 1];
            for (j, b) in theirs.iter().enumerate() {
                cur[j + 1] = (prev[j] + usize::from(a != b))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1);
            }
            prev = cur;
        }
        // The longest prefix at the least distance.
        let (best, d) = prev
            .iter()
            .enumerate()
            .min_by_key(|&(j, d)| (*d, std::cmp::Reverse(j)))
            .map(|(j, d)| (j, *d))
            .unwrap_or((0, usize::MAX));
        // About one word in three may differ (a word split or misheard in
        // one run), and at least two must agree.
        if best > 0 && d * 3 <= n + 1 && n.saturating_sub(d) >= 2 {
            return best;
        }
    }
    0
}

/// "N s of speech could not be transcribed", for `ms` of it (none: `None`).
pub fn untranscribed_warning(ms: u64) -> Option<String> {
    (ms > 0).then(|| {
        format!(
            "{:.1} s of speech could not be transcribed",
            ms as f64 / 1000.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 16_000;

    #[test]
    fn a_text_whose_timestamps_reach_the_end_of_the_speech_covers_it() {
        let spans = [(0, 5 * S), (6 * S, 10 * S)];
        assert_eq!(
            check("anything", TextEnd::At(9 * S + S / 2), &spans),
            Coverage::Full
        );
    }

    #[test]
    fn a_text_ending_before_a_whole_span_misses_it() {
        let spans = [(0, 5 * S), (6 * S, 12 * S)];
        match check("first sentence", TextEnd::At(5 * S), &spans) {
            Coverage::EndsEarly { from, missing_ms } => {
                assert_eq!(from, 5 * S - S / 2);
                assert_eq!(missing_ms, 5_400, "the second span less its pads");
            }
            Coverage::Full => panic!("six seconds of speech are missing"),
        }
    }

    #[test]
    fn text_far_too_short_for_its_speech_misses_some() {
        // 17 s of speech (the dictation), one sentence of text.
        let spans = [(0, 11 * S), (11 * S + S / 2, 18 * S)];
        let text = "And so my fellow Americans ask not what your country can do for you, \
                    ask what you can do for your country.";
        let Coverage::EndsEarly { from, .. } = check(text, TextEnd::Unknown, &spans) else {
            panic!("the second span is missing");
        };
        assert!(from < 11 * S, "starts early rather than late: {from}");
        let full = format!("{text} Had he married a more amiable woman, he might have been made still more respectable than he was.");
        assert_eq!(check(&full, TextEnd::Unknown, &spans), Coverage::Full);
    }

    #[test]
    fn the_words_both_runs_heard_are_written_once() {
        assert_eq!(
            join_recovered(
                "ask not what your country can do for you, ask what you can do for your country.",
                "do for your country. Had he married a more amiable woman."
            ),
            "ask not what your country can do for you, ask what you can do for your country. \
             Had he married a more amiable woman."
        );
        // A word heard differently in the overlap still matches.
        assert_eq!(
            join_recovered(
                "he was not an ill-disposed young man unless",
                "an old disposed young man, unless to be rather cold-hearted"
            ),
            "he was not an ill-disposed young man unless to be rather cold-hearted"
        );
    }

    #[test]
    fn a_recovered_text_that_only_repeats_adds_nothing_and_a_new_one_is_appended() {
        let text = "ask what you can do for your country.";
        assert_eq!(
            join_recovered(text, "Ask what you can do for your country."),
            text
        );
        assert_eq!(
            join_recovered(text, "Had he married a more amiable woman."),
            "ask what you can do for your country. Had he married a more amiable woman."
        );
        assert_eq!(join_recovered("", "Hello there."), "Hello there.");
    }
}
