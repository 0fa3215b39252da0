//! Packing speech spans into engine windows. Whisper pads every call to 30 s,
//! so speech is concatenated (silence between spans left out) until a window
//! is full; a model whose cost follows its input gets one window per span
//! instead (packing would only make its runs longer). Each window remembers
//! where its pieces came from so timestamps can be mapped back to file time.

use crate::audio::{ms_to_samples, samples_to_ms};

/// A pause in the speech this long starts a new cue (untimed models).
pub const CUE_GAP_MS: i64 = 1_000;
/// The longest cue, as subtitle conventions have it.
pub const CUE_MAX_MS: i64 = 7_000;
/// A cue this long ends at the next sentence's end.
pub const CUE_SENTENCE_MS: i64 = 2_000;
/// The shortest cue worth its own line, unless the speech is shorter.
pub const CUE_MIN_MS: i64 = 700;
/// One contiguous run of source audio inside a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// First sample in the source stream.
    pub source_start: u64,
    /// First sample inside the window.
    pub window_start: u64,
    pub len: u64,
}

/// Audio for one engine call plus its map back to the source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub pieces: Vec<Piece>,
    pub pcm: Vec<f32>,
}

impl Window {
    pub fn len(&self) -> u64 {
        self.pcm.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.pcm.is_empty()
    }

    /// Maps a segment `[t0, t1)` in window time (ms) to source time (ms).
    ///
    /// Engine timestamps are coarse: a segment may begin in the padding at
    /// the tail of the previous piece. So the segment is attributed to the
    /// pieces it substantially overlaps (≥ 300 ms, or half the segment), and
    /// its ends are clamped into those pieces.
    pub fn map_span_ms(&self, t0_ms: i64, t1_ms: i64) -> (i64, i64) {
        let to_sample = |ms: i64| ms_to_samples(ms.max(0) as u64).min(self.len());
        let (a, b) = (to_sample(t0_ms), to_sample(t1_ms.max(t0_ms)));
        let overlap = |p: &Piece| {
            b.min(p.window_start + p.len)
                .saturating_sub(a.max(p.window_start))
        };
        let significant = |p: &&Piece| {
            let o = overlap(p);
            o > 0 && (o >= 4_800 || o * 2 >= (b - a).max(1))
        };
        let best = self.pieces.iter().max_by_key(|p| overlap(p));
        let first = self.pieces.iter().find(significant).or(best);
        let last = self.pieces.iter().rev().find(significant).or(best);
        let (Some(first), Some(last)) = (first, last) else {
            return (t0_ms, t1_ms);
        };
        let source = |p: &Piece, sample: u64| {
            let offset = sample.clamp(p.window_start, p.window_start + p.len) - p.window_start;
            samples_to_ms(p.source_start + offset) as i64
        };
        (source(first, a), source(last, b))
    }

    /// The window cut in two near its middle (at a piece boundary when one
    /// is close), for a run the model cut short; `None` when it is too short
    /// to be worth splitting (under 2 s).
    pub fn split(&self) -> Option<(Window, Window)> {
        let len = self.len();
        if len < 32_000 {
            return None;
        }
        let middle = len / 2;
        let near_boundary = self
            .pieces
            .iter()
            .map(|p| p.window_start)
            .filter(|b| *b > 0 && b.abs_diff(middle) <= len / 6)
            .min_by_key(|b| b.abs_diff(middle));
        let at = near_boundary.unwrap_or(middle);
        let mut first = Window::default();
        let mut second = Window::default();
        for p in &self.pieces {
            let end = p.window_start + p.len;
            if end <= at {
                first.push_piece(
                    p.source_start,
                    &self.pcm[p.window_start as usize..end as usize],
                );
            } else if p.window_start >= at {
                second.push_piece(
                    p.source_start,
                    &self.pcm[p.window_start as usize..end as usize],
                );
            } else {
                let cut = at - p.window_start;
                first.push_piece(
                    p.source_start,
                    &self.pcm[p.window_start as usize..at as usize],
                );
                second.push_piece(p.source_start + cut, &self.pcm[at as usize..end as usize]);
            }
        }
        Some((first, second))
    }

    /// The part of the window from sample `at` (window time) on, mapped to
    /// the same source: for a run over speech a run's text left out.
    pub fn tail_from(&self, at: u64) -> Window {
        let mut tail = Window::default();
        for p in &self.pieces {
            let end = p.window_start + p.len;
            if end <= at {
                continue;
            }
            let from = at.max(p.window_start);
            tail.push_piece(
                p.source_start + (from - p.window_start),
                &self.pcm[from as usize..end as usize],
            );
        }
        tail
    }

