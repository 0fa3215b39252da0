//! One dictation, from key press to text: audio goes to disk first, then to
//! the VAD; each span closed by a pause brings the engine up to date at once
//! (eager, with the context of the whole window: see [`super::context`]), so
//! on release only the tail is left to transcribe.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};

use crate::audio::wav::WavRecorder;
use crate::engine::{Engine, EngineError, RunParams, StreamEvent, Utterance};
use crate::text::join_dictation;
use crate::vad::{Segmenter, SegmenterConfig, SpeechDetector, SpeechSpan};

use super::context::SpeechWindows;
use super::events::DictationEvent;

type Reply = Receiver<Result<Vec<Utterance>, EngineError>>;

/// What a recording that cannot be written means for the user (a full disk).
pub(crate) const NOT_SAVED: &str =
    "The dictation goes on in memory, but its audio is not being saved (is the disk full?)";

/// Settings of one dictation.
#[derive(Debug, Clone)]
pub struct DictationConfig {
    pub segmenter: SegmenterConfig,
    /// Transcribe segments while the user speaks (else the whole buffer on release).
    pub eager: bool,
    pub language: Option<String>,
    /// The user's words, passed to the engine with every run.
    pub vocabulary: Vec<String>,
}

impl DictationConfig {
    pub fn defaults() -> Self {
        Self {
            segmenter: SegmenterConfig {
                threshold: 0.5,
                min_silence_ms: super::defaults::SILENCE_MS,
                min_speech_ms: 150,
                pad_ms: 300,
                max_segment_ms: 25_000,
                soft_max_ms: 15_000,
                short_silence_ms: 200,
            },
            eager: true,
            language: None,
            vocabulary: Vec::new(),
        }
    }
}

/// Whether to stop listening after the key was released `since_release`
/// ago: at once when the user had already stopped speaking (what follows is
/// silence), else after the post-roll, so the last word is never cut.
pub fn post_roll_done(since_release: Duration, post_roll: Duration, hearing_speech: bool) -> bool {
    since_release >= post_roll || !hearing_speech
}

pub struct Dictation {
    pub id: u64,
    config: DictationConfig,
    audio: Vec<f32>,
    recorder: Option<WavRecorder>,
    audio_path: PathBuf,
    segmenter: Segmenter,
    spans: Vec<SpeechSpan>,
    /// Eager: the windows of speech, and the engine's reply to the run
    /// they have in flight.
    windows: SpeechWindows,
    window_reply: Option<Reply>,
    /// Not eager: the one request for the whole speech, sent at the end.
    pending: VecDeque<(usize, Reply)>,
    texts: Vec<Option<String>>,
    /// Cancelled: no new engine work, only the run in flight is drained.
    aborted: bool,
    engine_ms: f64,
    /// When the user released the key.
    pub stopped_at: Option<Instant>,
    /// All audio is in; only engine work may remain.
    pub audio_done: bool,
    pub failed: Option<String>,
    /// Streaming models get the audio directly (no VAD segments); `None`
    /// once the final text is in, or for segment-based models.
    stream: Option<Receiver<StreamEvent>>,
}

impl Dictation {
    /// Starts a dictation recorded to `recorder`; `None` when the recording
    /// could not be created (a full disk): it then lives in memory only.
    pub fn start(
        id: u64,
        path: &Path,
        recorder: Option<WavRecorder>,
        config: DictationConfig,
        vad: &mut SpeechDetector,
        engine: &Engine,
    ) -> Self {
        let _ = vad.flush(); // a fresh VAD stream
        let stream = engine.info().streaming.then(|| {
            engine.stream_begin(RunParams {
                language: config.language.clone(),
                vocabulary: config.vocabulary.clone(),
                ..Default::default()
            })
        });
        Self {
            stream,
            id,
            segmenter: Segmenter::new(config.segmenter),
            config,
            audio: Vec::new(),
            recorder,
            audio_path: path.to_path_buf(),
            spans: Vec::new(),
            windows: SpeechWindows::for_model(engine.info()),
            window_reply: None,
            pending: VecDeque::new(),
            texts: Vec::new(),
            aborted: false,
            engine_ms: 0.0,
            stopped_at: None,
            audio_done: false,
            failed: None,
        }
    }

