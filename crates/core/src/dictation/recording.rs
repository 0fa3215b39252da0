//! One dictation, from key press to text: audio goes to disk first, then to
//! the VAD; each span a pause offers or closes goes to the engine at once, by
//! the dictation's [`LiveStrategy`] (see [`super::strategy`]), so on release
//! only the tail is left to transcribe.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::Select;

use crate::audio::wav::WavRecorder;
use crate::recheck::Recheck;
use utter_engine::vad::{Segmenter, SegmenterConfig, SpeechDetector, SpeechSpan};

use super::silence_stop::Heard;
use utter_engine::{Engine, RunParams};

use super::events::DictationEvent;
use super::plan::Plan;
use super::strategy::{LiveStrategy, RunContext, Runs, Tally};

/// What a recording that cannot be written means for the user (a full disk).
pub(crate) const NOT_SAVED: &str =
    "The dictation goes on in memory, but its audio is not being saved (is the disk full?)";

/// Settings of one dictation.
#[derive(Debug, Clone)]
pub struct DictationConfig {
    pub segmenter: SegmenterConfig,
    /// How speech reaches the engine while the user speaks; `None`: what
    /// suits the model ([`LiveStrategy::for_model`]).
    pub strategy: Option<LiveStrategy>,
    pub language: Option<String>,
    /// The user's words, passed to the engine with every run.
    pub vocabulary: Vec<String>,
    /// Written in English whatever the language spoken (Whisper's own
    /// translation; only models that translate).
    pub translate: bool,
}

impl DictationConfig {
    pub fn defaults() -> Self {
        Self {
            segmenter: SegmenterConfig {
                threshold: 0.5,
                min_silence_ms: crate::settings::defaults::SILENCE_MS,
                min_speech_ms: 150,
                pad_ms: 300,
                max_segment_ms: 25_000,
                soft_max_ms: 15_000,
                short_silence_ms: 200,
            },
            strategy: None,
            language: None,
            vocabulary: Vec::new(),
            translate: false,
        }
    }
}

/// Sound that reached the microphone before the release but not yet this
/// process: the sound server's fragment (25 ms by PulseAudio's default), the
/// capture thread's 20 ms batch, the service's next pass, and the voice
/// detector's 32 ms frame that decides whether speech goes on. Always waited
/// for: a word ending at the release ends in it.
pub const PIPELINE_TAIL: Duration = Duration::from_millis(150);

/// Whether to stop listening after the key was released `since_release`
/// ago: once the audio still on its way is in ([`PIPELINE_TAIL`]) when the
/// user had already stopped speaking (what follows is silence), else after
/// the post-roll, so the last word is never cut.
pub fn post_roll_done(since_release: Duration, post_roll: Duration, hearing_speech: bool) -> bool {
    since_release >= post_roll_length(post_roll, hearing_speech)
}

/// How long after the release listening goes on (see [`post_roll_done`]);
/// the service also sleeps until then.
pub fn post_roll_length(post_roll: Duration, hearing_speech: bool) -> Duration {
    if hearing_speech {
        post_roll
    } else {
        PIPELINE_TAIL.min(post_roll)
    }
}

pub struct Dictation {
    pub id: u64,
    params: RunParams,
    audio: Vec<f32>,
    recorder: Option<WavRecorder>,
    audio_path: PathBuf,
    segmenter: Segmenter,
    spans: Vec<SpeechSpan>,
    /// When the press started it.
    started: Instant,
    runs: Runs,
    tally: Tally,
    /// What it follows: the settings with the focused app's profile,
    /// decided at the press.
    plan: Plan,
    purpose: Purpose,
    /// Cancelled: no new engine work, only the run in flight is drained.
    aborted: bool,
    /// All audio is in; only engine work may remain.
    audio_done: bool,
    rechecking: Rechecking,
}

/// The vocabulary's recheck of the finished text (see [`crate::recheck`]).
enum Rechecking {
    /// The runs are not all in yet.
    NotYet,
    Running(Recheck),
    /// The final text: the runs' own (`None`: nothing to recheck, or the
    /// dictation was cancelled) or the recheck's.
    Done(Option<String>),
}

/// What the recorded words are for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// Text to deliver into the focused app.
    Dictation,
    /// An instruction for the language model (AI command mode), carried
    /// out on the text selected at the press (none: answered, and the
    /// answer inserted).
    Command { selection: Option<String> },
}

impl Dictation {
    /// Starts a dictation recorded to `recorder`; `None` when the recording
    /// could not be created (a full disk): it then lives in memory only.
    /// `strategy` is the one [`LiveStrategy::resolve`] chose for the engine's model.
    pub fn start(
        id: u64,
        path: &Path,
        recorder: Option<WavRecorder>,
        plan: Plan,
        strategy: LiveStrategy,
        vad: &mut SpeechDetector,
        engine: &Engine,
    ) -> Self {
        let _ = vad.flush(); // a fresh VAD stream
        let config = &plan.dictation;
        let params = RunParams {
            language: config.language.clone(),
            vocabulary: config.vocabulary.clone(),
            translate: config.translate,
            ..Default::default()
        };
        Self {
            runs: Runs::start(strategy, engine, &params),
            params,
            id,
            segmenter: Segmenter::new(config.segmenter),
            audio: Vec::new(),
            recorder,
            audio_path: path.to_path_buf(),
            spans: Vec::new(),
            tally: Tally::default(),
            started: Instant::now(),
            plan,
            purpose: Purpose::Dictation,
            aborted: false,
            audio_done: false,
            rechecking: Rechecking::NotYet,
        }
    }

