//! utter-engine: the speech engine behind one handle. By default it runs in a worker
//! process (a child re-executing this binary), so an engine crash (ggml
//! reports many failures by `abort()`) cannot take the app or CLI down: the
//! supervisor restarts the worker and sends the request again. Tests and
//! binaries that cannot act as a worker run it in a thread instead; the API
//! is the same either way.
//!
//! - `local`: the model and session in a thread (also what the worker runs)
//! - `protocol`: the framed messages between supervisor and worker
//! - `worker`: the worker process's side
//! - `supervisor`: the parent's side: restart, resubmit, CPU fallback, idle unload
//! - `cpu`: the CPU's code path and the default thread count
//! - `cpu_load`, `fitted_session`: the threads fitted to what other programs leave free
//! - [`vad`]: the voice detector (Silero in its own worker, `vad_model`, `vad_host`) and the segmenter

mod backends;
mod compute;
pub mod cpu;
pub mod cpu_load;
pub mod diarize_model;
mod fitted_session;
mod local;
pub use compute::{gpu_backends_built, BadCompute, Compute};
pub use local::{fit_vocabulary, VOCABULARY_TOKEN_BUDGET};
mod protocol;
mod run;
mod supervisor;
pub mod vad;
mod vad_host;
mod vad_model;
pub mod worker;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use serde::{Deserialize, Serialize};
use transcribe_cpp::{Model, Role};

use run::{Canceller, RunGate};
pub use run::{Run, RunId};
pub use vad_host::VadHost;
pub use vad_model::SileroVad;

/// The sample rate every model and the voice detector take (16 kHz mono).
pub const ENGINE_RATE: u32 = 16_000;

/// Routes the engine's native log lines into `log`/`tracing` instead of stderr.
pub fn quiet_native_logs() {
    transcribe_cpp::disable_logging();
}

/// Why the engine could not do what was asked. Worded for the user.
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize)]
pub enum EngineError {
    #[error("{path}: cannot load model: {message}")]
    Load { path: PathBuf, message: String },
    #[error("transcription failed: {0}")]
    Run(String),
    #[error("transcription cancelled")]
    Cancelled,
    #[error("the engine worker stopped unexpectedly")]
    WorkerGone,
    #[error("there is no compute device `{name}` (this build and machine have: {})", available.join(", "))]
    NoDevice {
        name: String,
        available: Vec<String>,
    },
    /// The worker process died on this request twice (each time restarted).
    #[error("the speech engine crashed twice on this audio ({0}); nothing is lost: try again, or use another model")]
    Crashed(String),
}

/// What a model file turned out to be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Custom vocabulary reaches the model (`RunParams::vocabulary`).
    pub takes_vocabulary: bool,
    /// Text spoken before (`RunParams::prompt`) reaches the model.
    #[serde(default)]
    pub takes_prompt: bool,
    /// Text already transcribed (`RunParams::prefix`) can be forced as the
    /// start of the output.
    #[serde(default)]
    pub takes_prefix: bool,
    /// The finest timestamps the model gives.
    #[serde(default)]
    pub timestamps: Timestamps,
    /// Longest audio one run accepts, in ms; 0 = no limit the model states.
    #[serde(default)]
    pub max_audio_ms: i64,
    /// What a run costs: this decides how audio is cut into runs.
    #[serde(default)]
    pub run_cost: RunCost,
    pub load_ms: f64,
    /// Where the model runs: `cpu`, `vulkan`, `cuda`, `metal`...
    #[serde(default)]
    pub backend: String,
    /// Why a GPU build runs this model on the CPU under `Compute::Auto`
    /// (no device found, the GPU failed to load it); `None` otherwise.
    #[serde(default)]
    pub fallback: Option<String>,
    /// The device it runs on, as `NAME: description` (`CPU: AMD EPYC…`,
    /// `Vulkan0: llvmpipe…`).
    #[serde(default)]
    pub device: String,
}

/// The finest timestamps a model gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timestamps {
    /// Text only: cues come from the speech spans the VAD found.
    #[default]
    None,
    Segment,
    Word,
    Token,
}

