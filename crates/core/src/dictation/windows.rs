//! Eager transcription with context: which engine run a dictation needs next.
//!
//! Transcribing each pause-closed span alone (the first eager design) lost the
//! words' context: a sentence with pauses came out as several sentences, with
//! words misheard. Here the speech is kept in windows of at most
//! [`WINDOW_MAX_MS`] (Whisper sees 30 s at a time). Each time the VAD closes a
//! span, the whole window so far is run again, with the text already found
//! for it as the transcript prefix: the model hears all of the window and
//! reads what came before, and decodes only the words not settled yet (so a
//! run costs about what a run over the new span alone did). A word is settled
//! once two runs in a row found it (the "local agreement" of streaming
//! Whisper) and it is not among the last few words: a word found only once
//! was found without the audio that follows it, and a pause mid-sentence often
//! leaves a wrong word or a full stop there that the next words correct. The
//! prefix then ends at the last full sentence among the settled words, so
//! the sentence in progress is decoded whole, with all of its audio. A full
//! window is committed and the next one starts with the committed text as
//! its prompt, as Whisper's own long-form decoding does. One run is in flight at a time; spans that
//! close meanwhile are coalesced into the next run.
//!
//! A model whose runs cost what their audio is and that takes no prefix
//! (Moonshine) would pay for the whole window again at every pause; for it
//! [`Growth::PerSpan`] keeps one window per VAD span: a span runs once when a
//! pause offers it and again only if the user went on speaking in it, and the
//! text before it is its prompt where the model takes one.
//!
//! This type is pure bookkeeping (no engine), so it is tested on its own.

use crate::text::join_dictation;

/// The longest window of speech in one engine run (Whisper's window is 30 s;
/// the margin keeps the pads of the spans inside it).
pub const WINDOW_MAX_MS: u64 = 28_000;
/// The longest window of [`SpeechWindows::short`].
pub const SHORT_WINDOW_MS: u64 = 8_000;
/// How much committed text goes into the next window's prompt. Whisper takes
/// up to 224 prompt tokens; the last few sentences are what helps.
const PROMPT_MAX_CHARS: usize = 600;
/// Words at the end of a window's text that the next run decodes again,
/// even when two runs agree on them.
pub const REDECODE_WORDS: usize = 4;

/// One engine run: the window's audio from `start` to `end` (samples at 16 kHz).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowRun {
    pub window: usize,
    pub start: u64,
    pub end: u64,
    /// The speech heard, as `(start, end)` pieces of `start..end` put one
    /// after the other with the pauses between left out, as files are
    /// transcribed ([`crate::packing`]); empty: all of `start..end`.
    pub pieces: Vec<(u64, u64)>,
    /// The text of the windows before this one.
    pub prompt: Option<String>,
    /// The text already found for this window; the run returns what follows.
    pub prefix: Option<String>,
}

#[derive(Debug)]
struct Window {
    start: u64,
    /// Where the window's first span began (its padding may reach into
    /// the window before, so `start` can be later).
    span_start: u64,
    /// End of the last span in the window.
    end: u64,
    /// The window's spans (merged where their pads overlap), for a run that
    /// hears them without the pauses between.
    spans: Vec<(u64, u64)>,
    text: String,
    /// The window's text before the last run: the words both agree on are
    /// settled.
    previous: String,
    /// The audio `text` covers ends here.
    done_to: u64,
    /// A run with a prefix failed: the window is transcribed without one.
    plain: bool,
}

/// What a window holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// Spans join the window until it would pass this many samples.
    UpTo(u64),
    /// One span a window: a later offer of the same span (the user went on
    /// speaking after a pause) extends it.
    PerSpan,
}

#[derive(Debug)]
pub struct SpeechWindows {
    windows: Vec<Window>,
    in_flight: Option<WindowRun>,
    growth: Growth,
    /// The model forces a transcript prefix (Whisper); without it every run
    /// decodes its whole window (Moonshine, whose runs cost what their audio is).
    prefixes: bool,
    /// Runs hear the window's spans without the pauses between them.
    packed: bool,
}

impl Default for SpeechWindows {
    fn default() -> Self {
        Self::new(crate::audio::ms_to_samples(WINDOW_MAX_MS))
    }
}

