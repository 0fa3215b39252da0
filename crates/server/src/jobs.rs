//! Many clients, few engines: requests are admitted into a bounded queue
//! (past it, 503 + Retry-After), wait for one of `workers` slots, and run on
//! an engine worker process kept warm for the next request of that model.
//! A request whose client went away (its future dropped) cancels its run:
//! its decoder stops within a packet and its engine run at once, and its
//! worker slot is held until the work has really stopped, so the engines
//! at work never outnumber `--workers`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use utter_core::audio::AudioError;
use utter_core::transcribe::{transcribe_file_streamed, FileError, FileOptions};
use utter_core::transcript::FileTranscript;
use utter_engine::cpu::Threads;
use utter_engine::vad::SpeechDetector;
use utter_engine::{Engine, EngineConfig, EngineError, TimedText};

use crate::error::ApiError;

/// Seconds a client is told to wait when the queue is full.
const RETRY_AFTER_S: u32 = 5;

/// One transcription to run.
pub struct Job {
    pub model_name: String,
    pub model_path: PathBuf,
    /// The uploaded audio (a temporary file the request owns).
    pub audio: PathBuf,
    pub options: FileOptions,
    /// Told each segment as soon as it is settled (streamed responses).
    pub on_segment: Option<SegmentSink>,
}

pub type SegmentSink = Box<dyn FnMut(&TimedText) + Send>;

