//! How a dictation's speech becomes engine runs: one strategy per kind of
//! model, each with the state it needs and nothing else.
//!
//! Which is chosen for which model is measured, not guessed
//! (docs/benchmarks.md, "Live dictation: per-span vs growing window"):
//! Whisper pads every run to 30 s, so a run over the whole window costs no
//! more than one over the last span and buys the context; Moonshine's runs
//! cost what their audio is and it takes no prefix, so re-running a growing
//! window pays for all of it again at every pause: it gets windows of a few
//! seconds (as cheap as one run per span, and as accurate as whisper tiny.en).

use std::fmt;
use std::str::FromStr;

use crossbeam_channel::Select;

use utter_engine::vad::SpeechSpan;
use utter_engine::{
    Engine, EngineError, ModelInfo, Run, RunCost, RunParams, Stream as EngineStream, StreamEvent,
    Utterance,
};

use super::events::DictationEvent;
use super::recovery::Recovery;
use super::windows::{SpeechWindows, WindowRun};
use crate::coverage::TextEnd;

/// How the speech reaches the engine while the user speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LiveStrategy {
    /// At each pause the window so far (up to 28 s) runs again, its settled
    /// text as the transcript prefix ([`super::context`]).
    GrowingWindow,
    /// Growing windows of at most [`super::windows::SHORT_WINDOW_MS`]: each pause re-runs
    /// only the last few seconds, with their context, for a model whose
    /// runs cost what their audio is.
    ShortWindow,
    /// Each speech span runs once, alone, when a pause offers it (again only
    /// if the user went on speaking in it); the text before it is the
    /// prompt where the model takes one.
    PerSpan,
    /// Nothing runs while the key is held; on release, all the speech in one run.
    OnRelease,
    /// The model's own streaming decoder hears the audio as it comes (no VAD).
    NativeStream,
}

impl LiveStrategy {
    /// The strategy that measured best for a model of this kind.
    pub fn for_model(model: &ModelInfo) -> Self {
        if model.streaming {
            return Self::NativeStream;
        }
        match model.run_cost {
            RunCost::Padded { .. } => Self::GrowingWindow,
            RunCost::GrowsWithAudio => Self::ShortWindow,
        }
    }

    /// `wanted` (the user's choice, `None` = the model's own) as it can run
    /// on `model`: only a streaming model streams.
    pub fn resolve(wanted: Option<Self>, model: &ModelInfo) -> Result<Self, StrategyError> {
        match wanted {
            None => Ok(Self::for_model(model)),
            Some(Self::NativeStream) if !model.streaming => {
                Err(StrategyError::NoStreamingDecoder {
                    arch: model.arch.clone(),
                })
            }
            Some(s) => Ok(s),
        }
    }

    pub const ALL: [Self; 5] = [
        Self::GrowingWindow,
        Self::ShortWindow,
        Self::PerSpan,
        Self::OnRelease,
        Self::NativeStream,
    ];

    /// Every strategy's name, for messages: "growing-window, short-window, …".
    pub fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::GrowingWindow => "growing-window",
            Self::ShortWindow => "short-window",
            Self::PerSpan => "per-span",
            Self::OnRelease => "on-release",
            Self::NativeStream => "native-stream",
        }
    }
}

impl fmt::Display for LiveStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategyError {
    #[error("unknown live strategy `{0}` (one of: {names})", names = LiveStrategy::names())]
    Unknown(String),
    #[error("`{arch}` has no streaming decoder: choose growing-window, short-window, per-span or on-release")]
    NoStreamingDecoder { arch: String },
}

impl FromStr for LiveStrategy {
    type Err = StrategyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| StrategyError::Unknown(s.to_string()))
    }
}

/// What the runs of a dictation add up to, whatever the strategy.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub engine_ms: f64,
    /// The last error the user was told of.
    pub failed: Option<String>,
    /// Speech the VAD heard that no run turned into text ([`Recovery`]).
    pub untranscribed_ms: u64,
}

impl Tally {
    fn fail(&mut self, e: &EngineError, emit: &mut dyn FnMut(DictationEvent)) {
        emit(DictationEvent::Error {
            message: e.to_string(),
        });
        self.failed = Some(e.to_string());
    }
}