impl SpeechWindows {
    pub fn new(max_samples: u64) -> Self {
        Self {
            windows: Vec::new(),
            in_flight: None,
            growth: Growth::UpTo(max_samples),
            prefixes: true,
            packed: false,
        }
    }

    /// Growing windows of at most [`SHORT_WINDOW_MS`], with prefixes where
    /// `model` takes them.
    pub fn short(model: &utter_engine::ModelInfo) -> Self {
        Self {
            prefixes: model.takes_prefix,
            ..Self::new(crate::audio::ms_to_samples(SHORT_WINDOW_MS))
        }
    }

    /// One window per span, no prefixes (see the module's notes).
    pub fn per_span() -> Self {
        Self {
            growth: Growth::PerSpan,
            prefixes: false,
            ..Self::default()
        }
    }

    /// Windows that fit one run of `model` (its limit, less the margin for
    /// the spans' pads), with prefixes where it takes them. A model whose
    /// runs are padded (Whisper) hears the spans without the pauses between
    /// them, as a file's windows are packed: a pause cut into a sentence
    /// heard whole made whisper tiny.en write "self-fish" for "selfish" and
    /// "He was not. An old-sposed young man?", where the file had it right.
    pub fn for_model(model: &utter_engine::ModelInfo) -> Self {
        let margin_ms = 30_000 - WINDOW_MAX_MS as i64;
        let max_ms = (model.window_ms() - margin_ms).clamp(2_000, WINDOW_MAX_MS as i64);
        Self {
            prefixes: model.takes_prefix,
            packed: matches!(model.run_cost, utter_engine::RunCost::Padded { .. }),
            ..Self::new(crate::audio::ms_to_samples(max_ms as u64))
        }
    }

    /// A span the VAD closed (or offered at a pause): it extends the current
    /// window, or starts the next one (see [`Growth`]).
    pub fn add_span(&mut self, start: u64, end: u64) {
        let extends = |w: &Window| match self.growth {
            Growth::UpTo(max_samples) => end.saturating_sub(w.start) <= max_samples,
            Growth::PerSpan => w.span_start == start,
        };
        match self.windows.last_mut() {
            Some(w) if extends(w) => {
                w.end = w.end.max(end);
                add_piece(&mut w.spans, start.max(w.start), end);
            }
            last => {
                // Padded spans can overlap: no audio is heard by two windows,
                // or its words would be written twice.
                let cut = last.map_or(start, |w| start.max(w.end));
                self.windows.push(Window {
                    span_start: start,
                    start: cut,
                    end,
                    spans: vec![(cut, end.max(cut))],
                    text: String::new(),
                    previous: String::new(),
                    done_to: cut,
                    plain: false,
                })
            }
        }
    }

    /// The run to submit now, if one is due and none is in flight. Earlier
    /// windows go first, so a window's prompt is always final.
    pub fn next_run(&mut self) -> Option<WindowRun> {
        if self.in_flight.is_some() {
            return None;
        }
        let index = self.windows.iter().position(|w| w.done_to < w.end)?;
        let w = &self.windows[index];
        let prefix = if w.plain || !self.prefixes {
            None
        } else {
            settled_words(&w.previous, &w.text, REDECODE_WORDS)
        };
        let run = WindowRun {
            window: index,
            start: w.start,
            end: w.end,
            pieces: match self.packed && w.spans.len() > 1 {
                true => w.spans.clone(),
                false => Vec::new(),
            },
            prompt: self.prompt_for(index),
            prefix,
        };
        self.in_flight = Some(run.clone());
        Some(run)
    }

    fn prompt_for(&self, index: usize) -> Option<String> {
        let before = join_dictation(self.windows[..index].iter().map(|w| w.text.as_str()));
        if before.is_empty() {
            return None;
        }
        // The last sentences, cut at a word boundary.
        let mut cut = before.len().saturating_sub(PROMPT_MAX_CHARS);
        while !before.is_char_boundary(cut) {
            cut += 1;
        }
        let tail = &before[cut..];
        let tail = match (cut > 0, tail.find(' ')) {
            (true, Some(space)) => &tail[space + 1..],
            _ => tail,
        };
        Some(tail.to_string())
    }