impl From<transcribe_cpp::TimestampKind> for Timestamps {
    fn from(kind: transcribe_cpp::TimestampKind) -> Self {
        use transcribe_cpp::TimestampKind as K;
        match kind {
            K::Segment => Self::Segment,
            K::Word => Self::Word,
            K::Token => Self::Token,
            K::None | K::Auto => Self::None,
        }
    }
}

/// How a run's cost grows with its audio.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunCost {
    /// Every run costs as much as `window_ms` of audio (Whisper pads each
    /// call to 30 s): short pieces of speech are packed into full windows.
    Padded { window_ms: i64 },
    /// The cost follows the audio's length (Moonshine, Parakeet...): each
    /// piece of speech gets its own run, cut only at the model's limit.
    #[default]
    GrowsWithAudio,
}

/// Whisper's fixed input: every call pads (or cuts) the audio to 30 s.
pub const WHISPER_WINDOW_MS: i64 = 30_000;

/// Where runs stop when a model states no limit: long enough for any
/// sentence, short enough that one run's memory and latency stay bounded.
pub const UNSTATED_LIMIT_MS: i64 = 30_000;

impl ModelInfo {
    /// The longest audio to give one run: the padded window, else the
    /// model's own limit, else [`UNSTATED_LIMIT_MS`].
    pub fn window_ms(&self) -> i64 {
        match self.run_cost {
            RunCost::Padded { window_ms } => window_ms,
            RunCost::GrowsWithAudio if self.max_audio_ms > 0 => {
                self.max_audio_ms.min(UNSTATED_LIMIT_MS)
            }
            RunCost::GrowsWithAudio => UNSTATED_LIMIT_MS,
        }
    }
}

/// The GPU with the most memory that the engine can use: (name, bytes).
pub fn largest_gpu() -> Option<(String, u64)> {
    backends::ensure_loaded().ok()?;
    transcribe_cpp::devices()
        .into_iter()
        .filter(|d| {
            matches!(
                d.device_type,
                transcribe_cpp::DeviceType::Gpu | transcribe_cpp::DeviceType::Igpu
            )
        })
        .max_by_key(|d| d.memory_total)
        .map(|d| (d.description, d.memory_total))
}

/// A compute device the engine can load a model on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ComputeDevice {
    /// `cpu`, `vulkan`, `cuda`, `metal`...
    pub kind: String,
    /// What `--compute` and the settings take (`CPU`, `Vulkan0`...).
    pub name: String,
    pub description: String,
}

/// Compute devices the engine sees in this build and machine.
pub fn compute_devices() -> Vec<ComputeDevice> {
    if let Err(e) = backends::ensure_loaded() {
        tracing::warn!("{e}");
        return vec![];
    }
    transcribe_cpp::devices()
        .into_iter()
        .map(|d| ComputeDevice {
            kind: d.kind,
            name: d.name,
            description: d.description,
        })
        .collect()
}

impl ModelInfo {
    /// Checks a requested language against the model's own list, so a user
    /// gets a clear error instead of an engine failure mid-dictation.
    pub fn check_language(&self, language: Option<&str>) -> Result<(), UnsupportedLanguage> {
        let Some(lang) = language else {
            return Ok(());
        };
        if self.languages.is_empty() || self.languages.iter().any(|l| l == lang) {
            return Ok(());
        }
        Err(UnsupportedLanguage {
            model: self.variant.clone(),
            language: lang.to_string(),
            supported: self.languages.clone(),
        })
    }
}

/// A language the model was not trained on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{model}` does not support language `{language}` (it supports: {})",
    shortlist(supported)
)]
pub struct UnsupportedLanguage {
    pub model: String,
    pub language: String,
    pub supported: Vec<String>,
}

/// The first 30 languages, then "...": a multilingual model knows ~100.
fn shortlist(languages: &[String]) -> String {
    let mut list = languages[..languages.len().min(30)].join(", ");
    if languages.len() > 30 {
        list.push_str(", ...");
    }
    list
}

/// Loads a model file only to learn what it is (validation on import), in a
/// worker process where this binary can start one.
pub fn probe(path: &Path) -> Result<ModelInfo, EngineError> {
    match EngineHost::for_this_process() {
        EngineHost::Process { exe, .. } => supervisor::probe_in_worker(&exe, path),
        EngineHost::Thread => probe_here(path),
    }
}