    /// The window's speech: each piece as (start, end) in window samples.
    pub fn piece_spans(&self) -> Vec<(u64, u64)> {
        self.pieces
            .iter()
            .map(|p| (p.window_start, p.window_start + p.len))
            .collect()
    }

    fn push_piece(&mut self, source_start: u64, pcm: &[f32]) {
        self.pieces.push(Piece {
            source_start,
            window_start: self.pcm.len() as u64,
            len: pcm.len() as u64,
        });
        self.pcm.extend_from_slice(pcm);
    }

    /// Source time span covered (ms).
    pub fn source_span_ms(&self) -> (i64, i64) {
        match (self.pieces.first(), self.pieces.last()) {
            (Some(a), Some(b)) => (
                samples_to_ms(a.source_start) as i64,
                samples_to_ms(b.source_start + b.len) as i64,
            ),
            _ => (0, 0),
        }
    }

    /// Cues for the text of a model without timestamps: its words spread
    /// over the window's speech by their length, cut where the speech
    /// pauses for [`CUE_GAP_MS`] or more in the source, and before a cue
    /// passes [`CUE_MAX_MS`] or two subtitle lines (at a sentence's end once it is
    /// [`CUE_SENTENCE_MS`] long); a last cue under [`CUE_MIN_MS`] joins the
    /// one before when both fit. Each cue spans the speech it carries, in
    /// source time.
    pub fn untimed_cues(&self, text: &str) -> Vec<(i64, i64, String)> {
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() || self.is_empty() {
            return Vec::new();
        }
        // Window sample where each word starts, by its share of the letters.
        let weight = |w: &str| w.chars().count() as u64 + 1;
        let total: u64 = words.iter().map(|w| weight(w)).sum();
        let mut starts = Vec::with_capacity(words.len() + 1);
        let mut so_far = 0;
        for w in &words {
            starts.push(self.len() * so_far / total);
            so_far += weight(w);
        }
        starts.push(self.len());
        // A word across a long pause goes to the side that holds more of it:
        // a cue is then cut exactly where the speech stopped.
        for (before, piece) in self.pieces.iter().zip(&self.pieces[1..]) {
            let gap = piece.source_start as i64 - (before.source_start + before.len) as i64;
            if (samples_to_ms(gap.max(0) as u64) as i64) < CUE_GAP_MS {
                continue;
            }
            let at = piece.window_start;
            if let Some(k) = (0..words.len()).find(|&k| starts[k] < at && at < starts[k + 1]) {
                if at - starts[k] >= starts[k + 1] - at {
                    starts[k + 1] = at;
                } else {
                    starts[k] = at;
                }
            }
        }
        // Source time of a window sample as a start, and as an exclusive end
        // (at a piece boundary: the next piece's start, this piece's end).
        let piece_at = |sample: u64| {
            self.pieces
                .iter()
                .rev()
                .find(|p| p.window_start <= sample)
                .unwrap_or(&self.pieces[0])
        };
        let start_ms = |sample: u64| {
            let p = piece_at(sample);
            samples_to_ms(p.source_start + (sample - p.window_start).min(p.len)) as i64
        };
        let end_ms = |sample: u64| {
            let p = piece_at(sample.saturating_sub(1));
            samples_to_ms(p.source_start + (sample - p.window_start).min(p.len)) as i64
        };
        // The speech paused before word `i` (a gap in the source there).
        let pause_before = |i: usize| start_ms(starts[i]) - end_ms(starts[i]) >= CUE_GAP_MS;
        let mut cues: Vec<(usize, usize)> = Vec::new(); // word ranges
        let mut first = 0;
        for i in 1..words.len() {
            let span = end_ms(starts[i]) - start_ms(starts[first]);
            let sentence_end = words[i - 1].ends_with(['.', '?', '!']);
            if pause_before(i)
                || !crate::subtitles::fits_a_cue(&words[first..=i])
                || end_ms(starts[i + 1]) - start_ms(starts[first]) > CUE_MAX_MS
                || (sentence_end && span >= CUE_SENTENCE_MS)
            {
                cues.push((first, i));
                first = i;
            }
        }
        cues.push((first, words.len()));
        let ms = |(a, b): (usize, usize)| end_ms(starts[b]) - start_ms(starts[a]);
        // A last cue too short to read joins the one before; where the two
        // would be too long, they share the words at the middle instead.
        if cues.len() >= 2 {
            let last = cues[cues.len() - 1];
            let before = cues[cues.len() - 2];
            if ms(last) < CUE_MIN_MS && !pause_before(last.0) {
                cues.truncate(cues.len() - 2);
                if ms((before.0, last.1)) <= CUE_MAX_MS
                    && crate::subtitles::fits_a_cue(&words[before.0..last.1])
                {
                    cues.push((before.0, last.1));
                } else {
                    let middle = (start_ms(starts[before.0]) + end_ms(starts[last.1])) / 2;
                    let cut = (before.0 + 1..last.1)
                        .min_by_key(|&k| (start_ms(starts[k]) - middle).abs())
                        .unwrap_or(last.0);
                    cues.push((before.0, cut));
                    cues.push((cut, last.1));
                }
            }
        }
        cues.into_iter()
            .map(|(a, b)| {
                let start = start_ms(starts[a]);
                (
                    start,
                    end_ms(starts[b]).max(start + 1),
                    words[a..b].join(" "),
                )
            })
            .collect()
    }
}

