//! The engine worker: one thread owns the loaded speech model and its
//! session (the engine allows one compute at a time per model), and all
//! transcription requests reach it through a queue. Requests and replies are
//! plain owned data, so the worker could move into its own process later.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use transcribe_cpp::{CancelToken, Model, Role, RunOptions, SessionOptions, Task, TimestampKind};

/// Why the engine could not do what was asked. Worded for the user.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    #[error("{path}: cannot load model: {message}")]
    Load { path: PathBuf, message: String },
    #[error("transcription failed: {0}")]
    Run(String),
    #[error("transcription cancelled")]
    Cancelled,
    #[error("the engine worker stopped unexpectedly")]
    WorkerGone,
}

/// What a model file turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub arch: String,
    pub variant: String,
    pub is_vad: bool,
    pub is_speech: bool,
    pub languages: Vec<String>,
    pub detects_language: bool,
    /// The model has a native streaming decoder (moonshine_streaming,
    /// parakeet streaming variants, voxtral_realtime): live dictation feeds
    /// it audio directly instead of VAD segments.
    pub streaming: bool,
    pub translates: bool,
    pub load_ms: f64,
}

/// Loads a model on the best backend this build has (CUDA, Vulkan, Metal...);
/// if that fails (no driver, out of GPU memory), warns and loads on the CPU
/// instead of failing the dictation.
fn load_with_cpu_fallback(path: &Path) -> transcribe_cpp::Result<Model> {
    match Model::load(path) {
        Ok(m) => Ok(m),
        Err(e @ (transcribe_cpp::Error::Backend(_) | transcribe_cpp::Error::OutOfMemory(_))) => {
            tracing::warn!("GPU load failed ({e}); falling back to the CPU");
            let options = transcribe_cpp::ModelOptions {
                backend: transcribe_cpp::Backend::Cpu,
                ..Default::default()
            };
            Model::load_with(path, &options)
        }
        Err(e) => Err(e),
    }
}

/// Compute devices the engine sees: (kind, name, description).
pub fn compute_devices() -> Vec<(String, String, String)> {
    transcribe_cpp::devices()
        .into_iter()
        .map(|d| (d.kind, d.name, d.description))
        .collect()
}

impl ModelInfo {
    /// Checks a requested language against the model's own list, so a user
    /// gets a clear error instead of an engine failure mid-dictation.
    pub fn check_language(&self, language: Option<&str>) -> Result<(), String> {
        let Some(lang) = language else {
            return Ok(());
        };
        if self.languages.is_empty() || self.languages.iter().any(|l| l == lang) {
            return Ok(());
        }
        let mut list = self.languages.clone();
        list.truncate(30);
        Err(format!(
            "`{}` does not support language `{lang}` (it supports: {}{})",
            self.variant,
            list.join(", "),
            if self.languages.len() > 30 {
                ", ..."
            } else {
                ""
            }
        ))
    }
}

/// Loads a model file only to learn what it is (validation on import).
pub fn probe(path: &Path) -> Result<ModelInfo, EngineError> {
    let started = Instant::now();
    let model = Model::load(path).map_err(|e| EngineError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(describe(&model, started))
}

fn describe(model: &Model, started: Instant) -> ModelInfo {
    let roles = model.roles();
    let caps = model.capabilities().ok();
    ModelInfo {
        arch: model.arch(),
        variant: model.variant(),
        is_vad: roles.contains(Role::Vad),
        is_speech: roles.contains(Role::Asr),
        languages: caps
            .as_ref()
            .map(|c| c.languages.clone())
            .unwrap_or_default(),
        detects_language: caps.as_ref().is_some_and(|c| c.supports_language_detect),
        streaming: caps.as_ref().is_some_and(|c| c.supports_streaming),
        translates: caps.as_ref().is_some_and(|c| c.supports_translate),
        load_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}

/// Per-request settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunParams {
    /// ISO code, or `None` to let the model detect it (or use its only language).
    pub language: Option<String>,
    /// Translate into English instead of transcribing (models that can).
    pub translate: bool,
    /// Text spoken before this audio (Whisper's previous-context slot), so a
    /// long dictation reads as one text across its windows.
    pub prompt: Option<String>,
    /// Text already transcribed from the start of this audio: the model
    /// continues after it and returns only the continuation.
    pub prefix: Option<String>,
}

/// A piece of text with times relative to the audio it came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TimedText {
    pub start_ms: i64,
    pub end_ms: i64,
    pub text: String,
}

/// The engine's answer for one buffer of audio.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Utterance {
    pub text: String,
    pub segments: Vec<TimedText>,
    pub language: Option<String>,
    /// Encoder + decoder time the engine reported, in ms.
    pub engine_ms: f64,
    /// A problem the engine reported alongside usable partial text.
    pub warning: Option<String>,
}

type BatchReply = Result<Vec<Utterance>, EngineError>;

/// What a streaming transcription reports.
#[derive(Debug, Clone)]
pub enum StreamEvent {
    /// Text so far: `committed` will not change, `tentative` may.
    Partial {
        committed: String,
        tentative: String,
    },
    Final(Result<Utterance, EngineError>),
}

