//! The voice detector in a worker process of its own, inside the same crash
//! boundary as the speech model: a ggml `abort()` in Silero ends that worker,
//! not the app. Calls are synchronous (a chunk's scores take well under a
//! millisecond); a worker that dies or stops answering is restarted and the
//! call sent again once. The restarted detector starts a fresh stream: the
//! frames around the fault are scored without the ones before them, which
//! Silero recovers from within a few frames, and the dictation's audio is on
//! disk before the detector sees it either way.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::protocol::{write_frame, FromWorker, ToWorker};
use super::supervisor::{describe_exit, spawn_process, Spawned};
use super::worker::VAD_WORKER_ARG;
use super::EngineError;

/// Calls to voice detector workers over this process's life:
/// `UTTER_VAD_FAULT` names them (a restarted worker does not repeat a fault).
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Loading Silero takes milliseconds; this is for a machine under load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);
/// A chunk's scores take under a millisecond; a worker this late is hung.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The parent's end of a voice detector worker.
pub struct VadHost {
    exe: PathBuf,
    model_path: PathBuf,
    /// `None` after a failure or an idle unload, until the next call (or
    /// a prewarm) starts a worker.
    worker: Option<Spawned>,
    /// Restarts not yet told to the user.
    notices: Vec<String>,
}

impl VadHost {
    /// Starts a worker from `exe` with the detector in `model_path`.
    pub fn start(exe: &Path, model_path: &Path) -> Result<Self, EngineError> {
        let mut host = Self {
            exe: exe.to_path_buf(),
            model_path: model_path.to_path_buf(),
            worker: None,
            notices: Vec::new(),
        };
        host.worker = Some(host.spawn()?);
        Ok(host)
    }

    /// Ends the worker and frees its memory; the next call starts a fresh
    /// one. False when none was running.
    pub fn unload(&mut self) -> bool {
        match self.worker.take() {
            Some(worker) => {
                tracing::debug!("voice detector worker unloaded ({})", stop(worker));
                true
            }
            None => false,
        }
    }

    /// Starts the worker now if it was unloaded, so the first call does
    /// not wait for it. A failure is left to that call to report.
    pub fn prewarm(&mut self) {
        if self.worker.is_none() {
            match self.spawn() {
                Ok(worker) => self.worker = Some(worker),
                Err(e) => tracing::warn!("the voice detector did not start: {e}"),
            }
        }
    }

    /// Restarts since the last call, worded for the user.
    pub fn notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn spawn(&self) -> Result<Spawned, EngineError> {
        let load_error = |message: String| EngineError::Load {
            path: self.model_path.clone(),
            message,
        };
        let started = Instant::now();
        let mut worker = spawn_process(&self.exe, VAD_WORKER_ARG, crate::Priority::Normal)
            .map_err(|e| {
                load_error(format!(
                    "cannot start the voice detector's worker {}: {e}",
                    self.exe.display()
                ))
            })?;
        let load = ToWorker::LoadVad {
            model_path: self.model_path.clone(),
        };
        let _ = write_frame(&mut worker.stdin, &load); // a failure shows as EOF below
        match worker.frames.recv_timeout(LOAD_TIMEOUT) {
            Ok(Some(FromWorker::VadReady)) => {
                tracing::debug!(
                    "voice detector worker {} ready in {} ms",
                    worker.child.id(),
                    started.elapsed().as_millis()
                );
                Ok(worker)
            }
            Ok(Some(FromWorker::LoadFailed(e))) => {
                stop(worker);
                Err(e)
            }
            _ => Err(load_error(format!(
                "the voice detector's worker did not load it ({})",
                stop(worker)
            ))),
        }
    }

    /// Scores 16 kHz mono audio: one speech probability per completed frame.
    pub fn feed(&mut self, pcm: &[f32]) -> Result<Vec<f32>, EngineError> {
        self.call(|seq| ToWorker::VadFeed {
            seq,
            pcm: pcm.to_vec(),
        })
    }

    /// Scores the partial last frame and starts a fresh stream.
    pub fn flush(&mut self) -> Result<Vec<f32>, EngineError> {
        self.call(|seq| ToWorker::VadFlush { seq })
    }

    fn call(&mut self, request: impl Fn(u64) -> ToWorker) -> Result<Vec<f32>, EngineError> {
        let mut why = String::new();
        for attempt in 0..2 {
            if self.worker.is_none() {
                self.worker = Some(self.spawn()?);
            }
            let worker = self.worker.as_mut().expect("started");
            let seq = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
            let answer = write_frame(&mut worker.stdin, &request(seq))
                .ok()
                .and_then(|()| worker.frames.recv_timeout(CALL_TIMEOUT).ok());
            match answer {
                Some(Some(FromWorker::VadScores(scores))) => return scores,
                answer => {
                    let worker = self.worker.take().expect("started");
                    why = match answer {
                        None => format!("it stopped answering: {}", stop(worker)),
                        _ => stop(worker),
                    };
                    tracing::warn!(
                        "the voice detector's worker failed ({why}){}",
                        if attempt == 0 { "; restarting it" } else { "" }
                    );
                    if attempt == 0 {
                        self.notices.push(format!(
                            "the voice detector stopped ({why}) and was restarted; nothing is lost"
                        ));
                    }
                }
            }
        }
        Err(EngineError::Crashed(format!("the voice detector: {why}")))
    }
}

impl Drop for VadHost {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            stop(worker);
        }
    }
}

/// Ends a worker (closing its stdin first ends a healthy one) and says how it ended.
fn stop(worker: Spawned) -> String {
    let Spawned {
        mut child, stdin, ..
    } = worker;
    drop(stdin);
    let deadline = Instant::now() + Duration::from_millis(200);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return describe_exit(status);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    match child.wait() {
        Ok(status) => describe_exit(status),
        Err(e) => e.to_string(),
    }
}