    /// The engine's answer to the run in flight: the text that follows its
    /// prefix, or an error (the window is then retried once without a
    /// prefix; after that its audio is given up on, and the caller reports it).
    pub fn finished(&mut self, result: Result<&str, ()>) {
        let Some(run) = self.in_flight.take() else {
            return;
        };
        let w = &mut self.windows[run.window];
        match result {
            // Nothing new heard: keep the text (a re-decode must not lose words).
            Ok(continuation) if continuation.trim().is_empty() => w.done_to = run.end,
            Ok(continuation) => {
                let settled = run.prefix.as_deref().unwrap_or("");
                w.previous = std::mem::take(&mut w.text);
                w.text = join_dictation([settled, continuation]);
                w.done_to = run.end;
            }
            Err(()) if run.prefix.is_some() => {
                w.plain = true;
                w.text.clear();
                w.previous.clear();
                w.done_to = w.start;
            }
            Err(()) => w.done_to = run.end,
        }
    }

    /// The run waiting for the engine, if any.
    pub fn in_flight(&self) -> Option<&WindowRun> {
        self.in_flight.as_ref()
    }

    /// The run in flight covers less of its window than there is now: its
    /// result would only be the prefix of one more run.
    pub fn in_flight_is_stale(&self) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|run| self.windows[run.window].end > run.end)
    }

    /// Forgets the run in flight (cancelled, or stale and cancelled at the
    /// release): its window is run again, from what was known before it.
    pub fn requeue(&mut self) {
        self.in_flight = None;
    }

    /// Every span's audio is in the text (or given up on), nothing in flight.
    pub fn is_done(&self) -> bool {
        self.in_flight.is_none() && self.windows.iter().all(|w| w.done_to >= w.end)
    }

    /// The dictation's text so far.
    pub fn text(&self) -> String {
        join_dictation(self.windows.iter().map(|w| w.text.as_str()))
    }

    pub fn windows(&self) -> usize {
        self.windows.len()
    }

    /// Where window `index`'s audio starts and ends (samples).
    pub fn bounds(&self, index: usize) -> (u64, u64) {
        let w = &self.windows[index];
        (w.start, w.end)
    }

    pub fn window_text(&self, index: usize) -> String {
        self.windows[index].text.clone()
    }

    /// Joins the text of a run over the end of window `index` (which may
    /// repeat the end of its text) to it; whether that added any words.
    pub fn append_recovered(&mut self, index: usize, recovered: &str) -> bool {
        let w = &mut self.windows[index];
        let joined = crate::coverage::join_recovered(&w.text, recovered);
        let added = joined.split_whitespace().count() > w.text.split_whitespace().count();
        w.text = joined;
        added
    }

    /// The text so far as the user may watch it while speaking: `settled`,
    /// which no later run changes (closed windows whose audio is all in
    /// the text, and the words the next run of the open window is given as
    /// its forced prefix), then `tentative`, which the next runs may still
    /// change. (Only a failed prefixed run, retried without its prefix, can
    /// still change settled words of its window.)
    pub fn live_text(&self) -> LiveText {
        let (mut settled, mut tentative) = (Vec::new(), Vec::new());
        let last = self.windows.len().saturating_sub(1);
        let mut open = false;
        for (i, w) in self.windows.iter().enumerate() {
            if open {
                tentative.push(w.text.clone());
            } else if i < last && w.done_to >= w.end {
                settled.push(w.text.clone());
            } else {
                open = true;
                let sure = match self.prefixes && !w.plain {
                    true => settled_word_count(&w.previous, &w.text, REDECODE_WORDS),
                    false => 0,
                };
                let words: Vec<&str> = w.text.split_whitespace().collect();
                settled.push(words[..sure].join(" "));
                tentative.push(words[sure..].join(" "));
            }
        }
        LiveText {
            settled: join_dictation(settled.iter().map(String::as_str)),
            tentative: join_dictation(tentative.iter().map(String::as_str)),
        }
    }
}