    /// Whether the user is still speaking in the latest audio: only then is
    /// the post-roll worth waiting for after the key is released.
    pub fn hearing_speech(&self) -> bool {
        self.segmenter.hearing_speech()
    }

    pub fn audio_path(&self) -> &Path {
        &self.audio_path
    }

    pub fn audio_ms(&self) -> u64 {
        crate::audio::samples_to_ms(self.audio.len() as u64)
    }

    fn params(&self) -> RunParams {
        RunParams {
            language: self.config.language.clone(),
            vocabulary: self.config.vocabulary.clone(),
            ..Default::default()
        }
    }

    /// Disk first, then the VAD; closed spans go to the engine when eager.
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
        if self.stream.is_some() {
            engine.stream_feed(pcm.to_vec());
            return;
        }
        match vad.feed(pcm) {
            Ok(probs) => {
                for p in probs {
                    if let Some(span) = self.segmenter.push(p) {
                        self.close_span(span, engine, emit);
                    } else if self.config.eager {
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
        if self.config.eager {
            self.windows.add_span(span.start, span.end);
            self.submit_window_run(engine);
        }
    }

    /// A pause has begun: the engine starts on the speech so far without
    /// waiting for the pause to be long enough to close the span. When the
    /// user releases the key in that pause, which is when people release it,
    /// the run they wait for is already under way (if they go on speaking,
    /// the run is one more eager run over the window, as at any span).
    /// Every frame of the pause offers the same span again; the windows
    /// already hold it then, and no run is due.
    fn run_into_pause(&mut self, engine: &Engine) {
        let Some(span) = self.segmenter.paused_span().and_then(|s| self.recorded(s)) else {
            return;
        };
        self.windows.add_span(span.start, span.end);
        self.submit_window_run(engine);
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

    /// Sends the next window run, unless one is in flight (spans that close
    /// meanwhile are coalesced into the run after it).
    fn submit_window_run(&mut self, engine: &Engine) {
        if self.aborted {
            return;
        }
        let Some(run) = self.windows.next_run() else {
            return;
        };
        let end = (run.end as usize).min(self.audio.len());
        let pcm = self.audio[run.start as usize..end].to_vec();
        let params = RunParams {
            prompt: run.prompt.clone(),
            prefix: run.prefix.clone(),
            ..self.params()
        };
        self.window_reply = Some(engine.submit(vec![pcm], params));
    }

    /// All audio is in (post-roll included): close the last span and, when
    /// not eager, send the whole speech region as one request.
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
        if self.stream.is_some() {
            engine.stream_finish();
            return;
        }
        if let Ok(probs) = vad.flush() {
            for p in probs {
                if let Some(span) = self.segmenter.push(p) {
                    self.close_span(span, engine, emit);
                }
            }
        }
        if let Some(span) = self.segmenter.finish() {
            self.close_span(span, engine, emit);
        }
        if self.config.eager && self.windows.in_flight_is_stale() {
            // The user is waiting now: rather than finish a run whose result
            // would only be the prefix of the next, run everything at once.
            engine.cancel();
            self.window_reply = None;
            self.windows.requeue();
            self.submit_window_run(engine);
        }
        if !self.config.eager && !self.spans.is_empty() {
            let start = self.spans[0].start as usize;
            let end = (self.spans.last().expect("non-empty").end as usize).min(self.audio.len());
            let pcm = self.audio[start..end].to_vec();
            // One request whose text stands for every span.
            self.texts = vec![None];
            self.pending
                .push_back((0, engine.submit(vec![pcm], self.params())));
        }
    }

    /// Stops engine work for a cancelled dictation.
    pub fn abort(&mut self, engine: &Engine) {
        self.aborted = true;
        if self.stream.take().is_some() {
            engine.stream_abort();
        }
        if let Some(rec) = self.recorder.take() {
            let _ = rec.finish(); // the audio is kept, per the retention setting
        }
        self.audio_done = true;
    }

    fn poll_stream(&mut self, emit: &mut dyn FnMut(DictationEvent)) {
        let Some(rx) = &self.stream else { return };
        let mut finished = false;
        for event in rx.try_iter() {
            match event {
                StreamEvent::Partial {
                    committed,
                    tentative,
                } => emit(DictationEvent::PartialText {
                    id: self.id,
                    text: crate::text::join_dictation([committed.as_str(), tentative.as_str()]),
                }),
                StreamEvent::Final(result) => {
                    finished = true;
                    let text = match result {
                        Ok(u) => {
                            self.engine_ms += u.engine_ms;
                            u.text
                        }
                        Err(e) => {
                            emit(DictationEvent::Error {
                                message: e.to_string(),
                            });
                            self.failed = Some(e.to_string());
                            String::new()
                        }
                    };
                    emit(DictationEvent::SegmentTranscribed {
                        id: self.id,
                        index: 0,
                        text: text.clone(),
                        engine_ms: self.engine_ms,
                    });
                    self.texts = vec![Some(text)];
                }
            }
        }
        if finished {
            self.stream = None;
        }
    }

    /// Collects a finished window run and sends the next one.
    fn poll_windows(&mut self, engine: &Engine, emit: &mut dyn FnMut(DictationEvent)) {
        while let Some(rx) = &self.window_reply {
            let result = match rx.try_recv() {
                Ok(r) => r,
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => Err(EngineError::WorkerGone),
            };
            self.window_reply = None;
            let (window, had_prefix) = self
                .windows
                .in_flight()
                .map(|run| (run.window, run.prefix.is_some()))
                .expect("a reply belongs to the run in flight");
            match result {
                Ok(mut utterances) => {
                    let u = utterances.pop().unwrap_or_default();
                    self.engine_ms += u.engine_ms;
                    self.windows.finished(Ok(&u.text));
                    emit(DictationEvent::SegmentTranscribed {
                        id: self.id,
                        index: window,
                        text: u.text,
                        engine_ms: u.engine_ms,
                    });
                }
                // Cancelled by a stale cancel meant for the run before: again.
                Err(EngineError::Cancelled) if !self.aborted => self.windows.requeue(),
                Err(e) if had_prefix && !self.aborted => {
                    // Retried without the prefix; the user needs to know only if that fails too.
                    tracing::warn!("a dictation run with a transcript prefix failed: {e}");
                    self.windows.finished(Err(()));
                }
                Err(e) => {
                    self.windows.finished(Err(()));
                    if !self.aborted {
                        emit(DictationEvent::Error {
                            message: e.to_string(),
                        });
                        self.failed = Some(e.to_string());
                    }
                }
            }
            self.submit_window_run(engine);
        }
    }

    /// Collects finished engine work, in order, and sends what is due next.
    /// True when everything is done.
    pub fn poll(&mut self, engine: &Engine, emit: &mut dyn FnMut(DictationEvent)) -> bool {
        if self.stream.is_some() {
            self.poll_stream(emit);
            return self.audio_done && self.stream.is_none();
        }
        if self.config.eager {
            self.poll_windows(engine, emit);
            let settled = if self.aborted {
                self.window_reply.is_none()
            } else {
                self.windows.is_done()
            };
            return self.audio_done && settled;
        }
        while let Some((index, rx)) = self.pending.front() {
            let index = *index;
            let result = match rx.try_recv() {
                Ok(r) => r,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => Err(EngineError::WorkerGone),
            };
            self.pending.pop_front();
            match result {
                Ok(mut utterances) => {
                    let u = utterances.pop().unwrap_or_default();
                    self.engine_ms += u.engine_ms;
                    emit(DictationEvent::SegmentTranscribed {
                        id: self.id,
                        index,
                        text: u.text.clone(),
                        engine_ms: u.engine_ms,
                    });
                    self.texts[index] = Some(u.text);
                }
                Err(e) => {
                    emit(DictationEvent::Error {
                        message: e.to_string(),
                    });
                    self.failed = Some(e.to_string());
                    self.texts[index] = Some(String::new());
                }
            }
        }
        self.audio_done && self.pending.is_empty()
    }

    pub fn text(&self) -> String {
        if self.config.eager && self.texts.is_empty() {
            return self.windows.text();
        }
        join_dictation(self.texts.iter().filter_map(|t| t.as_deref()))
    }

    pub fn engine_ms(&self) -> f64 {
        self.engine_ms
    }

    pub fn segments(&self) -> usize {
        self.spans.len().max(self.texts.len())
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
            post_roll_done(Duration::ZERO, post_roll, false),
            "a pause at release: nothing to wait for"
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
