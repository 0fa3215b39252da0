//! Online speech segmentation from per-frame speech probabilities (the rules
//! of Silero's `get_speech_timestamps`, made incremental): speech starts at a
//! frame above `threshold`, ends after `min_silence_ms` below
//! `threshold - 0.15`, is padded on both sides, dropped when shorter than
//! `min_speech_ms`, and cut at `max_segment_ms` (at the latest pause if any).

/// Samples per VAD frame at 16 kHz (32 ms).
pub const FRAME_SAMPLES: u64 = 512;
const FRAME_MS: u64 = 32;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmenterConfig {
    pub threshold: f32,
    pub min_silence_ms: u32,
    pub min_speech_ms: u32,
    /// Audio kept before and after each span, so no syllable is clipped.
    pub pad_ms: u32,
    pub max_segment_ms: u32,
    /// Once a span is this long, a short pause (`short_silence_ms`) ends it,
    /// so long monologues are cut between words rather than at the hard maximum.
    pub soft_max_ms: u32,
    pub short_silence_ms: u32,
}

impl SegmenterConfig {
    /// For files: long pauses split, generous padding, spans fit a 30 s window.
    pub fn for_files() -> Self {
        Self {
            threshold: 0.5,
            min_silence_ms: 250,
            min_speech_ms: 250,
            pad_ms: 200,
            max_segment_ms: 29_000,
            soft_max_ms: 20_000,
            short_silence_ms: 96,
        }
    }
}

/// Speech in absolute samples of the stream: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeechSpan {
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, Copy)]
enum State {
    Idle,
    Speech {
        start: u64,
        silence_since: Option<u64>,
    },
}

#[derive(Debug, Clone)]
pub struct Segmenter {
    config: SegmenterConfig,
    /// Index of the next frame to be pushed.
    frame: u64,
    state: State,
    /// The latest frame heard as speech.
    last_speech_frame: Option<u64>,
}

fn frames(ms: u32) -> u64 {
    (ms as u64).div_ceil(FRAME_MS)
}

impl Segmenter {
    pub fn new(config: SegmenterConfig) -> Self {
        Self {
            config,
            frame: 0,
            state: State::Idle,
            last_speech_frame: None,
        }
    }

    /// The sample where the latest speech stopped, once it has: `None`
    /// while speech is heard and before any was. A hands-free stop counts
    /// its silence from here.
    pub fn quiet_since(&self) -> Option<u64> {
        if self.hearing_speech() {
            return None;
        }
        self.last_speech_frame.map(|f| (f + 1) * FRAME_SAMPLES)
    }

    /// First sample (padding included) of the span being built, if any:
    /// audio before it will never be part of a span.
    pub fn open_start(&self) -> Option<u64> {
        match self.state {
            State::Speech { start, .. } => Some(self.padded_start(start)),
            State::Idle => None,
        }
    }

    pub fn in_speech(&self) -> bool {
        matches!(self.state, State::Speech { .. })
    }

    /// True while the latest frames are speech (not a pause inside a span).
    pub fn hearing_speech(&self) -> bool {
        matches!(
            self.state,
            State::Speech {
                silence_since: None,
                ..
            }
        )
    }

    /// The span as it would close now, once the pause in progress has lasted
    /// as long as the padding: its audio is all recorded, so the engine can
    /// start on it before the pause is long enough to end the span (if the
    /// user goes on speaking, the span simply grows). `None` while speech is
    /// heard, outside speech, or when the span would be dropped as too short.
    pub fn paused_span(&self) -> Option<SpeechSpan> {
        match self.state {
            State::Speech {
                start,
                silence_since: Some(since),
            } if self.frame - since >= frames(self.config.pad_ms) => self.close(start, since),
            _ => None,
        }
    }

    fn padded_start(&self, start_frame: u64) -> u64 {
        (start_frame * FRAME_SAMPLES).saturating_sub(self.pad_samples())
    }

    fn pad_samples(&self) -> u64 {
        self.config.pad_ms as u64 * u64::from(crate::ENGINE_RATE) / 1000
    }

    fn close(&self, start: u64, end: u64) -> Option<SpeechSpan> {
        if (end - start) * FRAME_MS < self.config.min_speech_ms as u64 {
            return None;
        }
        Some(SpeechSpan {
            start: self.padded_start(start),
            end: end * FRAME_SAMPLES + self.pad_samples(),
        })
    }