/// Adds the span `start..end` to `spans` (in order), merged with the last
/// one where they overlap or touch.
fn add_piece(spans: &mut Vec<(u64, u64)>, start: u64, end: u64) {
    match spans.last_mut() {
        Some(last) if start <= last.1 => last.1 = last.1.max(end),
        _ if end > start => spans.push((start, end)),
        _ => {}
    }
}

impl WindowRun {
    /// The samples of the dictation this run hears, in order.
    pub fn audio<'a>(&self, audio: &'a [f32]) -> Vec<&'a [f32]> {
        let clip = |a: u64, b: u64| {
            let b = (b as usize).min(audio.len());
            &audio[(a as usize).min(b)..b]
        };
        match self.pieces.is_empty() {
            true => vec![clip(self.start, self.end)],
            false => self.pieces.iter().map(|&(a, b)| clip(a, b)).collect(),
        }
    }

    /// A sample of this run's audio as a sample from the window's `start`
    /// (a timestamp of its text, put back where it was said).
    pub fn window_time(&self, sample: u64) -> u64 {
        let mut heard = 0;
        for &(a, b) in &self.pieces {
            if sample < heard + (b - a) {
                return a + (sample - heard) - self.start;
            }
            heard += b - a;
        }
        match self.pieces.last() {
            Some(&(_, b)) => b - self.start,
            None => sample,
        }
    }
}

/// A dictation's text while the user speaks ([`SpeechWindows::live_text`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveText {
    pub settled: String,
    pub tentative: String,
}