/// The runs of one dictation, in the state its strategy needs.
pub(super) enum Runs {
    /// Growing windows or one window per span: the same bookkeeping.
    Windows {
        windows: SpeechWindows,
        reply: Option<Run>,
        /// The check that the text covers the speech, once all is in
        /// (boxed: it holds a run and the spans).
        recovery: Box<Recovery>,
    },
    OnRelease {
        reply: Option<Run>,
        text: Option<String>,
    },
    /// `stream` is `None` once the final text is in (or it was aborted).
    Stream {
        stream: Option<EngineStream>,
        text: Option<String>,
    },
}

/// What a strategy needs to submit a run.
pub(super) struct RunContext<'a> {
    pub engine: &'a Engine,
    /// The dictation's audio so far.
    pub audio: &'a [f32],
    pub params: &'a RunParams,
    /// Cancelled: no new runs, only the one in flight is drained.
    pub aborted: bool,
    /// A run without a prefix comes back with segment timestamps.
    pub timestamps: bool,
}

impl<'a> RunContext<'a> {
    pub fn new(engine: &'a Engine, audio: &'a [f32], params: &'a RunParams, aborted: bool) -> Self {
        Self {
            engine,
            audio,
            params,
            aborted,
            timestamps: engine.info().timestamps != utter_engine::Timestamps::None,
        }
    }

    pub(super) fn submit(&self, start: u64, end: u64, params: RunParams) -> Run {
        let end = (end as usize).min(self.audio.len());
        let start = (start as usize).min(end);
        self.engine
            .submit(vec![self.audio[start..end].to_vec()], params)
    }

    /// Submits a window run: its pieces of the audio, one after the other.
    fn submit_window(&self, run: &WindowRun, params: RunParams) -> Run {
        let pcm = run.audio(self.audio).concat();
        self.engine.submit(vec![pcm], params)
    }
}

impl Runs {
    pub fn start(strategy: LiveStrategy, engine: &Engine, params: &RunParams) -> Self {
        match strategy {
            LiveStrategy::GrowingWindow => Self::Windows {
                windows: SpeechWindows::for_model(engine.info()),
                reply: None,
                recovery: Box::default(),
            },
            LiveStrategy::ShortWindow => Self::Windows {
                windows: SpeechWindows::short(engine.info()),
                reply: None,
                recovery: Box::default(),
            },
            LiveStrategy::PerSpan => Self::Windows {
                windows: SpeechWindows::per_span(),
                reply: None,
                recovery: Box::default(),
            },
            LiveStrategy::OnRelease => Self::OnRelease {
                reply: None,
                text: None,
            },
            LiveStrategy::NativeStream => Self::Stream {
                stream: Some(engine.stream(params.clone())),
                text: None,
            },
        }
    }

    /// Streams want the raw audio; the others the VAD's spans.
    pub fn wants_raw_audio(&self) -> bool {
        matches!(self, Self::Stream { .. })
    }

    /// Raw audio for a stream (nothing for the other strategies).
    pub fn feed_stream(&self, pcm: &[f32]) {
        if let Self::Stream {
            stream: Some(stream),
            ..
        } = self
        {
            stream.feed(pcm.to_vec());
        }
    }

    /// Whether the pause in progress should already start a run.
    pub fn runs_at_pauses(&self) -> bool {
        matches!(self, Self::Windows { .. })
    }

    /// A span closed by the VAD, or offered by a pause.
    pub fn add_span(&mut self, span: SpeechSpan, cx: &RunContext) {
        if let Self::Windows { windows, .. } = self {
            windows.add_span(span.start, span.end);
            self.submit_next(cx);
        }
    }

    /// Sends the next window run, unless one is in flight (spans that close
    /// meanwhile are coalesced into the run after it).
    fn submit_next(&mut self, cx: &RunContext) {
        let Self::Windows { windows, reply, .. } = self else {
            return;
        };
        if cx.aborted || reply.is_some() {
            return;
        }
        let Some(run) = windows.next_run() else {
            return;
        };
        let params = RunParams {
            prompt: run.prompt.clone(),
            prefix: run.prefix.clone(),
            ..cx.params.clone()
        };
        *reply = Some(cx.submit_window(&run, params));
    }

    /// All audio is in and every span closed (`spans`, in order).
    pub fn audio_done(&mut self, spans: &[SpeechSpan], cx: &RunContext) {
        match self {
            Self::Stream { stream, .. } => {
                if let Some(stream) = stream {
                    stream.finish();
                }
            }
            Self::Windows {
                windows,
                reply,
                recovery,
            } => {
                recovery.audio_done(spans);
                if windows.in_flight_is_stale() {
                    // The user is waiting now: rather than finish a run whose
                    // result would only be the prefix of the next, run
                    // everything at once.
                    if let Some(stale) = reply.take() {
                        stale.cancel();
                    }
                    windows.requeue();
                    self.submit_next(cx);
                }
            }
            Self::OnRelease { reply, .. } => {
                if let (Some(first), Some(last)) = (spans.first(), spans.last()) {
                    *reply = Some(cx.submit(first.start, last.end, cx.params.clone()));
                }
            }
        }
    }