    /// Consumes the probability of the next frame; returns a span when one ends.
    pub fn push(&mut self, prob: f32) -> Option<SpeechSpan> {
        let f = self.frame;
        self.frame += 1;
        let cfg = self.config;
        let neg_threshold = (cfg.threshold - 0.15).max(0.01);
        if prob >= cfg.threshold {
            self.last_speech_frame = Some(f);
        }
        match self.state {
            State::Idle => {
                if prob >= cfg.threshold {
                    self.state = State::Speech {
                        start: f,
                        silence_since: None,
                    };
                }
                None
            }
            State::Speech {
                start,
                mut silence_since,
            } => {
                if prob >= cfg.threshold {
                    silence_since = None;
                } else if prob < neg_threshold && silence_since.is_none() {
                    silence_since = Some(f);
                }
                if let Some(since) = silence_since {
                    let long_enough = since - start >= frames(cfg.soft_max_ms);
                    let needed = if long_enough {
                        cfg.short_silence_ms
                    } else {
                        cfg.min_silence_ms
                    };
                    if (f + 1 - since) >= frames(needed) {
                        self.state = State::Idle;
                        return self.close(start, since);
                    }
                }
                // Too long: cut at the current pause if there is one, else here.
                // The padding on both ends must fit in max_segment_ms too.
                let max_frames = frames(cfg.max_segment_ms)
                    .saturating_sub(2 * frames(cfg.pad_ms))
                    .max(1);
                if f + 1 - start >= max_frames {
                    let cut = silence_since.unwrap_or(f + 1);
                    self.state = if silence_since.is_some() {
                        State::Idle
                    } else {
                        State::Speech {
                            start: cut,
                            silence_since: None,
                        }
                    };
                    return self.close(start, cut);
                }
                self.state = State::Speech {
                    start,
                    silence_since,
                };
                None
            }
        }
    }

    /// Consumes the probabilities of the next frames; returns the spans they end.
    pub fn push_all(&mut self, probs: impl IntoIterator<Item = f32>) -> Vec<SpeechSpan> {
        probs.into_iter().filter_map(|p| self.push(p)).collect()
    }