fn probe_here(path: &Path) -> Result<ModelInfo, EngineError> {
    let started = Instant::now();
    backends::ensure_loaded().map_err(|e| EngineError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let model = Model::load(path).map_err(|e| EngineError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(describe(&model, started))
}

fn describe(model: &Model, started: Instant) -> ModelInfo {
    let roles = model.roles();
    let caps = model.capabilities().ok();
    let device = model.device();
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
        takes_vocabulary: model.supports(transcribe_cpp::Feature::Vocabulary),
        takes_prompt: model.supports(transcribe_cpp::Feature::ContextPrompt),
        takes_prefix: model.supports(transcribe_cpp::Feature::TranscriptPrefix),
        timestamps: caps
            .as_ref()
            .map_or(Timestamps::None, |c| c.max_timestamp_kind.into()),
        max_audio_ms: caps.as_ref().map_or(0, |c| c.max_audio_ms.max(0)),
        run_cost: run_cost_of(&model.arch()),
        load_ms: started.elapsed().as_secs_f64() * 1000.0,
        // The device's kind (`vulkan`), not its name (`Vulkan0`).
        backend: device.as_ref().map_or_else(
            |_| model.backend().to_ascii_lowercase(),
            |d| d.kind.to_ascii_lowercase(),
        ),
        fallback: None,
        device: device
            .map(|d| format!("{}: {}", d.name, d.description))
            .unwrap_or_default(),
    }
}

/// Whisper's encoder takes a fixed 30 s of mel frames whatever the input
/// (the engine offers no `audio_ctx`); the other families' encoders take the
/// audio's own length.
fn run_cost_of(arch: &str) -> RunCost {
    if arch == "whisper" {
        RunCost::Padded {
            window_ms: WHISPER_WINDOW_MS,
        }
    } else {
        RunCost::GrowsWithAudio
    }
}

/// Once per engine, not at every restart: a GPU build that loaded on the CPU.
fn tell_fallback(info: &ModelInfo, notices: &Sender<EngineNotice>) {
    if let Some(reason) = &info.fallback {
        let _ = notices.send(EngineNotice::LoadedOnCpu {
            reason: reason.clone(),
        });
    }
}

/// Per-request settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// The user's words, most important first (Whisper: a glossary in the
    /// previous-context slot; the engine drops what does not fit, from the
    /// end). Ignored by models without `ModelInfo::takes_vocabulary`.
    pub vocabulary: Vec<String>,
}

/// A piece of text with times relative to the audio it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedText {
    pub start_ms: i64,
    pub end_ms: i64,
    pub text: String,
}

/// The engine's answer for one buffer of audio.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Utterance {
    pub text: String,
    pub segments: Vec<TimedText>,
    pub language: Option<String>,
    /// Encoder + decoder time the engine reported, in ms.
    pub engine_ms: f64,
    /// A problem the engine reported alongside usable partial text.
    pub warning: Option<String>,
    /// The model stopped before the end of the audio (its output limit):
    /// the text covers only the start. Files split such a run and run the
    /// halves again.
    #[serde(default)]
    pub truncated: bool,
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

/// Something the engine did on its own that the user should hear about once.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EngineNotice {
    /// The worker process died and was restarted; the request in flight was
    /// sent again.
    Restarted { reason: String },
    /// The worker died while running on the GPU: it was restarted on the CPU,
    /// which this engine uses from now on.
    FellBackToCpu { reason: String },
    /// Auto found no GPU that could take the model, in a build made for one:
    /// the model was loaded on the CPU.
    LoadedOnCpu { reason: String },
}

impl std::fmt::Display for EngineNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Restarted { reason } => {
                write!(f, "the speech engine stopped ({reason}) and was restarted")
            }
            Self::FellBackToCpu { reason } => write!(
                f,
                "the speech engine failed on the GPU ({reason}); it now runs on the CPU until Utter restarts"
            ),
            Self::LoadedOnCpu { reason } => {
                write!(f, "the speech engine runs on the CPU: {reason}")
            }
        }
    }
}