    /// What this dictation follows (its language, words, text rules,
    /// delivery and rewrite), decided at the press.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The words every run of this dictation carries (its profile's first).
    pub fn vocabulary(&self) -> &[String] {
        &self.params.vocabulary
    }

    /// What the words are for (a dictation unless said otherwise).
    pub fn with_purpose(mut self, purpose: Purpose) -> Self {
        self.purpose = purpose;
        self
    }

    pub fn purpose(&self) -> &Purpose {
        &self.purpose
    }

    /// Whether the user is still speaking in the latest audio: only then is
    /// the post-roll worth waiting for after the key is released.
    pub fn hearing_speech(&self) -> bool {
        self.segmenter.hearing_speech()
    }

    /// What the voice detector has heard, for a hands-free stop.
    pub fn heard(&self) -> Heard {
        if self.runs.wants_raw_audio() {
            return Heard::Unknown;
        }
        if self.segmenter.hearing_speech() {
            return Heard::Speaking;
        }
        match self.segmenter.quiet_since() {
            Some(sample) => Heard::QuietSince {
                ms: crate::audio::samples_to_ms(sample),
            },
            None => Heard::Nothing,
        }
    }

    /// How long ago the press started it.
    pub fn since_start(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn audio_path(&self) -> &Path {
        &self.audio_path
    }

    pub fn audio_ms(&self) -> u64 {
        crate::audio::samples_to_ms(self.audio.len() as u64)
    }

    /// The last error the user was told of, if any run failed.
    pub fn failed(&self) -> Option<&str> {
        self.tally.failed.as_deref()
    }

    /// Disk first, then the VAD; spans go to the engine as the strategy wants.
    pub fn push_audio(
        &mut self,
        pcm: &[f32],
        vad: &mut SpeechDetector,
        engine: &Engine,
        emit: &mut dyn FnMut(DictationEvent),
    ) {
        if let Some(rec) = self.recorder.as_mut() {
            if let Err(e) = rec.write(pcm) {
                // Keep going in memory: losing the disk copy must not lose the dictation.
                emit(DictationEvent::Error {
                    message: format!(
                        "{}: cannot write the recording: {e}. {NOT_SAVED}",
                        self.audio_path.display()
                    ),
                });
                self.recorder = None;
            }
        }
        self.audio.extend_from_slice(pcm);
        if self.runs.wants_raw_audio() {
            self.runs.feed_stream(pcm);
            return;
        }
        match vad.feed(pcm) {
            Ok(probs) => {
                for p in probs {
                    if let Some(span) = self.segmenter.push(p) {
                        self.close_span(span, engine, emit);
                    } else if self.runs.runs_at_pauses() {
                        self.run_into_pause(engine);
                    }
                }
            }
            Err(e) => emit(DictationEvent::Error {
                message: e.to_string(),
            }),
        }
    }

    fn close_span(
        &mut self,
        span: SpeechSpan,
        engine: &Engine,
        emit: &mut dyn FnMut(DictationEvent),
    ) {
        let Some(span) = self.recorded(span) else {
            return;
        };
        let index = self.spans.len();
        self.spans.push(span);
        emit(DictationEvent::SegmentClosed {
            id: self.id,
            index,
            start_ms: crate::audio::samples_to_ms(span.start),
            end_ms: crate::audio::samples_to_ms(span.end),
        });
        self.add_span(span, engine);
    }

    fn add_span(&mut self, span: SpeechSpan, engine: &Engine) {
        let cx = RunContext::new(engine, &self.audio, &self.params, self.aborted);
        self.runs.add_span(span, &cx);
    }

    /// A pause has begun: the engine starts on the speech so far without
    /// waiting for the pause to be long enough to close the span. When the
    /// user releases the key in that pause, which is when people release it,
    /// the run they wait for is already under way (if they go on speaking,
    /// the span grows and is run again, as the strategy says).
    /// Every frame of the pause offers the same span again; the runs
    /// already hold it then, and no run is due.
    fn run_into_pause(&mut self, engine: &Engine) {
        let Some(span) = self.segmenter.paused_span().and_then(|s| self.recorded(s)) else {
            return;
        };
        self.add_span(span, engine);
    }

    /// `span` cut to the audio recorded so far (its padding may run past
    /// it); `None` when nothing of it is left.
    fn recorded(&self, span: SpeechSpan) -> Option<SpeechSpan> {
        let end = span.end.min(self.audio.len() as u64);
        (end > span.start).then_some(SpeechSpan {
            start: span.start,
            end,
        })
    }

    /// All audio is in (post-roll included): close the last span and let
    /// the strategy run what is left.
    pub fn finish_audio(
        &mut self,
        vad: &mut SpeechDetector,
        engine: &Engine,
        emit: &mut dyn FnMut(DictationEvent),
    ) {
        if self.audio_done {
            return;
        }
        self.audio_done = true;
        if let Some(mut rec) = self.recorder.take() {
            let _ = rec.flush();
            if let Err(e) = rec.finish() {
                emit(DictationEvent::Error {
                    message: format!(
                        "{}: cannot finish the recording: {e}",
                        self.audio_path.display()
                    ),
                });
            }
        }
        if !self.runs.wants_raw_audio() {
            let mut spans = vad
                .flush()
                .map(|probs| self.segmenter.push_all(probs))
                .unwrap_or_default();
            spans.extend(self.segmenter.finish());
            for span in spans {
                self.close_span(span, engine, emit);
            }
        }
        let cx = RunContext::new(engine, &self.audio, &self.params, self.aborted);
        self.runs.audio_done(&self.spans, &cx);
    }

    /// Stops engine work for a cancelled dictation.
    pub fn abort(&mut self) {
        self.aborted = true;
        self.runs.abort();
        if let Some(rec) = self.recorder.take() {
            let _ = rec.finish(); // the audio is kept, per the retention setting
        }
        self.audio_done = true;
        if let Rechecking::Running(recheck) = &self.rechecking {
            recheck.cancel();
        }
        self.rechecking = Rechecking::Done(None);
    }

    /// Adds the engine replies this dictation waits for to `select`.
    pub fn wait_on<'a>(&'a self, select: &mut Select<'a>) {
        self.runs.wait_on(select);
        if let Rechecking::Running(recheck) = &self.rechecking {
            select.recv(recheck.reply_channel());
        }
    }