    /// Ends the stream, closing the span in progress.
    pub fn finish(&mut self) -> Option<SpeechSpan> {
        let end = self.frame;
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Speech {
                start,
                silence_since,
            } => self.close(start, silence_since.unwrap_or(end)),
            State::Idle => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> SegmenterConfig {
        SegmenterConfig {
            threshold: 0.5,
            min_silence_ms: 320,
            min_speech_ms: 250,
            pad_ms: 64,
            max_segment_ms: 3_200,
            soft_max_ms: 3_200,
            short_silence_ms: 96,
        }
    }

    fn run(config: SegmenterConfig, probs: &[f32]) -> Vec<SpeechSpan> {
        let mut s = Segmenter::new(config);
        let mut out = s.push_all(probs.iter().copied());
        out.extend(s.finish());
        out
    }

    fn pattern(parts: &[(f32, usize)]) -> Vec<f32> {
        parts
            .iter()
            .flat_map(|(p, n)| std::iter::repeat_n(*p, *n))
            .collect()
    }

    #[test]
    fn quiet_since_is_where_the_latest_speech_stopped() {
        let mut s = Segmenter::new(cfg());
        s.push_all(pattern(&[(0.0, 5)]));
        assert_eq!(s.quiet_since(), None, "nothing said yet");
        s.push_all(pattern(&[(0.9, 10)]));
        assert_eq!(s.quiet_since(), None, "speaking");
        s.push_all(pattern(&[(0.0, 3)]));
        assert_eq!(s.quiet_since(), Some(15 * FRAME_SAMPLES), "in the pause");
        s.push_all(pattern(&[(0.0, 30)]));
        assert_eq!(
            s.quiet_since(),
            Some(15 * FRAME_SAMPLES),
            "after the span closed"
        );
        s.push_all(pattern(&[(0.9, 2), (0.0, 1)]));
        assert_eq!(
            s.quiet_since(),
            Some(50 * FRAME_SAMPLES),
            "the latest speech"
        );
    }

    #[test]
    fn two_utterances_split_on_long_silence_with_padding() {
        // 10 frames silence, 20 speech, 15 silence, 20 speech, 5 silence.
        let probs = pattern(&[(0.0, 10), (0.9, 20), (0.0, 15), (0.9, 20), (0.0, 5)]);
        let spans = run(cfg(), &probs);
        let pad = 64 * 16;
        assert_eq!(
            spans,
            vec![
                SpeechSpan {
                    start: 10 * 512 - pad,
                    end: 30 * 512 + pad
                },
                SpeechSpan {
                    start: 45 * 512 - pad,
                    end: 65 * 512 + pad
                },
            ]
        );
    }

    #[test]
    fn short_pause_does_not_split_and_blips_are_dropped() {
        let probs = pattern(&[
            (0.9, 20),
            (0.0, 5),
            (0.9, 20),
            (0.0, 20),
            (0.9, 3),
            (0.0, 20),
        ]);
        let spans = run(cfg(), &probs);
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert_eq!(spans[0].start, 0, "pre-roll clamps at the stream start");
        assert_eq!(spans[0].end, 45 * 512 + 64 * 16);
    }

    #[test]
    fn hysteresis_keeps_speech_between_thresholds() {
        let probs = pattern(&[(0.9, 10), (0.4, 30), (0.9, 10), (0.0, 20)]);
        assert_eq!(run(cfg(), &probs).len(), 1);
    }

    #[test]
    fn long_speech_is_cut_within_max_length_including_padding() {
        let probs = pattern(&[(0.9, 300)]);
        let spans = run(cfg(), &probs);
        assert!(spans.len() >= 3, "{spans:?}");
        for s in &spans {
            assert!(s.end - s.start <= 3_200 * 16, "{s:?} too long");
        }
        // Consecutive cuts leave no audio out.
        for w in spans.windows(2) {
            assert!(w[1].start <= w[0].end, "{w:?}");
        }
    }

    #[test]
    fn after_the_soft_maximum_a_short_pause_ends_the_span() {
        let config = SegmenterConfig {
            soft_max_ms: 960,
            max_segment_ms: 10_000,
            ..cfg()
        };
        // 20 frames (640 ms) speech, 4-frame pause: too short to split early...
        // 20 more frames (past 960 ms), then a 4-frame pause: now it splits.
        let probs = pattern(&[
            (0.9, 20),
            (0.0, 4),
            (0.9, 20),
            (0.0, 4),
            (0.9, 20),
            (0.0, 20),
        ]);
        let spans = run(config, &probs);
        assert_eq!(spans.len(), 2, "{spans:?}");
        assert_eq!(spans[0].end, 44 * 512 + 64 * 16);
    }

    #[test]
    fn a_paused_span_is_the_span_that_closes_if_the_pause_goes_on() {
        let mut s = Segmenter::new(cfg()); // 64 ms padding = 2 frames
        for p in pattern(&[(0.0, 10), (0.9, 20), (0.0, 1)]) {
            s.push(p);
        }
        assert_eq!(s.paused_span(), None, "the padding is not recorded yet");
        s.push(0.0);
        let paused = s.paused_span().expect("the padding is in");
        assert_eq!(paused.end, 30 * 512 + 64 * 16);
        let mut closed = None;
        for _ in 0..20 {
            closed = closed.or(s.push(0.0));
        }
        assert_eq!(closed, Some(paused), "the same span, closed by the pause");
        assert_eq!(s.paused_span(), None, "nothing open any more");
    }

    #[test]
    fn a_paused_span_grows_when_speech_goes_on() {
        let mut s = Segmenter::new(cfg());
        for p in pattern(&[(0.9, 20), (0.0, 4)]) {
            s.push(p);
        }
        let first = s.paused_span().unwrap();
        s.push(0.9);
        assert_eq!(s.paused_span(), None, "speech again");
        for p in pattern(&[(0.9, 10), (0.0, 4)]) {
            s.push(p);
        }
        let later = s.paused_span().unwrap();
        assert_eq!(later.start, first.start);
        assert!(later.end > first.end);
    }

    #[test]
    fn open_start_reports_the_padded_start_of_open_speech() {
        let mut s = Segmenter::new(cfg());
        for _ in 0..10 {
            s.push(0.0);
        }
        assert_eq!(s.open_start(), None);
        s.push(0.9);
        assert_eq!(s.open_start(), Some(10 * 512 - 64 * 16));
        assert!(s.in_speech());
    }
}