enum Request {
    Batch {
        run: RunId,
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
    /// Load the model now if it was unloaded while idle.
    Prewarm,
}

/// Where the engine runs.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineHost {
    /// A thread of this process: a crash of the engine ends the process.
    Thread,
    /// A worker process: `exe` started with [`worker::WORKER_ARG`].
    Process {
        exe: PathBuf,
        /// Stop the worker (giving its memory back) after this long without
        /// work; the next request or [`Engine::prewarm`] starts it again.
        idle_unload: Option<Duration>,
    },
}

impl EngineHost {
    /// A worker process when this binary can serve as one (its `main` called
    /// [`worker::serve_if_worker`]), unless `UTTER_ENGINE_IN_PROCESS=1` asks
    /// for a thread (benchmarks compare the two).
    pub fn for_this_process() -> Self {
        match worker::worker_binary() {
            Some(exe) => Self::Process {
                exe,
                idle_unload: None,
            },
            None => Self::Thread,
        }
    }

    /// The same host, unloading the model after `idle` without work (worker
    /// processes only; `None` keeps it loaded).
    pub fn with_idle_unload(self, idle: Option<Duration>) -> Self {
        match self {
            Self::Process { exe, .. } => Self::Process {
                exe,
                idle_unload: idle,
            },
            Self::Thread => Self::Thread,
        }
    }
}

/// Engine settings resolved at the edge.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model_path: PathBuf,
    /// CPU threads.
    pub threads: cpu::Threads,
    pub host: EngineHost,
    /// Where the model runs.
    pub compute: Compute,
    /// How its worker process is scheduled against the rest of the machine.
    pub priority: Priority,
}

/// How an engine's worker process is scheduled. Worker processes only: an
/// engine on a thread of this process runs as the process does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Priority {
    /// As the app itself: a dictation, whose text the user is waiting for.
    #[default]
    Normal,
    /// Below the user's own work (nice 10 on Unix; the below-normal priority
    /// class on Windows): a meeting's live transcript, which must not slow a
    /// push-to-talk dictation or the apps the user is working in.
    Background,
}

impl EngineConfig {
    /// The engine's default threads, hosted as [`EngineHost::for_this_process`].
    pub fn new(model_path: PathBuf) -> Self {
        Self {
            model_path,
            threads: cpu::Threads::from_setting(0),
            host: EngineHost::for_this_process(),
            compute: Compute::Auto,
            priority: Priority::Normal,
        }
    }
}

/// Handle to the engine. Dropping it stops the engine after queued work.
pub struct Engine {
    tx: Option<Sender<Request>>,
    /// How runs are cancelled: the engine thread's gate, or a message to
    /// the worker process's supervisor.
    canceller: Canceller,
    next_run: AtomicU64,
    info: ModelInfo,
    notices: Receiver<EngineNotice>,
    /// Set by the supervisor when a GPU failure moved the work to the CPU.
    fell_back: Arc<AtomicBool>,
    /// After how long without work the worker's model is unloaded.
    idle_unload: Option<Duration>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Starts the engine and waits until the model is loaded.
    pub fn start(config: EngineConfig) -> Result<Self, EngineError> {
        match config.host.clone() {
            EngineHost::Thread => {
                let gate = Arc::new(RunGate::default());
                let (tx, loaded, thread) = local::start(config, false, gate.clone())?;
                let (notice_tx, notices) = unbounded();
                tell_fallback(&loaded.info, &notice_tx);
                Ok(Self {
                    tx: Some(tx),
                    canceller: Canceller::Gate(gate),
                    next_run: AtomicU64::new(1),
                    info: loaded.info,
                    notices,
                    fell_back: Arc::default(),
                    idle_unload: None,
                    thread: Some(thread),
                })
            }
            EngineHost::Process { exe, idle_unload } => {
                let (notice_tx, notices) = unbounded();
                let fell_back = Arc::<AtomicBool>::default();
                let supervisor::Started {
                    requests: tx,
                    cancels,
                    info,
                    thread,
                } = supervisor::start(
                    config,
                    exe,
                    idle_unload,
                    notice_tx.clone(),
                    fell_back.clone(),
                )?;
                tell_fallback(&info, &notice_tx);
                Ok(Self {
                    tx: Some(tx),
                    canceller: Canceller::Message(cancels),
                    next_run: AtomicU64::new(1),
                    info,
                    notices,
                    fell_back,
                    idle_unload,
                    thread: Some(thread),
                })
            }
        }
    }