enum Request {
    Batch {
        pcms: Vec<Vec<f32>>,
        params: RunParams,
        reply: Sender<BatchReply>,
    },
    StreamBegin {
        params: RunParams,
        events: Sender<StreamEvent>,
    },
    StreamFeed(Vec<f32>),
    StreamFinish,
    StreamAbort,
}

/// Engine settings resolved at the edge.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model_path: PathBuf,
    /// CPU threads; 0 = the engine's default.
    pub threads: usize,
}

/// Handle to the worker. Dropping it stops the worker after queued work.
pub struct Engine {
    tx: Option<Sender<Request>>,
    cancel: CancelToken,
    info: ModelInfo,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Starts the worker and waits until the model is loaded.
    pub fn start(config: EngineConfig) -> Result<Self, EngineError> {
        let (tx, rx) = unbounded::<Request>();
        let (ready_tx, ready_rx) = bounded(1);
        let cancel = CancelToken::new();
        let worker_cancel = cancel.clone();
        let thread = std::thread::Builder::new()
            .name("utter-engine".into())
            .spawn(move || worker(config, rx, ready_tx, worker_cancel))
            .map_err(|e| EngineError::Run(format!("cannot start the engine thread: {e}")))?;
        let info = ready_rx.recv().map_err(|_| EngineError::WorkerGone)??;
        Ok(Self {
            tx: Some(tx),
            cancel,
            info,
            thread: Some(thread),
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Queues buffers (16 kHz mono) for transcription; the reply arrives on the receiver.
    pub fn submit(&self, pcms: Vec<Vec<f32>>, params: RunParams) -> Receiver<BatchReply> {
        let (reply, rx) = bounded(1);
        let request = Request::Batch {
            pcms,
            params,
            reply,
        };
        if let Some(tx) = &self.tx {
            // A send error means the worker died; the dropped reply sender reports it.
            let _ = tx.send(request);
        }
        rx
    }

    /// Transcribes buffers and waits for the result.
    pub fn transcribe(&self, pcms: Vec<Vec<f32>>, params: RunParams) -> BatchReply {
        self.submit(pcms, params)
            .recv()
            .map_err(|_| EngineError::WorkerGone)?
    }

    /// Starts a streaming transcription (only for models whose
    /// [`ModelInfo::streaming`] is true); feed it with [`Engine::stream_feed`].
    pub fn stream_begin(&self, params: RunParams) -> Receiver<StreamEvent> {
        let (events, rx) = unbounded();
        self.send(Request::StreamBegin { params, events });
        rx
    }

    pub fn stream_feed(&self, pcm: Vec<f32>) {
        self.send(Request::StreamFeed(pcm));
    }

    /// Flushes the stream; the final text arrives as `StreamEvent::Final`.
    pub fn stream_finish(&self) {
        self.send(Request::StreamFinish);
    }

    pub fn stream_abort(&self) {
        self.send(Request::StreamAbort);
    }

    fn send(&self, request: Request) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(request);
        }
    }

    /// Aborts the run in progress (its reply is `Cancelled`); later requests run normally.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

#[cfg(test)]
impl Engine {
    /// An engine whose worker answers each batch buffer with `answer(pcm)`
    /// (after `delay`), so the dictation service can be tested without a model.
    pub(crate) fn fake(
        delay: std::time::Duration,
        answer: impl Fn(&[f32]) -> String + Send + 'static,
    ) -> Self {
        let (tx, rx) = unbounded::<Request>();
        let thread = std::thread::spawn(move || {
            for request in rx {
                if let Request::Batch {
                    pcms,
                    reply,
                    params,
                } = request
                {
                    std::thread::sleep(delay);
                    let utterances = pcms
                        .iter()
                        .map(|pcm| {
                            let text = answer(pcm);
                            // Like the real engine: only what follows the prefix.
                            let prefix = params.prefix.as_deref().unwrap_or("");
                            let text = text.strip_prefix(prefix).unwrap_or(&text).trim();
                            Utterance {
                                text: text.to_string(),
                                ..Default::default()
                            }
                        })
                        .collect();
                    let _ = reply.send(Ok(utterances));
                }
            }
        });
        Self {
            tx: Some(tx),
            cancel: CancelToken::new(),
            info: ModelInfo {
                arch: "fake".into(),
                variant: "fake".into(),
                is_vad: false,
                is_speech: true,
                languages: vec!["en".into()],
                detects_language: false,
                streaming: false,
                translates: false,
                load_ms: 0.0,
            },
            thread: Some(thread),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn worker(
    config: EngineConfig,
    rx: Receiver<Request>,
    ready: Sender<Result<ModelInfo, EngineError>>,
    cancel: CancelToken,
) {
    let started = Instant::now();
    let load_error = |e: transcribe_cpp::Error| EngineError::Load {
        path: config.model_path.clone(),
        message: e.to_string(),
    };
    let model = match load_with_cpu_fallback(&config.model_path) {
        Ok(m) => m,
        Err(e) => {
            let _ = ready.send(Err(load_error(e)));
            return;
        }
    };
    let info = describe(&model, started);
    if !info.is_speech {
        let _ = ready.send(Err(EngineError::Load {
            path: config.model_path.clone(),
            message: format!(
                "`{}` is a {} model, not a speech-to-text model",
                info.variant, info.arch
            ),
        }));
        return;
    }
    let options = SessionOptions {
        n_threads: config.threads as i32,
        ..Default::default()
    };
    let mut session = match model.session_with(&options) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(load_error(e)));
            return;
        }
    };
    session.set_cancel_token(&cancel);
    let _ = ready.send(Ok(info));

    // Requests that arrive while a stream is open wait here (one compute at a time).
    let mut backlog: VecDeque<Request> = VecDeque::new();
    while let Some(request) = backlog.pop_front().or_else(|| rx.recv().ok()) {
        match request {
            Request::Batch {
                pcms,
                params,
                reply,
            } => {
                let result = run_batch(&mut session, &pcms, &params);
                cancel.reset();
                let _ = reply.send(result);
            }
            Request::StreamBegin { params, events } => {
                run_stream(&mut session, &params, &rx, &events, &mut backlog);
                cancel.reset();
            }
            // Stray stream messages (after an abort or a failed begin).
            Request::StreamFeed(_) | Request::StreamFinish | Request::StreamAbort => {}
        }
    }
}

/// Runs one stream until it is finished or aborted.
fn run_stream(
    session: &mut transcribe_cpp::Session,
    params: &RunParams,
    rx: &Receiver<Request>,
    events: &Sender<StreamEvent>,
    backlog: &mut VecDeque<Request>,
) {
    let options = RunOptions {
        language: params.language.clone(),
        ..Default::default()
    };
    let fail = |e: transcribe_cpp::Error| {
        let _ = events.send(StreamEvent::Final(Err(EngineError::Run(e.to_string()))));
    };
    let mut stream = match session.stream(&options, &transcribe_cpp::StreamOptions::default()) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    for request in rx.iter() {
        match request {
            Request::StreamFeed(pcm) => match stream.feed(&pcm) {
                Ok(update) if update.result_changed => {
                    let text = stream.text();
                    let _ = events.send(StreamEvent::Partial {
                        committed: text.committed,
                        tentative: text.tentative,
                    });
                }
                Ok(_) => {}
                Err(e) => return fail(e),
            },
            Request::StreamFinish => {
                if let Err(e) = stream.finalize() {
                    return fail(e);
                }
                let _ = events.send(StreamEvent::Final(to_utterance(Ok(stream.snapshot()))));
                return;
            }
            Request::StreamAbort => return,
            other => backlog.push_back(other),
        }
    }
}

fn run_batch(
    session: &mut transcribe_cpp::Session,
    pcms: &[Vec<f32>],
    params: &RunParams,
) -> BatchReply {
    let options = RunOptions {
        language: params.language.clone(),
        // A transcript prefix does not compose with segment timestamps (the
        // engine rejects it); dictation, which uses it, needs none.
        timestamps: if params.prefix.is_some() {
            TimestampKind::Auto
        } else {
            TimestampKind::Segment
        },
        task: if params.translate {
            Task::Translate
        } else {
            Task::Transcribe
        },
        target_language: params.translate.then(|| "en".to_string()),
        prompt: params.prompt.clone(),
        prefix: params.prefix.clone(),
        ..Default::default()
    };
    let slices: Vec<&[f32]> = pcms.iter().map(Vec::as_slice).collect();
    // A single buffer goes through `run`; the batch path has per-call overhead.
    let results = if slices.len() == 1 {
        vec![session.run(slices[0], &options)]
    } else {
        session
            .run_batch(&slices, &options)
            .map_err(|e| EngineError::Run(e.to_string()))?
    };
    results.into_iter().map(to_utterance).collect()
}

fn to_utterance(
    result: transcribe_cpp::Result<transcribe_cpp::Transcript>,
) -> Result<Utterance, EngineError> {
    let (transcript, warning) = match result {
        Ok(t) => (t, None),
        Err(e @ transcribe_cpp::Error::Aborted { .. }) => {
            let _ = e;
            return Err(EngineError::Cancelled);
        }
        // Truncated or repeating output still carries usable text.
        Err(e) => match e.partial() {
            Some(p) => (p.clone(), Some(e.to_string())),
            None => return Err(EngineError::Run(e.to_string())),
        },
    };
    let segments = transcript
        .segments
        .iter()
        .filter(|s| !s.text.trim().is_empty())
        .map(|s| TimedText {
            start_ms: s.t0_ms,
            end_ms: s.t1_ms,
            text: s.text.trim().to_string(),
        })
        .collect();
    let t = transcript.timings;
    Ok(Utterance {
        text: transcript.text.trim().to_string(),
        segments,
        language: transcript.language.clone(),
        engine_ms: (t.mel_ms + t.encode_ms + t.decode_ms) as f64,
        warning,
    })
}