/// A place in the queue; dropping it frees the place.
pub struct Admission(#[allow(dead_code)] OwnedSemaphorePermit);

/// The engines and the queue in front of them.
pub struct Jobs {
    /// Places for jobs running or waiting.
    admitted: Arc<Semaphore>,
    /// One per engine worker that may compute at once.
    slots: Arc<Semaphore>,
    workers: usize,
    threads: Threads,
    /// Warm engines not in use, oldest first.
    idle: Mutex<Vec<(String, Arc<Engine>)>>,
    busy: AtomicUsize,
    vad_path: Option<PathBuf>,
    detectors: Mutex<Vec<SpeechDetector>>,
    /// The jobs at work, for a shutdown to stop them all.
    running: Mutex<Vec<Weak<CancelState>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Jobs {
    /// `workers` engines compute at once; `queue` more jobs may wait.
    /// Without a VAD model, files are cut into fixed windows.
    pub fn new(workers: usize, queue: usize, vad_path: Option<PathBuf>) -> Self {
        let workers = workers.max(1);
        Self {
            admitted: Arc::new(Semaphore::new(workers + queue)),
            slots: Arc::new(Semaphore::new(workers)),
            workers,
            threads: Threads::FitToLoad {
                max: (utter_engine::cpu::engine_threads() / workers).max(1),
            },
            idle: Mutex::new(Vec::new()),
            busy: AtomicUsize::new(0),
            vad_path,
            detectors: Mutex::new(Vec::new()),
            running: Mutex::new(Vec::new()),
        }
    }

    /// Stops every job at work (the server is ending): each decoder and
    /// engine run stops, and each client is told it was cancelled.
    pub fn cancel_all(&self) {
        let running: Vec<Arc<CancelState>> = lock(&self.running)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for job in running {
            job.cancel("the server is shutting down");
        }
        self.slots.close();
        self.admitted.close();
    }

    /// A place in the queue, or 503 when it is full.
    pub fn admit(&self) -> Result<Admission, ApiError> {
        self.admitted
            .clone()
            .try_acquire_owned()
            .map(Admission)
            .map_err(|_| ApiError::busy(RETRY_AFTER_S))
    }

    /// Loads `model` into a warm engine ahead of the first request.
    pub async fn prewarm(self: &Arc<Self>, name: String, path: PathBuf) -> Result<(), ApiError> {
        let jobs = self.clone();
        tokio::task::spawn_blocking(move || {
            let engine = jobs.start_engine(&path)?;
            lock(&jobs.idle).push((name, engine));
            Ok(())
        })
        .await
        .map_err(|e| ApiError::internal(format!("the engine start failed: {e}")))?
    }

    /// Runs `job` when a worker is free. Dropping the returned future (the
    /// client disconnected) cancels the engine's runs for it.
    pub async fn run(
        self: &Arc<Self>,
        admission: Admission,
        mut job: Job,
    ) -> Result<FileTranscript, ApiError> {
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError::unavailable("the server is shutting down"))?;
        let cancel = CancelOnDrop::default();
        let state = cancel.state.clone();
        job.options.cancel = Some(state.flag.clone());
        {
            let mut running = lock(&self.running);
            running.retain(|w| w.strong_count() > 0);
            running.push(Arc::downgrade(&state));
        }
        let jobs = self.clone();
        // The slot and the queue place go with the work, not with this
        // future: a client that leaves frees them when its job has stopped.
        let task = tokio::task::spawn_blocking(move || {
            let result = jobs.run_blocking(job, &state);
            drop((slot, admission));
            result
        });
        let result = task
            .await
            .map_err(|e| ApiError::internal(format!("the transcription task failed: {e}")))?;
        cancel.finished();
        result
    }

    fn run_blocking(&self, mut job: Job, cancel: &CancelState) -> Result<FileTranscript, ApiError> {
        let engine = self.take_engine(&job.model_name, &job.model_path)?;
        self.busy.fetch_add(1, Ordering::SeqCst);
        *lock(&cancel.engine) = Some(engine.clone());
        let result = if cancel.flag.load(Ordering::SeqCst) {
            Err(ApiError::internal(cancel.reason()))
        } else {
            self.transcribe_on(&engine, &mut job)
        };
        lock(&cancel.engine).take();
        self.busy.fetch_sub(1, Ordering::SeqCst);
        lock(&self.idle).push((job.model_name.clone(), engine));
        result
    }

    fn transcribe_on(&self, engine: &Engine, job: &mut Job) -> Result<FileTranscript, ApiError> {
        let info = engine.info();
        if job.options.translate && !info.translates {
            return Err(ApiError::invalid(
                "model",
                format!(
                    "`{}` cannot translate (English-only or no translation head).",
                    job.model_name
                ),
            ));
        }
        info.check_language(job.options.language.as_deref())
            .map_err(|e| {
                ApiError::invalid("language", format!("{e}.")).with_code("unsupported_language")
            })?;
        let mut detector = self.take_detector()?;
        let mut on_segment = job.on_segment.take();
        let result = transcribe_file_streamed(
            std::slice::from_ref(engine),
            detector.as_mut().into(),
            &job.audio,
            &job.model_name,
            &job.options,
            |_| {},
            |segment| {
                if let Some(sink) = on_segment.as_mut() {
                    sink(segment);
                }
            },
        );
        if let Some(d) = detector {
            lock(&self.detectors).push(d);
        }
        let transcript = result.map_err(|e| file_error(e, &job.options))?;
        if transcript.truncated {
            return Err(ApiError::invalid(
                "file",
                format!(
                    "The upload is cut off: {}. Send the whole file. Text of the part that could be decoded: {}",
                    transcript.warnings.join("; "),
                    transcript.text()
                ),
            )
            .with_code("truncated_audio"));
        }
        Ok(transcript)
    }

    /// A warm engine for `model`, or a new one; an idle engine of another
    /// model is stopped first when the workers' count is reached, so memory
    /// stays bounded by the worker count, not the request count.
    fn take_engine(&self, model: &str, path: &std::path::Path) -> Result<Arc<Engine>, ApiError> {
        {
            let mut idle = lock(&self.idle);
            if let Some(i) = idle.iter().position(|(name, _)| name == model) {
                return Ok(idle.remove(i).1);
            }
            while !idle.is_empty() && idle.len() + self.busy.load(Ordering::SeqCst) >= self.workers
            {
                idle.remove(0);
            }
        }
        self.start_engine(path)
    }

    fn start_engine(&self, path: &std::path::Path) -> Result<Arc<Engine>, ApiError> {
        Engine::start(EngineConfig {
            threads: self.threads,
            ..EngineConfig::new(path.to_path_buf())
        })
        .map(Arc::new)
        .map_err(|e| ApiError::internal(format!("The speech engine could not load the model: {e}")))
    }

    fn take_detector(&self) -> Result<Option<SpeechDetector>, ApiError> {
        let Some(path) = &self.vad_path else {
            return Ok(None);
        };
        if let Some(d) = lock(&self.detectors).pop() {
            return Ok(Some(d));
        }
        SpeechDetector::load(path)
            .map(Some)
            .map_err(|e| ApiError::internal(format!("The voice detector could not load: {e}")))
    }
}

fn file_error(e: FileError, options: &FileOptions) -> ApiError {
    match e {
        FileError::Audio { source, .. } => audio_error(source),
        FileError::Engine {
            source: EngineError::Cancelled,
            ..
        } => ApiError::internal(
            if options
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::SeqCst))
            {
                "cancelled: the client disconnected or the server is ending"
            } else {
                "cancelled"
            },
        ),
        FileError::Engine { source, .. } => ApiError::internal(format!(
            "The speech engine failed: {source}. Try the request again."
        )),
    }
}