    /// The model as loaded; [`Engine::backend`] and [`Engine::device`]
    /// say where it runs now.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// After how long without work the model is unloaded (worker
    /// processes only); the voice detector follows it.
    pub fn idle_unload(&self) -> Option<Duration> {
        self.idle_unload
    }

    /// Where the model runs now: as loaded, or `cpu` after a GPU failure.
    pub fn backend(&self) -> String {
        match self.fell_back.load(Ordering::Relaxed) {
            true => "cpu".into(),
            false => self.info.backend.clone(),
        }
    }

    /// The device it runs on now (`NAME: description`, or `CPU` after a GPU failure).
    pub fn device(&self) -> String {
        match self.fell_back.load(Ordering::Relaxed) {
            true => "CPU".into(),
            false => self.info.device.clone(),
        }
    }

    /// Restarts and CPU fallbacks since the last call, to tell the user.
    pub fn notices(&self) -> Vec<EngineNotice> {
        self.notices.try_iter().collect()
    }

    /// Queues buffers (16 kHz mono) for transcription, as one run: its
    /// reply comes through the handle, which can also cancel it.
    pub fn submit(&self, pcms: Vec<Vec<f32>>, params: RunParams) -> Run {
        let run = self.next_run.fetch_add(1, Ordering::Relaxed);
        let (reply, rx) = bounded(1);
        // A send error means the worker died; the dropped reply sender reports it.
        self.send(Request::Batch {
            run,
            pcms,
            params,
            reply,
        });
        Run::new(run, rx, self.canceller.clone())
    }

    /// Cancels every run submitted so far, queued or running (a file's
    /// job is cancelled); runs submitted after this are not touched.
    pub fn cancel_submitted(&self) {
        let last = self.next_run.load(Ordering::Relaxed).saturating_sub(1);
        self.canceller.cancel_through(last);
    }

    /// Transcribes buffers and waits for the result.
    pub fn transcribe(&self, pcms: Vec<Vec<f32>>, params: RunParams) -> BatchReply {
        self.submit(pcms, params).wait()
    }

    /// Starts a streaming transcription (only for models whose
    /// [`ModelInfo::streaming`] is true): the handle feeds, finishes or
    /// aborts it, and its partial and final text arrive on
    /// [`Stream::events`] (like [`Engine::submit`]'s [`Run`] for a batch).
    pub fn stream(&self, params: RunParams) -> Stream {
        let (events, rx) = unbounded();
        self.send(Request::StreamBegin { params, events });
        Stream {
            events: rx,
            requests: self.tx.clone(),
        }
    }

    /// Loads the model now if it was unloaded while idle, so the load
    /// overlaps the user's speech (a dictation calls this on the key press).
    pub fn prewarm(&self) {
        self.send(Request::Prewarm);
    }

    fn send(&self, request: Request) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(request);
        }
    }
}

// Stand-ins for other crates' tests (feature `test-support`, a dev-dependency
// feature only: release builds never have them).
#[cfg(any(test, feature = "test-support"))]
impl ModelInfo {
    /// A Whisper-like speech model for tests: padded 30 s runs, a
    /// transcript prefix, segment timestamps, English.
    pub fn fake() -> Self {
        Self {
            arch: "fake".into(),
            variant: "fake".into(),
            is_vad: false,
            is_speech: true,
            languages: vec!["en".into()],
            detects_language: false,
            streaming: false,
            translates: false,
            takes_vocabulary: false,
            takes_prompt: false,
            takes_prefix: true,
            timestamps: Timestamps::Segment,
            max_audio_ms: 0,
            run_cost: RunCost::Padded {
                window_ms: WHISPER_WINDOW_MS,
            },
            load_ms: 0.0,
            backend: "cpu".into(),
            fallback: None,
            device: "CPU: fake".into(),
        }
    }
}