/// How spans share windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Concatenate spans until a window is full (a model that pads its input).
    Fill,
    /// One span per window, split only at the limit (a model whose cost
    /// follows its input); overlapping padded spans still merge.
    OnePerSpan,
}

/// Groups spans into windows of at most `max_samples`.
#[derive(Debug)]
pub struct WindowPacker {
    max_samples: u64,
    packing: Packing,
    current: Vec<(u64, u64)>,
    current_len: u64,
}

impl WindowPacker {
    pub fn new(max_samples: u64, packing: Packing) -> Self {
        Self {
            max_samples,
            packing,
            current: Vec::new(),
            current_len: 0,
        }
    }

    /// The spans of the open window, in order. Only the last can still
    /// grow (a padded span that overlaps it is merged into it).
    pub fn open_spans(&self) -> &[(u64, u64)] {
        &self.current
    }

    /// Adds a span (`[start, end)` in source samples). Returns the spans of
    /// each window this span completed (none while the open window still
    /// has room; more than one when an over-long span fills whole windows).
    pub fn push(&mut self, start: u64, end: u64) -> Vec<Vec<(u64, u64)>> {
        // Padded spans may overlap the previous one: merge them.
        let mut start = start;
        if let Some(last) = self.current.last_mut() {
            if start <= last.1 {
                let extra = end.saturating_sub(last.1);
                if self.current_len + extra <= self.max_samples {
                    last.1 = last.1.max(end);
                    self.current_len += extra;
                    return Vec::new();
                }
                start = last.1;
            }
        }
        let mut done = Vec::new();
        let full = match self.packing {
            Packing::Fill => self.current_len + (end - start) > self.max_samples,
            Packing::OnePerSpan => true,
        };
        if full {
            done.extend(self.take());
        }
        // A span longer than a window is split (the segmenter normally prevents it).
        let mut s = start;
        while end - s > self.max_samples {
            done.extend(self.take());
            done.push(vec![(s, s + self.max_samples)]);
            s += self.max_samples;
        }
        self.current.push((s, end));
        self.current_len += end - s;
        done
    }

    /// Closes the open window.
    pub fn take(&mut self) -> Option<Vec<(u64, u64)>> {
        self.current_len = 0;
        let spans = std::mem::take(&mut self.current);
        (!spans.is_empty()).then_some(spans)
    }
}