/// The words of `text` that `previous` agrees on, less the last `redecode`
/// words of `text`, and cut after the last full sentence among them if there
/// is one: the run then decodes the sentence in progress whole, with all of
/// its audio, rather than continuing it from a settled half. `None` when
/// nothing is left.
fn settled_words(previous: &str, text: &str, redecode: usize) -> Option<String> {
    let keep = settled_word_count(previous, text, redecode);
    (keep > 0).then(|| {
        text.split_whitespace()
            .take(keep)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// How many words [`settled_words`] keeps.
fn settled_word_count(previous: &str, text: &str, redecode: usize) -> usize {
    let words: Vec<&str> = text.split_whitespace().collect();
    let agreed = words
        .iter()
        .zip(previous.split_whitespace())
        .take_while(|(now, before)| *now == before)
        .count();
    let mut keep = words.len().saturating_sub(redecode).min(agreed);
    if let Some(last_full_stop) = words[..keep].iter().rposition(|w| ends_sentence(w)) {
        keep = last_full_stop + 1;
    }
    keep
}

fn ends_sentence(word: &str) -> bool {
    const ABBREVIATIONS: [&str; 8] = ["Mr.", "Mrs.", "Ms.", "Dr.", "St.", "vs.", "e.g.", "i.e."];
    let word = word.trim_end_matches(['"', '\'', ')']);
    word.ends_with(['.', '?', '!']) && !ABBREVIATIONS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 16_000; // samples per second

    #[test]
    fn the_first_run_has_no_context_and_later_runs_continue_the_window() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 3 * S);
        let first = w.next_run().unwrap();
        assert_eq!((first.start, first.end), (0, 3 * S));
        assert_eq!((first.prompt, first.prefix), (None, None));
        w.finished(Ok("The man walked into the big room."));
        w.add_span(4 * S, 6 * S);
        let second = w.next_run().unwrap();
        assert_eq!(
            (second.start, second.end),
            (0, 6 * S),
            "the whole window again"
        );
        assert_eq!(second.prefix, None, "every word was found only once");
        w.finished(Ok("The man walked into the big room. He sat down."));
        assert!(w.is_done());
        w.add_span(7 * S, 9 * S);
        let third = w.next_run().unwrap();
        assert_eq!(
            third.prefix.as_deref(),
            Some("The man walked into the big"),
            "the words both runs found, less the last four"
        );
        w.finished(Ok("room. He sat down. Then he slept."));
        assert_eq!(
            w.text(),
            "The man walked into the big room. He sat down. Then he slept."
        );
    }

    #[test]
    fn a_packed_window_is_heard_without_its_pauses_and_its_times_map_back() {
        let mut w = SpeechWindows {
            packed: true,
            ..SpeechWindows::default()
        };
        w.add_span(0, 3 * S);
        let first = w.next_run().unwrap();
        assert!(first.pieces.is_empty(), "one span: the audio as it is");
        w.finished(Ok("He was not"));
        // A pause of two seconds mid-sentence, then the rest (its pad
        // overlapping a later span's is merged).
        w.add_span(5 * S, 7 * S);
        w.add_span(6 * S + S / 2, 8 * S);
        let run = w.next_run().unwrap();
        assert_eq!((run.start, run.end), (0, 8 * S));
        assert_eq!(run.pieces, vec![(0, 3 * S), (5 * S, 8 * S)]);
        let audio: Vec<f32> = (0..9 * S).map(|i| i as f32).collect();
        let heard = run.audio(&audio).concat();
        assert_eq!(heard.len() as u64, 6 * S, "the pause is left out");
        assert_eq!(
            heard[3 * S as usize],
            (5 * S) as f32,
            "the second piece follows the first"
        );
        // A text ending 4 s into what was heard ended 6 s into the window.
        assert_eq!(run.window_time(4 * S), 6 * S);
        assert_eq!(run.window_time(2 * S), 2 * S);
        assert_eq!(
            run.window_time(7 * S),
            8 * S,
            "past the end: the window's end"
        );
    }

    #[test]
    fn an_unpacked_window_is_heard_whole() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 3 * S);
        w.add_span(5 * S, 8 * S);
        let run = w.next_run().unwrap();
        assert!(run.pieces.is_empty());
        let audio = vec![0.0; 9 * S as usize];
        assert_eq!(run.audio(&audio).concat().len() as u64, 8 * S);
        assert_eq!(run.window_time(4 * S), 4 * S);
    }

    #[test]
    fn live_text_settles_what_the_next_run_takes_as_its_prefix() {
        let mut w = SpeechWindows::default();
        assert_eq!(w.live_text(), LiveText::default());
        w.add_span(0, 3 * S);
        let _ = w.next_run();
        w.finished(Ok("The man walked into the big room."));
        let live = w.live_text();
        assert_eq!(live.settled, "", "one run: nothing agreed yet");
        assert_eq!(live.tentative, "The man walked into the big room.");
        w.add_span(4 * S, 6 * S);
        let _ = w.next_run();
        w.finished(Ok("The man walked into the big room. He sat down."));
        let live = w.live_text();
        assert_eq!(live.settled, "The man walked into the big");
        assert_eq!(live.tentative, "room. He sat down.");
        w.add_span(7 * S, 9 * S);
        let run = w.next_run().unwrap();
        assert_eq!(run.prefix.as_deref(), Some(live.settled.as_str()));
    }

    #[test]
    fn live_text_of_one_window_a_span_is_settled_up_to_the_open_window() {
        let mut w = SpeechWindows::per_span();
        w.add_span(0, 2 * S);
        let _ = w.next_run();
        w.finished(Ok("Good morning."));
        w.add_span(3 * S, 5 * S);
        let _ = w.next_run();
        w.finished(Ok("How are you"));
        let live = w.live_text();
        assert_eq!(live.settled, "Good morning.", "a closed window is final");
        assert_eq!(
            live.tentative, "How are you",
            "no prefix: the open window may change"
        );
    }

    #[test]
    fn words_found_by_one_run_only_are_decoded_again() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 3 * S);
        let _ = w.next_run();
        w.finished(Ok("He had leisure to consider how."));
        w.add_span(4 * S, 8 * S);
        let _ = w.next_run();
        // Heard up to a pause mid-sentence: a wrong word and a full stop.
        w.finished(Ok(
            "He had leisure to consider how much their might. Be prudently in his",
        ));
        w.add_span(9 * S, 12 * S);
        let run = w.next_run().unwrap();
        assert_eq!(
            run.prefix.as_deref(),
            Some("He had leisure to consider"),
            "'how.' and 'how' differ; 'much their might.' was found once"
        );
        w.finished(Ok("how much there might be prudently in his power."));
        assert_eq!(
            w.text(),
            "He had leisure to consider how much there might be prudently in his power."
        );
    }

    #[test]
    fn the_settled_words_end_at_the_last_full_sentence() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 2 * S);
        let _ = w.next_run();
        w.finished(Ok("And Mr. Dashwood was not. An old"));
        w.add_span(3 * S, 6 * S);
        let _ = w.next_run();
        w.finished(Ok(
            "And Mr. Dashwood was not. An old sposed young man. Unless",
        ));
        w.add_span(7 * S, 9 * S);
        let run = w.next_run().unwrap();
        assert_eq!(
            run.prefix.as_deref(),
            Some("And Mr. Dashwood was not."),
            "the sentence in progress is decoded whole; 'Mr.' ends none"
        );
    }

    #[test]
    fn a_stale_run_at_the_release_is_replaced_by_one_over_everything() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 4 * S);
        let _ = w.next_run();
        w.finished(Ok("The man walked into the big room."));
        w.add_span(5 * S, 8 * S);
        let stale = w.next_run().unwrap();
        assert!(!w.in_flight_is_stale());
        w.add_span(9 * S, 10 * S); // the tail, closed at the release
        assert!(w.in_flight_is_stale());
        w.requeue();
        let last = w.next_run().unwrap();
        assert_eq!(
            (last.end, last.prefix),
            (10 * S, stale.prefix),
            "from what was known before the stale run"
        );
        w.finished(Ok(
            "The man walked into the big room. He sat down. Then he slept.",
        ));
        assert!(w.is_done());
        assert_eq!(
            w.text(),
            "The man walked into the big room. He sat down. Then he slept."
        );
    }

    #[test]
    fn spans_closed_during_a_run_are_coalesced_into_one_run() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 2 * S);
        let _first = w.next_run().unwrap();
        w.add_span(3 * S, 4 * S);
        w.add_span(5 * S, 6 * S);
        assert_eq!(w.next_run(), None, "one run at a time");
        assert!(!w.is_done());
        w.finished(Ok("one"));
        let next = w.next_run().unwrap();
        assert_eq!(next.end, 6 * S, "only the newest window is run");
        assert_eq!(next.prefix, None, "nothing settled yet");
        w.finished(Ok("one two three"));
        assert_eq!(w.next_run(), None);
        assert!(w.is_done());
        assert_eq!(w.text(), "one two three");
    }

    #[test]
    fn a_full_window_is_committed_and_its_text_prompts_the_next() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 20 * S);
        w.add_span(21 * S, 27 * S);
        w.add_span(28 * S, 31 * S); // 31 s from the window start: a new window
        assert_eq!(w.windows(), 2);
        let first = w.next_run().unwrap();
        assert_eq!((first.window, first.end), (0, 27 * S));
        w.finished(Ok("First window text."));
        let second = w.next_run().unwrap();
        assert_eq!(
            (second.window, second.start, second.end),
            (1, 28 * S, 31 * S)
        );
        assert_eq!(second.prompt.as_deref(), Some("First window text."));
        assert_eq!(second.prefix, None);
        w.finished(Ok("Second."));
        assert_eq!(w.text(), "First window text. Second.");
    }

    #[test]
    fn the_next_window_starts_where_the_last_one_ended() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 27 * S);
        w.add_span(26 * S + S / 2, 30 * S); // its pre-pad overlaps the last span
        let _ = w.next_run();
        w.finished(Ok("first"));
        assert_eq!(w.next_run().unwrap().start, 27 * S);
    }

    #[test]
    fn an_earlier_window_is_finished_before_the_next_is_run() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 10 * S);
        let _ = w.next_run().unwrap();
        w.add_span(11 * S, 20 * S);
        w.add_span(21 * S, 35 * S); // the next window
        w.finished(Ok("a"));
        let run = w.next_run().unwrap();
        assert_eq!(
            (run.window, run.end),
            (0, 20 * S),
            "the first window's last span first"
        );
        w.finished(Ok("a b"));
        let run = w.next_run().unwrap();
        assert_eq!(run.window, 1);
        assert_eq!(run.prompt.as_deref(), Some("a b"));
    }

    #[test]
    fn the_prompt_is_the_end_of_the_committed_text_at_a_word_boundary() {
        let mut w = SpeechWindows::default();
        let long = "word ".repeat(300);
        w.add_span(0, 27 * S);
        let _ = w.next_run();
        w.finished(Ok(&long));
        w.add_span(29 * S, 30 * S);
        let prompt = w.next_run().unwrap().prompt.unwrap();
        assert!(prompt.len() <= PROMPT_MAX_CHARS, "{}", prompt.len());
        assert!(prompt.starts_with("word"), "{prompt}");
    }

    #[test]
    fn a_failed_prefix_run_is_retried_once_without_a_prefix() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 2 * S);
        let _ = w.next_run();
        w.finished(Ok("hello there my good friend"));
        w.add_span(3 * S, 4 * S);
        let _ = w.next_run();
        w.finished(Ok("hello there my good friend how are you"));
        w.add_span(5 * S, 6 * S);
        let with_prefix = w.next_run().unwrap();
        assert_eq!(with_prefix.prefix.as_deref(), Some("hello there my good"));
        w.finished(Err(()));
        let plain = w.next_run().unwrap();
        assert_eq!((plain.start, plain.end, plain.prefix), (0, 6 * S, None));
        w.finished(Err(()));
        assert!(w.is_done(), "given up on after the retry");
        assert_eq!(w.next_run(), None);
    }

    #[test]
    fn per_span_runs_each_span_alone_and_a_grown_span_again() {
        let mut w = SpeechWindows::per_span();
        w.add_span(0, 3 * S); // offered at a pause
        let first = w.next_run().unwrap();
        assert_eq!((first.start, first.end, first.prefix), (0, 3 * S, None));
        w.finished(Ok("The man walked"));
        w.add_span(0, 5 * S); // the user went on: the same span, longer
        let again = w.next_run().unwrap();
        assert_eq!(
            (again.window, again.start, again.end, again.prefix),
            (0, 0, 5 * S, None),
            "the whole span again, decoded whole"
        );
        w.finished(Ok("The man walked into the room."));
        w.add_span(5 * S - S / 4, 8 * S); // the next span; its pad reaches into the last
        let next = w.next_run().unwrap();
        assert_eq!((next.window, next.start, next.end), (1, 5 * S, 8 * S));
        assert_eq!(
            next.prompt.as_deref(),
            Some("The man walked into the room."),
            "the text before it, for a model that takes a prompt"
        );
        w.finished(Ok("He sat down."));
        w.add_span(5 * S - S / 4, 9 * S); // that span grew: its window, though its start was cut
        assert_eq!(w.next_run().map(|r| (r.window, r.start)), Some((1, 5 * S)));
        w.finished(Ok("He sat down at last."));
        assert!(w.is_done());
        assert_eq!(w.windows(), 2);
        assert_eq!(
            w.text(),
            "The man walked into the room. He sat down at last."
        );
    }

    #[test]
    fn short_windows_hold_a_few_seconds_each() {
        let mut w = SpeechWindows::new(crate::audio::ms_to_samples(SHORT_WINDOW_MS));
        for k in 0..3 {
            w.add_span(k * 4 * S, k * 4 * S + 3 * S); // 3 s of speech, 1 s pauses
        }
        assert_eq!(
            w.windows(),
            2,
            "0–7 s fit in 8 s; the span ending at 11 s starts the next"
        );
        let first = w.next_run().unwrap();
        assert_eq!((first.start, first.end), (0, 7 * S));
    }

    #[test]
    fn per_span_windows_never_merge_spans_however_short() {
        let mut w = SpeechWindows::per_span();
        for k in 0..4 {
            w.add_span(k * 2 * S, k * 2 * S + S);
        }
        assert_eq!(w.windows(), 4, "growing windows would hold all four in one");
    }

    #[test]
    fn an_empty_result_keeps_the_window_text_and_moves_on() {
        let mut w = SpeechWindows::default();
        w.add_span(0, 2 * S);
        let _ = w.next_run();
        w.finished(Ok("hello"));
        w.add_span(3 * S, 4 * S);
        let _ = w.next_run();
        w.finished(Ok(""));
        assert!(w.is_done());
        assert_eq!(w.text(), "hello");
    }
}