#[cfg(any(test, feature = "test-support"))]
impl Engine {
    /// An engine whose worker answers each batch buffer with `answer(pcm)`
    /// (after `delay`), so the dictation service can be tested without a
    /// model; when `streaming`, it is a streaming model: each fed chunk
    /// brings a partial of all the audio so far, the finish its final text.
    pub fn fake_with(
        delay: std::time::Duration,
        streaming: bool,
        answer: impl Fn(&[f32]) -> Result<String, EngineError> + Send + 'static,
    ) -> Self {
        let (tx, rx) = unbounded::<Request>();
        let thread = std::thread::spawn(move || {
            let mut stream: Option<(Sender<StreamEvent>, Vec<f32>)> = None;
            for request in rx {
                match request {
                    Request::Batch {
                        pcms,
                        reply,
                        params,
                        ..
                    } => {
                        std::thread::sleep(delay);
                        let utterances = pcms
                            .iter()
                            .map(|pcm| {
                                let text = answer(pcm)?;
                                // Like the real engine: only what follows the prefix.
                                let prefix = params.prefix.as_deref().unwrap_or("");
                                let text = text.strip_prefix(prefix).unwrap_or(&text).trim();
                                Ok(Utterance {
                                    text: text.to_string(),
                                    ..Default::default()
                                })
                            })
                            .collect();
                        let _ = reply.send(utterances);
                    }
                    Request::StreamBegin { events, .. } => stream = Some((events, Vec::new())),
                    Request::StreamFeed(pcm) => {
                        if let Some((events, heard)) = stream.as_mut() {
                            heard.extend(pcm);
                            let _ = events.send(StreamEvent::Partial {
                                committed: String::new(),
                                tentative: answer(heard).unwrap_or_default(),
                            });
                        }
                    }
                    Request::StreamFinish => {
                        if let Some((events, heard)) = stream.take() {
                            std::thread::sleep(delay);
                            let text = answer(&heard).map(|text| Utterance {
                                text,
                                ..Default::default()
                            });
                            let _ = events.send(StreamEvent::Final(text));
                        }
                    }
                    Request::StreamAbort => stream = None,
                    Request::Prewarm => {}
                }
            }
        });
        Self {
            tx: Some(tx),
            canceller: Canceller::Gate(Arc::default()),
            next_run: AtomicU64::new(1),
            info: ModelInfo {
                streaming,
                ..ModelInfo::fake()
            },
            notices: crossbeam_channel::never(),
            fell_back: Arc::default(),
            idle_unload: None,
            thread: Some(thread),
        }
    }
}

/// How long dropping an engine waits for its owner thread to stop the
/// worker. A run still in flight (or a worker that does not exit) must not
/// hold up a shutdown: the thread goes on without us, and the worker ends
/// with it or, at the latest, when this process exits (its stdin closes).
const STOP_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

impl Drop for Engine {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            utter_base::threads::join_within(t, STOP_WITHIN, "the engine's supervisor");
        }
    }
}

/// A streaming transcription in flight, from [`Engine::stream`]. Dropping
/// it does not end the stream: [`Stream::finish`] asks for the final text,
/// [`Stream::abort`] discards it.
pub struct Stream {
    events: Receiver<StreamEvent>,
    /// The engine's request queue (`None` once the engine has shut down).
    requests: Option<Sender<Request>>,
}

impl Stream {
    /// Audio (16 kHz mono) as it arrives.
    pub fn feed(&self, pcm: Vec<f32>) {
        self.send(Request::StreamFeed(pcm));
    }

    /// No more audio: the final text arrives as `StreamEvent::Final`.
    pub fn finish(&self) {
        self.send(Request::StreamFinish);
    }

    /// Ends the stream without its text.
    pub fn abort(self) {
        self.send(Request::StreamAbort);
    }

    /// Partial text while it runs, then one `StreamEvent::Final`.
    pub fn events(&self) -> &Receiver<StreamEvent> {
        &self.events
    }

    fn send(&self, request: Request) {
        if let Some(tx) = &self.requests {
            // A send error means the worker died; its supervisor reports it.
            let _ = tx.send(request);
        }
    }
}