    /// Cancels the run in flight (its reply is still collected).
    pub fn abort(&mut self) {
        match self {
            Self::Stream { stream, .. } => {
                if let Some(stream) = stream.take() {
                    stream.abort();
                }
            }
            Self::Windows {
                reply, recovery, ..
            } => {
                recovery.abort();
                if let Some(run) = reply {
                    run.cancel();
                }
            }
            Self::OnRelease { reply, .. } => {
                if let Some(run) = reply {
                    run.cancel();
                }
            }
        }
    }

    /// Adds the replies this dictation is waiting for to what `select`
    /// waits on, so the service wakes the moment one comes in.
    pub fn wait_on<'a>(&'a self, select: &mut Select<'a>) {
        match self {
            Self::Stream { stream, .. } => {
                if let Some(stream) = stream {
                    select.recv(stream.events());
                }
            }
            Self::Windows {
                reply, recovery, ..
            } => {
                if let Some(run) = reply {
                    select.recv(run.reply_channel());
                }
                recovery.wait_on(select);
            }
            Self::OnRelease { reply, .. } => {
                if let Some(run) = reply {
                    select.recv(run.reply_channel());
                }
            }
        }
    }

    /// Collects finished runs and sends what is due next.
    pub fn poll(
        &mut self,
        id: u64,
        cx: &RunContext,
        tally: &mut Tally,
        emit: &mut dyn FnMut(DictationEvent),
    ) {
        match self {
            Self::Stream { stream, text } => poll_stream(id, stream, text, tally, emit),
            Self::OnRelease { reply, text } => {
                let Some(result) = reply.as_ref().and_then(try_result) else {
                    return;
                };
                *reply = None;
                let found = match result {
                    Ok(u) => {
                        tally.engine_ms += u.engine_ms;
                        emit(DictationEvent::SegmentTranscribed {
                            id,
                            index: 0,
                            text: u.text.clone(),
                            engine_ms: u.engine_ms,
                        });
                        u.text
                    }
                    Err(e) => {
                        tally.fail(&e, emit);
                        String::new()
                    }
                };
                *text = Some(found);
            }
            Self::Windows { .. } => self.poll_windows(id, cx, tally, emit),
        }
    }

    fn poll_windows(
        &mut self,
        id: u64,
        cx: &RunContext,
        tally: &mut Tally,
        emit: &mut dyn FnMut(DictationEvent),
    ) {
        loop {
            let Self::Windows {
                windows,
                reply,
                recovery,
            } = self
            else {
                return;
            };
            if reply.is_none() && windows.is_done() {
                // Every window run is in: is all the speech in the text?
                recovery.poll(id, windows, cx, tally, emit);
                return;
            }
            let Some(result) = reply.as_ref().and_then(try_result) else {
                return;
            };
            *reply = None;
            let run = windows
                .in_flight()
                .cloned()
                .expect("a reply belongs to the run in flight");
            let (window, had_prefix) = (run.window, run.prefix.is_some());
            match result {
                Ok(u) => {
                    tally.engine_ms += u.engine_ms;
                    let end = match TextEnd::of(&u, cx.timestamps && !had_prefix) {
                        TextEnd::At(sample) => TextEnd::At(run.window_time(sample)),
                        TextEnd::Unknown => TextEnd::Unknown,
                    };
                    recovery.run_finished(window, end);
                    windows.finished(Ok(&u.text));
                    emit(DictationEvent::SegmentTranscribed {
                        id,
                        index: window,
                        text: u.text,
                        engine_ms: u.engine_ms,
                    });
                    // What the user sees while speaking: the runs made for
                    // the final text anyway, so it costs no extra run.
                    let live = windows.live_text();
                    emit(DictationEvent::PartialText {
                        id,
                        settled: live.settled,
                        tentative: live.tentative,
                    });
                }
                Err(e) if had_prefix && !cx.aborted => {
                    // Retried without the prefix; the user needs to know only if that fails too.
                    tracing::warn!("a dictation run with a transcript prefix failed: {e}");
                    windows.finished(Err(()));
                }
                Err(e) => {
                    windows.finished(Err(()));
                    if !cx.aborted {
                        tally.fail(&e, emit);
                    }
                }
            }
            self.submit_next(cx);
        }
    }

    /// Nothing is left to run or to wait for (a cancelled dictation waits
    /// only for the run in flight).
    pub fn settled(&self, aborted: bool) -> bool {
        match self {
            Self::Stream { stream, .. } => stream.is_none() || aborted,
            Self::OnRelease { reply, .. } => reply.is_none(),
            Self::Windows { reply, .. } if aborted => reply.is_none(),
            Self::Windows {
                windows, recovery, ..
            } => windows.is_done() && recovery.is_done(),
        }
    }

    pub fn text(&self) -> String {
        match self {
            Self::Windows { windows, .. } => windows.text(),
            Self::OnRelease { text, .. } | Self::Stream { text, .. } => {
                text.clone().unwrap_or_default()
            }
        }
    }

    /// How many pieces the text was found in.
    pub fn pieces(&self) -> usize {
        match self {
            Self::Windows { windows, .. } => windows.windows(),
            Self::OnRelease { text, .. } | Self::Stream { text, .. } => usize::from(text.is_some()),
        }
    }
}