fn audio_error(e: AudioError) -> ApiError {
    ApiError::invalid(
        "file",
        format!(
            "The file could not be read as audio: {e}. Send audio or video as flac, mp3, mp4, m4a, ogg, opus, wav or webm."
        ),
    )
    .with_code("invalid_audio")
}

#[derive(Default)]
struct CancelState {
    /// Read by the decoder between packets (`FileOptions::cancel`).
    flag: Arc<AtomicBool>,
    why: Mutex<Option<&'static str>>,
    engine: Mutex<Option<Arc<Engine>>>,
}

impl CancelState {
    fn cancel(&self, why: &'static str) {
        lock(&self.why).get_or_insert(why);
        self.flag.store(true, Ordering::SeqCst);
        if let Some(engine) = lock(&self.engine).as_ref() {
            tracing::info!("{why}: cancelling its transcription");
            engine.cancel_submitted();
        }
    }

    fn reason(&self) -> String {
        format!(
            "cancelled: {}",
            lock(&self.why).unwrap_or("the client disconnected")
        )
    }
}

/// Cancels the job's engine runs if the request's future is dropped before
/// the job finished (hyper drops it when the client disconnects).
#[derive(Default)]
struct CancelOnDrop {
    state: Arc<CancelState>,
    done: bool,
}

impl CancelOnDrop {
    fn finished(mut self) {
        self.done = true;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.state.cancel("client disconnected");
    }
}

/// The prefix of every upload's temporary file (HTTP and Wyoming).
const UPLOAD_PREFIX: &str = "utter-upload-";

/// A temporary file for an upload, locked while this process holds it, so
/// that [`remove_orphaned_uploads`] tells one of a crashed server (its lock
/// went with the process) from one in use by a server still running.
pub fn upload_temp_file(suffix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let temp = tempfile::Builder::new()
        .prefix(UPLOAD_PREFIX)
        .suffix(suffix)
        .tempfile()?;
    // Shared: Windows locks are mandatory, and the decoder reads the file by its name.
    temp.as_file()
        .try_lock_shared()
        .map_err(std::io::Error::other)?;
    Ok(temp)
}

/// Removes the upload files a killed server left in the temporary folder
/// (a crash skips their removal): those no process holds locked.
pub fn remove_orphaned_uploads() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(UPLOAD_PREFIX) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        if file.try_lock().is_ok() && std::fs::remove_file(&path).is_ok() {
            tracing::info!(
                "removed an upload a stopped server left: {}",
                path.display()
            );
        }
    }
}