/// Builds a window from spans, reading audio through `sample_at(start, end)`.
pub fn assemble(spans: &[(u64, u64)], mut read: impl FnMut(u64, u64) -> Vec<f32>) -> Window {
    let mut w = Window::default();
    for &(start, end) in spans {
        let pcm = read(start, end);
        w.pieces.push(Piece {
            source_start: start,
            window_start: w.pcm.len() as u64,
            len: pcm.len() as u64,
        });
        w.pcm.extend(pcm);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_fill_windows_without_exceeding_the_limit() {
        let mut p = WindowPacker::new(100, Packing::Fill);
        assert!(p.push(0, 40).is_empty());
        assert!(p.push(50, 90).is_empty());
        assert_eq!(p.push(200, 230), vec![vec![(0, 40), (50, 90)]]);
        assert_eq!(p.take(), Some(vec![(200, 230)]));
        assert_eq!(p.take(), None);
    }

    #[test]
    fn overlapping_padded_spans_merge() {
        let mut p = WindowPacker::new(100, Packing::Fill);
        p.push(0, 40);
        p.push(30, 60);
        assert_eq!(p.take(), Some(vec![(0, 60)]));
    }

    #[test]
    fn over_long_span_is_split() {
        let mut p = WindowPacker::new(100, Packing::Fill);
        p.push(0, 30);
        let done = p.push(40, 290);
        assert_eq!(done, vec![vec![(0, 30)], vec![(40, 140)], vec![(140, 240)]]);
        assert_eq!(p.take(), Some(vec![(240, 290)]), "no window over the limit");
    }

    #[test]
    fn one_span_per_window_keeps_spans_apart_but_merges_overlaps() {
        let mut p = WindowPacker::new(100, Packing::OnePerSpan);
        assert!(p.push(0, 40).is_empty());
        assert!(p.push(30, 60).is_empty(), "overlapping pads merge");
        assert_eq!(p.push(70, 90), vec![vec![(0, 60)]]);
        assert_eq!(p.push(95, 250), vec![vec![(70, 90)], vec![(95, 195)]]);
        assert_eq!(p.take(), Some(vec![(195, 250)]));
    }

    #[test]
    fn a_cut_short_window_splits_in_two_keeping_source_times() {
        // 3 s at 1 s, then 1 s at 10 s: the split falls at the middle (2 s
        // into the window, inside the first piece), with every sample kept.
        let w = assemble(&[(16_000, 64_000), (160_000, 176_000)], |a, b| {
            (a..b).map(|s| s as f32).collect()
        });
        let (first, second) = w.split().unwrap();
        assert_eq!(first.len() + second.len(), w.len());
        assert_eq!(first.source_span_ms(), (1000, 3000));
        assert_eq!(second.source_span_ms(), (3000, 11_000));
        assert_eq!(
            second.pcm[0], 48_000.0,
            "the second half starts where the first ended"
        );
        assert_eq!(second.map_span_ms(1000, 1500), (10_000, 10_500));
        assert!(assemble(&[(0, 16_000)], |a, b| vec![0.0; (b - a) as usize])
            .split()
            .is_none());
    }

    #[test]
    fn window_times_map_back_to_source_time() {
        // 1 s of speech at 2 s, then 1 s at 10 s.
        let w = assemble(&[(32_000, 48_000), (160_000, 176_000)], |a, b| {
            vec![0.0; (b - a) as usize]
        });
        assert_eq!(w.map_span_ms(100, 900), (2100, 2900));
        assert_eq!(
            w.map_span_ms(0, 1000),
            (2000, 3000),
            "an end on the boundary stays in the first piece"
        );
        assert_eq!(w.map_span_ms(1000, 1500), (10_000, 10_500));
        // A segment that starts in the last 40 ms of piece 1 belongs to piece 2.
        assert_eq!(w.map_span_ms(960, 2000), (10_000, 11_000));
        // A segment spanning both pieces keeps both ends.
        assert_eq!(w.map_span_ms(200, 1800), (2200, 10_800));
        assert_eq!(
            w.map_span_ms(1500, 9999),
            (10_500, 11_000),
            "clamped to the window"
        );
        assert_eq!(w.source_span_ms(), (2000, 11_000));
    }

    /// A model without timestamps: its text spread over the window's
    /// speech, cut at a long pause and before 7 s, no cue shorter than its
    /// words or outside the speech.
    #[test]
    fn untimed_text_gets_cues_that_span_its_speech() {
        let mut window = Window::default();
        // 4 s of speech at 1 s, then (after a 3 s pause) 10 s at 8 s.
        window.push_piece(16_000, &vec![0.1; 64_000]);
        window.push_piece(128_000, &vec![0.1; 160_000]);
        let text = "One two three four. Five six seven eight nine ten eleven twelve. \
                    Thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty.";
        let cues = window.untimed_cues(text);
        assert!(cues.len() >= 3, "{cues:?}");
        let joined: Vec<&str> = cues.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(
            joined.join(" ").split_whitespace().count(),
            text.split_whitespace().count()
        );
        for (a, b, words) in &cues {
            assert!(b - a >= CUE_MIN_MS.min(500), "{a}–{b} {words}");
            assert!(b - a <= CUE_MAX_MS, "{a}–{b} {words}");
            let inside = |t: &i64| (1_000..=5_000).contains(t) || (8_000..=18_000).contains(t);
            assert!(
                inside(a) && inside(&(b - 1)),
                "{a}–{b} outside the speech: {words}"
            );
        }
        // No cue crosses the 3 s pause.
        assert!(
            cues.iter().all(|(a, b, _)| !(*a < 5_000 && *b > 8_000)),
            "{cues:?}"
        );
        assert!(cues.windows(2).all(|w| w[0].1 <= w[1].0), "{cues:?}");
        assert!(window.untimed_cues("  ").is_empty());
    }
}