/// The run's one utterance, if its reply has come.
fn try_result(run: &Run) -> Option<Result<Utterance, EngineError>> {
    run.try_result()
        .map(|r| r.map(|mut utterances| utterances.pop().unwrap_or_default()))
}

fn poll_stream(
    id: u64,
    stream: &mut Option<EngineStream>,
    text: &mut Option<String>,
    tally: &mut Tally,
    emit: &mut dyn FnMut(DictationEvent),
) {
    let Some(live) = stream else { return };
    let mut finished = false;
    for event in live.events().try_iter() {
        match event {
            StreamEvent::Partial {
                committed,
                tentative,
            } => emit(DictationEvent::PartialText {
                id,
                settled: committed,
                tentative,
            }),
            StreamEvent::Final(result) => {
                finished = true;
                let found = match result {
                    Ok(u) => {
                        tally.engine_ms += u.engine_ms;
                        u.text
                    }
                    Err(e) => {
                        tally.fail(&e, emit);
                        String::new()
                    }
                };
                emit(DictationEvent::SegmentTranscribed {
                    id,
                    index: 0,
                    text: found.clone(),
                    engine_ms: tally.engine_ms,
                });
                *text = Some(found);
            }
        }
    }
    if finished {
        *stream = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_strategy_lists_every_known_one() {
        let message = "fastest".parse::<LiveStrategy>().unwrap_err().to_string();
        for strategy in LiveStrategy::ALL {
            assert!(message.contains(strategy.as_str()), "{message}");
        }
    }

    fn model(run_cost: RunCost, streaming: bool) -> ModelInfo {
        ModelInfo {
            run_cost,
            streaming,
            ..ModelInfo::fake()
        }
    }

    #[test]
    fn each_kind_of_model_gets_the_strategy_that_measured_best() {
        let whisper = model(RunCost::Padded { window_ms: 30_000 }, false);
        let moonshine = model(RunCost::GrowsWithAudio, false);
        let streaming = model(RunCost::GrowsWithAudio, true);
        assert_eq!(
            LiveStrategy::for_model(&whisper),
            LiveStrategy::GrowingWindow
        );
        assert_eq!(
            LiveStrategy::for_model(&moonshine),
            LiveStrategy::ShortWindow
        );
        assert_eq!(
            LiveStrategy::for_model(&streaming),
            LiveStrategy::NativeStream
        );
    }

    #[test]
    fn a_chosen_strategy_is_kept_unless_the_model_cannot_run_it() {
        let moonshine = model(RunCost::GrowsWithAudio, false);
        assert_eq!(
            LiveStrategy::resolve(Some(LiveStrategy::GrowingWindow), &moonshine),
            Ok(LiveStrategy::GrowingWindow)
        );
        let err = LiveStrategy::resolve(Some(LiveStrategy::NativeStream), &moonshine).unwrap_err();
        assert!(err.to_string().contains("no streaming decoder"), "{err}");
    }

    #[test]
    fn strategies_are_named_in_kebab_case_both_ways() {
        for s in LiveStrategy::ALL {
            assert_eq!(s.as_str().parse::<LiveStrategy>(), Ok(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        let err = "growing".parse::<LiveStrategy>().unwrap_err();
        assert!(err.to_string().contains("per-span"), "{err}");
    }
}