    /// Collects finished engine work, in order, and sends what is due next;
    /// once the runs are all in, rechecks the words the vocabulary doubts.
    /// True when everything is done.
    pub fn poll(&mut self, engine: &Engine, emit: &mut dyn FnMut(DictationEvent)) -> bool {
        let cx = RunContext::new(engine, &self.audio, &self.params, self.aborted);
        self.runs.poll(self.id, &cx, &mut self.tally, emit);
        if !(self.audio_done && self.runs.settled(self.aborted)) {
            return false;
        }
        match &self.rechecking {
            Rechecking::NotYet => {
                let recheck = Recheck::start(
                    engine,
                    &self.plan.rules,
                    &self.runs.text(),
                    self.speech_audio(),
                    &self.params,
                );
                self.rechecking = match recheck {
                    Some(recheck) => Rechecking::Running(recheck),
                    None => Rechecking::Done(None),
                };
            }
            Rechecking::Running(recheck) => {
                if let Some(text) = recheck.try_finish(&self.runs.text()) {
                    self.rechecking = Rechecking::Done(Some(text));
                }
            }
            Rechecking::Done(_) => {}
        }
        matches!(self.rechecking, Rechecking::Done(_))
    }

    /// The audio from the first speech to the last (all of it when the
    /// strategy found no spans).
    fn speech_audio(&self) -> &[f32] {
        let end = |s: &SpeechSpan| (s.end as usize).min(self.audio.len());
        match (self.spans.first(), self.spans.last()) {
            (Some(first), Some(last)) => {
                &self.audio[(first.start as usize).min(end(last))..end(last)]
            }
            _ => &self.audio,
        }
    }

    pub fn text(&self) -> String {
        match &self.rechecking {
            Rechecking::Done(Some(text)) => text.clone(),
            _ => self.runs.text(),
        }
    }

    pub fn engine_ms(&self) -> f64 {
        self.tally.engine_ms
    }

    /// What the user is told when speech the VAD heard is not in the text
    /// (the runs over the rest yielded nothing): never dropped silently.
    pub fn coverage_warning(&self) -> Option<String> {
        crate::coverage::untranscribed_warning(self.tally.untranscribed_ms)
    }

    pub fn segments(&self) -> usize {
        self.spans.len().max(self.runs.pieces())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_roll_waits_only_while_speech_continues() {
        let post_roll = Duration::from_millis(400);
        assert!(!post_roll_done(Duration::from_millis(100), post_roll, true));
        assert!(post_roll_done(Duration::from_millis(400), post_roll, true));
        assert!(
            !post_roll_done(Duration::from_millis(100), post_roll, false),
            "a pause at release: the audio still in the pipeline is waited for"
        );
        assert!(
            post_roll_done(PIPELINE_TAIL, post_roll, false),
            "a pause at release: nothing more to wait for"
        );
        assert!(
            post_roll_done(Duration::ZERO, Duration::ZERO, false),
            "no post-roll asked: none"
        );
    }

    #[test]
    fn dictation_defaults_keep_300_ms_pre_roll_and_cut_at_25_s() {
        let c = DictationConfig::defaults().segmenter;
        assert_eq!(
            (c.pad_ms, c.min_silence_ms, c.max_segment_ms),
            (300, 600, 25_000)
        );
    }
}
