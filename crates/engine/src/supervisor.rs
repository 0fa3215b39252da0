//! The parent's side of the worker process. One supervisor thread owns the
//! worker: it sends one request at a time, keeps it until the answer comes,
//! and when the worker dies (EOF on its stdout, then its exit status) or stops
//! answering, restarts it and sends that request once more. A worker that
//! died on the GPU comes back on the CPU. Idle, the worker may be stopped to
//! give its memory back; the next request starts it again.

use std::collections::VecDeque;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, unbounded, Receiver, RecvTimeoutError, Sender};

use super::protocol::{read_frame, write_frame, FromWorker, ToWorker};
use super::run::CancelRequest;
use super::worker::{BUILD, EXIT_OTHER_BUILD, WORKER_ARG};
use super::{
    BatchReply, Compute, EngineConfig, EngineError, EngineNotice, ModelInfo, Priority, Request,
    RunId, RunParams, StreamEvent,
};

/// Runs sent to workers over this process's life: `UTTER_ENGINE_FAULT`
/// names runs by this count, so a restarted worker does not repeat a fault.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// The longest a model may take to load (large models from a slow disk).
const LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a run may take before the worker counts as hung: generous (a
/// large model on a slow CPU runs at a few times real time), scaled to the
/// audio. `UTTER_ENGINE_RUN_TIMEOUT_S` sets a fixed bound (tests).
fn run_timeout(audio_seconds: f64) -> Duration {
    if let Some(s) = std::env::var("UTTER_ENGINE_RUN_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        return Duration::from_secs_f64(s.max(0.1));
    }
    Duration::from_secs_f64(60.0 + 10.0 * audio_seconds)
}

/// A started supervisor: where requests and cancels go, the model it
/// loaded, and its thread.
pub(super) struct Started {
    pub requests: Sender<Request>,
    pub cancels: Sender<CancelRequest>,
    pub info: ModelInfo,
    pub thread: JoinHandle<()>,
}

/// Starts the supervisor and its first worker; returns once the model is loaded.
pub(super) fn start(
    config: EngineConfig,
    exe: PathBuf,
    idle_unload: Option<Duration>,
    notices: Sender<EngineNotice>,
    fell_back: Arc<AtomicBool>,
) -> Result<Started, EngineError> {
    let mut supervisor = Supervisor {
        config,
        exe,
        idle_unload: idle_unload.filter(|d| !d.is_zero()),
        notices,
        cpu_only: false,
        fell_back,
        worker: None,
        queue: VecDeque::new(),
        current: None,
        next_id: 1,
        idle_since: Instant::now(),
    };
    let info = supervisor.ensure_worker()?;
    let (tx, rx) = unbounded();
    let (cancel_tx, cancels) = unbounded();
    let thread = std::thread::Builder::new()
        .name("utter-engine-supervisor".into())
        .spawn(move || supervisor.run(rx, cancels))
        .map_err(|e| EngineError::Run(format!("cannot start the engine supervisor: {e}")))?;
    Ok(Started {
        requests: tx,
        cancels: cancel_tx,
        info,
        thread,
    })
}

/// A worker process just started: its pipes, frames read on a thread.
pub(super) struct Spawned {
    pub child: Child,
    pub stdin: ChildStdin,
    /// `None` at the end of its output (it exited or died).
    pub frames: Receiver<Option<FromWorker>>,
}

/// How much lower a [`Priority::Background`] worker runs on Unix (nice).
#[cfg(unix)]
const BACKGROUND_NICE: libc::c_int = 10;

/// Starts `exe` as a worker: `role` is [`WORKER_ARG`] for the speech
/// engine, [`super::worker::VAD_WORKER_ARG`] for the voice detector.
pub(super) fn spawn_process(
    exe: &Path,
    role: &str,
    priority: Priority,
) -> std::io::Result<Spawned> {
    let mut command = Command::new(exe);
    command
        .args([role, BUILD])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    #[cfg(windows)]
    {
        // Our own process group: the console's Ctrl+C reaches the parent,
        // which decides; the worker ends when the parent closes its pipe.
        use std::os::windows::process::CommandExt;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        // Process creation flags (CreateProcessW): a priority class may be
        // given with the others.
        const BELOW_NORMAL_PRIORITY_CLASS: u32 = 0x0000_4000;
        let class = match priority {
            Priority::Normal => 0,
            Priority::Background => BELOW_NORMAL_PRIORITY_CLASS,
        };
        command.creation_flags(CREATE_NEW_PROCESS_GROUP | class);
    }
    let mut child = command.spawn()?;
    #[cfg(unix)]
    if priority == Priority::Background {
        // Raising a child's nice value needs no privilege. SAFETY:
        // setpriority only reads its three integer arguments.
        let lowered =
            unsafe { libc::setpriority(libc::PRIO_PROCESS, child.id(), BACKGROUND_NICE) } == 0;
        if !lowered {
            tracing::warn!(
                "engine worker {}: cannot lower its priority: {}",
                child.id(),
                std::io::Error::last_os_error()
            );
        }
    }
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let (frames_tx, frames) = unbounded();
    std::thread::Builder::new()
        .name("utter-engine-output".into())
        .spawn(move || {
            let mut input = BufReader::new(stdout);
            loop {
                match read_frame::<FromWorker>(&mut input) {
                    Ok(Some(frame)) => {
                        if frames_tx.send(Some(frame)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::error!("engine worker: unreadable answer ({e})");
                        break;
                    }
                }
            }
            let _ = frames_tx.send(None);
        })?;
    Ok(Spawned {
        child,
        stdin,
        frames,
    })
}

/// Loads a model file in a short-lived worker only to learn what it is, so
/// a file that makes the engine abort fails the import, not the app.
pub(super) fn probe_in_worker(exe: &Path, model_path: &Path) -> Result<ModelInfo, EngineError> {
    let failed = |message: String| EngineError::Load {
        path: model_path.to_path_buf(),
        message,
    };
    let Spawned {
        mut child,
        mut stdin,
        frames,
    } = spawn_process(exe, WORKER_ARG, Priority::Normal).map_err(|e| {
        failed(format!(
            "cannot start the engine worker {}: {e}",
            exe.display()
        ))
    })?;
    let _ = write_frame(
        &mut stdin,
        &ToWorker::Probe {
            model_path: model_path.to_path_buf(),
        },
    );
    let answer = frames.recv_timeout(LOAD_TIMEOUT);
    drop(stdin);
    match answer {
        Ok(Some(FromWorker::Probed(result))) => {
            let _ = child.wait();
            result
        }
        other => Err(failed(
            match reap_silent(child, matches!(other, Err(RecvTimeoutError::Timeout))) {
                NoAnswer::TimedOut => format!(
                    "the engine did not finish reading it within {} s",
                    LOAD_TIMEOUT.as_secs()
                ),
                NoAnswer::OtherBuild => OTHER_BUILD_MESSAGE.into(),
                NoAnswer::Died(reason) => format!("the engine crashed while reading it ({reason})"),
            },
        )),
    }
}

const OTHER_BUILD_MESSAGE: &str =
    "Utter was updated while it was running: restart it to load the speech engine";

/// Why a worker gave no usable first answer.
enum NoAnswer {
    /// Nothing within the load timeout (it was stopped).
    TimedOut,
    /// It is another build than this process ([`EXIT_OTHER_BUILD`]).
    OtherBuild,
    /// It died: how.
    Died(String),
}

/// Stops a worker that did not answer as it should and says why.
fn reap_silent(mut child: Child, timed_out: bool) -> NoAnswer {
    let _ = child.kill();
    let status = child.wait();
    if timed_out {
        return NoAnswer::TimedOut;
    }
    match status {
        Ok(s) if s.code() == Some(EXIT_OTHER_BUILD) => NoAnswer::OtherBuild,
        Ok(s) => NoAnswer::Died(describe_exit(s)),
        Err(e) => NoAnswer::Died(e.to_string()),
    }
}

/// A running, loaded worker process.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    /// Frames from its stdout; `None` when it closed (the worker is exiting).
    frames: Receiver<Option<FromWorker>>,
    info: ModelInfo,
    on_gpu: bool,
    /// We killed it for not answering in time.
    hung: bool,
}

/// Work for the engine, kept until it is answered so it can be sent again.
enum Job {
    Batch {
        run: RunId,
        pcms: Vec<Vec<f32>>,
        params: RunParams,
        reply: Sender<BatchReply>,
    },
    Stream {
        params: RunParams,
        events: Sender<StreamEvent>,
        /// All audio fed so far, to replay into a restarted worker.
        fed: Vec<Vec<f32>>,
        finished: bool,
    },
}

impl Job {
    fn audio_seconds(&self) -> f64 {
        let samples: usize = match self {
            Job::Batch { pcms, .. } => pcms.iter().map(Vec::len).sum(),
            Job::Stream { fed, .. } => fed.iter().map(Vec::len).sum(),
        };
        samples as f64 / f64::from(crate::ENGINE_RATE)
    }

    /// Answers with an error (the job will not be run).
    fn fail(self, error: EngineError) {
        match self {
            Job::Batch { reply, .. } => {
                let _ = reply.send(Err(error));
            }
            Job::Stream { events, .. } => {
                let _ = events.send(StreamEvent::Final(Err(error)));
            }
        }
    }
}

/// The job the worker has, and how often it has killed a worker already.
struct InFlight {
    id: u64,
    job: Job,
    crashes: u32,
    /// When the worker counts as hung (`None`: a stream still being fed).
    deadline: Option<Instant>,
}

/// Why a worker could not be started.
enum StartFailure {
    /// It died while loading (an abort in a backend, a bad file).
    Crashed(String),
    Failed(EngineError),
}

struct Supervisor {
    config: EngineConfig,
    exe: PathBuf,
    idle_unload: Option<Duration>,
    notices: Sender<EngineNotice>,
    /// After a crash on the GPU, every later worker loads on the CPU.
    cpu_only: bool,
    /// Set with `cpu_only` after a GPU failure: the engine handle reads it
    /// to say where the work now runs.
    fell_back: Arc<AtomicBool>,
    worker: Option<Worker>,
    queue: VecDeque<(Job, u32)>,
    current: Option<InFlight>,
    next_id: u64,
    idle_since: Instant,
}

impl Supervisor {
    /// Serves `requests` until the engine handle is dropped (the run
    /// handles hold only `cancels`, so they never keep it going).
    fn run(mut self, requests: Receiver<Request>, cancels: Receiver<CancelRequest>) {
        let mut requests = requests;
        let mut cancels = cancels;
        let mut open = true;
        loop {
            self.dispatch();
            if !open && self.current.is_none() && self.queue.is_empty() {
                break;
            }
            let frames = self
                .worker
                .as_ref()
                .map_or_else(never, |w| w.frames.clone());
            let wait = self.until_next_timer();
            select! {
                recv(requests) -> r => match r {
                    Ok(r) => self.on_request(r),
                    // The handle was dropped: finish what is queued, then stop.
                    Err(_) => {
                        open = false;
                        requests = never();
                    }
                },
                recv(cancels) -> c => match c {
                    Ok(CancelRequest::Run(run)) => self.cancel(|r| r == run),
                    Ok(CancelRequest::Through(last)) => self.cancel(|r| r <= last),
                    Err(_) => cancels = never(),
                },
                recv(frames) -> f => match f {
                    Ok(Some(frame)) => self.on_frame(frame),
                    Ok(None) | Err(_) => self.on_worker_died(),
                },
                default(wait) => self.on_timer(),
            }
        }
        self.stop_worker();
    }

    /// Starts a worker if none is running; its model info once loaded.
    fn ensure_worker(&mut self) -> Result<ModelInfo, EngineError> {
        if let Some(w) = &self.worker {
            return Ok(w.info.clone());
        }
        loop {
            match self.spawn_worker() {
                Ok(worker) => {
                    let info = worker.info.clone();
                    self.worker = Some(worker);
                    return Ok(info);
                }
                // A crash while loading is most often a GPU backend failing:
                // try once more on the CPU, unless the user named the device.
                Err(StartFailure::Crashed(reason))
                    if !self.cpu_only && !matches!(self.config.compute, Compute::Device(_)) =>
                {
                    tracing::warn!(
                        "the engine worker died while loading ({reason}); retrying on the CPU"
                    );
                    self.fall_back_to_cpu();
                    self.notify(EngineNotice::FellBackToCpu {
                        reason: format!("{reason}, while loading the model"),
                    });
                }
                Err(StartFailure::Crashed(reason)) => {
                    let on = match &self.config.compute {
                        Compute::Device(name) if !self.cpu_only => format!(" on {name}"),
                        _ => String::new(),
                    };
                    return Err(EngineError::Load {
                        path: self.config.model_path.clone(),
                        message: format!("the engine crashed while loading it{on} ({reason})"),
                    });
                }
                Err(StartFailure::Failed(e)) => return Err(e),
            }
        }
    }

    fn spawn_worker(&mut self) -> Result<Worker, StartFailure> {
        let started = Instant::now();
        let Spawned {
            mut child,
            mut stdin,
            frames,
        } = spawn_process(&self.exe, WORKER_ARG, self.config.priority).map_err(|e| {
            StartFailure::Failed(EngineError::Load {
                path: self.config.model_path.clone(),
                message: format!("cannot start the engine worker {}: {e}", self.exe.display()),
            })
        })?;
        let load = ToWorker::Load {
            model_path: self.config.model_path.clone(),
            threads: self.config.threads,
            compute: self.config.compute.clone(),
            cpu_only: self.cpu_only,
        };
        let _ = write_frame(&mut stdin, &load); // a failure shows as EOF below
        match frames.recv_timeout(LOAD_TIMEOUT) {
            Ok(Some(FromWorker::Ready { info, backend })) => {
                tracing::info!(
                    "engine worker {} ready on {backend} in {} ms",
                    child.id(),
                    started.elapsed().as_millis()
                );
                Ok(Worker {
                    child,
                    stdin,
                    frames,
                    info,
                    on_gpu: !backend.eq_ignore_ascii_case("cpu"),
                    hung: false,
                })
            }
            Ok(Some(FromWorker::LoadFailed(e))) => {
                let _ = child.wait();
                Err(StartFailure::Failed(e))
            }
            other => {
                let failed = |message: String| {
                    StartFailure::Failed(EngineError::Load {
                        path: self.config.model_path.clone(),
                        message,
                    })
                };
                Err(
                    match reap_silent(child, matches!(other, Err(RecvTimeoutError::Timeout))) {
                        NoAnswer::TimedOut => failed(format!(
                            "the engine did not finish loading within {} s",
                            LOAD_TIMEOUT.as_secs()
                        )),
                        NoAnswer::OtherBuild => failed(OTHER_BUILD_MESSAGE.into()),
                        NoAnswer::Died(reason) => StartFailure::Crashed(reason),
                    },
                )
            }
        }
    }

    /// Sends the next queued job when the worker is free.
    fn dispatch(&mut self) {
        if self.current.is_some() || self.queue.is_empty() {
            return;
        }
        if let Err(e) = self.ensure_worker() {
            // Nothing queued can run; each caller gets the reason.
            for (job, _) in self.queue.drain(..) {
                job.fail(e.clone());
            }
            return;
        }
        let (job, crashes) = self.queue.pop_front().expect("non-empty");
        let id = self.next_id;
        self.next_id += 1;
        let seq = RUNS.fetch_add(1, Ordering::SeqCst) + 1;
        let mut frames = Vec::new();
        match &job {
            Job::Batch { pcms, params, .. } => frames.push(ToWorker::Run {
                id,
                seq,
                params: params.clone(),
                pcms: pcms.clone(),
            }),
            Job::Stream {
                params,
                fed,
                finished,
                ..
            } => {
                frames.push(ToWorker::StreamBegin {
                    id,
                    seq,
                    params: params.clone(),
                });
                frames.extend(fed.iter().cloned().map(ToWorker::StreamFeed));
                if *finished {
                    frames.push(ToWorker::StreamFinish);
                }
            }
        }
        let deadline = match &job {
            Job::Stream {
                finished: false, ..
            } => None,
            _ => Some(Instant::now() + run_timeout(job.audio_seconds())),
        };
        self.current = Some(InFlight {
            id,
            job,
            crashes,
            deadline,
        });
        for frame in &frames {
            self.send(frame);
        }
    }

    /// Writes to the worker; a failure means it died, which its closed
    /// stdout reports to the loop.
    fn send(&mut self, frame: &ToWorker) {
        if let Some(w) = self.worker.as_mut() {
            if let Err(e) = write_frame(&mut w.stdin, frame) {
                tracing::debug!("engine worker: write failed ({e})");
            }
        }
    }

    /// The open stream: in flight, or else the last queued.
    fn open_stream(&mut self) -> Option<(&mut Job, bool)> {
        if let Some(c) = self.current.as_mut() {
            if matches!(c.job, Job::Stream { .. }) {
                return Some((&mut c.job, true));
            }
        }
        match self.queue.back_mut() {
            Some((job @ Job::Stream { .. }, _)) => Some((job, false)),
            _ => None,
        }
    }

    fn on_request(&mut self, request: Request) {
        self.idle_since = Instant::now();
        match request {
            Request::Batch {
                run,
                pcms,
                params,
                reply,
            } => self.queue.push_back((
                Job::Batch {
                    run,
                    pcms,
                    params,
                    reply,
                },
                0,
            )),
            Request::StreamBegin { params, events } => self.queue.push_back((
                Job::Stream {
                    params,
                    events,
                    fed: Vec::new(),
                    finished: false,
                },
                0,
            )),
            Request::StreamFeed(pcm) => {
                let live = match self.open_stream() {
                    Some((Job::Stream { fed, finished, .. }, live)) if !*finished => {
                        fed.push(pcm.clone());
                        live
                    }
                    _ => return,
                };
                if live {
                    self.send(&ToWorker::StreamFeed(pcm));
                }
            }
            Request::StreamFinish => {
                let live = match self.open_stream() {
                    Some((Job::Stream { finished, .. }, live)) => {
                        *finished = true;
                        live
                    }
                    _ => return,
                };
                if live {
                    let c = self.current.as_mut().expect("live stream");
                    c.deadline = Some(Instant::now() + run_timeout(c.job.audio_seconds()));
                    self.send(&ToWorker::StreamFinish);
                }
            }
            Request::StreamAbort => {
                if matches!(
                    self.current.as_ref().map(|c| &c.job),
                    Some(Job::Stream { .. })
                ) {
                    // An aborted stream answers nothing.
                    self.current = None;
                    self.send(&ToWorker::StreamAbort);
                } else if matches!(self.queue.back(), Some((Job::Stream { .. }, _))) {
                    self.queue.pop_back();
                }
            }
            Request::Prewarm => {
                if let Err(e) = self.ensure_worker() {
                    // The request that needs the engine reports it.
                    tracing::warn!("engine prewarm: {e}");
                }
            }
        }
    }

    /// Cancels the runs `which` picks where they are: in the worker, or
    /// still in the queue (answered at once). Once answered, a run is in
    /// neither: a late cancel finds nothing.
    fn cancel(&mut self, which: impl Fn(RunId) -> bool) {
        let picked = |job: &Job| matches!(job, Job::Batch { run, .. } if which(*run));
        if let Some(current) = self.current.as_ref().filter(|c| picked(&c.job)) {
            let id = current.id;
            self.send(&ToWorker::Cancel { id });
        }
        let (cancelled, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.queue)
            .into_iter()
            .partition(|(job, _)| picked(job));
        self.queue = kept;
        for (job, _) in cancelled {
            job.fail(EngineError::Cancelled);
        }
    }

    fn on_frame(&mut self, frame: FromWorker) {
        let Some(current) = self.current.as_ref() else {
            return;
        };
        let id = current.id;
        match frame {
            FromWorker::Reply { id: r, result } if r == id => {
                if let Some(InFlight {
                    job: Job::Batch { reply, .. },
                    ..
                }) = self.current.take()
                {
                    let _ = reply.send(result);
                }
                self.idle_since = Instant::now();
            }
            FromWorker::Partial {
                id: r,
                committed,
                tentative,
            } if r == id => {
                if let Job::Stream { events, .. } = &current.job {
                    let _ = events.send(StreamEvent::Partial {
                        committed,
                        tentative,
                    });
                }
            }
            FromWorker::Final { id: r, result } if r == id => {
                if let Some(InFlight {
                    job: Job::Stream { events, .. },
                    ..
                }) = self.current.take()
                {
                    let _ = events.send(StreamEvent::Final(result));
                }
                self.idle_since = Instant::now();
            }
            // An answer to an aborted stream, or a stray frame.
            _ => {}
        }
    }

    fn on_worker_died(&mut self) {
        let Some(mut worker) = self.worker.take() else {
            return;
        };
        let status = worker.child.wait();
        let reason = if worker.hung {
            "it stopped answering and was stopped".to_string()
        } else {
            status.map_or_else(|e| e.to_string(), describe_exit)
        };
        // The user hears of it through the notice.
        tracing::info!("the engine worker died: {reason}");
        if worker.on_gpu && !self.cpu_only {
            self.fall_back_to_cpu();
            self.notify(EngineNotice::FellBackToCpu {
                reason: reason.clone(),
            });
        } else {
            self.notify(EngineNotice::Restarted {
                reason: reason.clone(),
            });
        }
        if let Some(c) = self.current.take() {
            let crashes = c.crashes + 1;
            if crashes >= 2 {
                c.job.fail(EngineError::Crashed(reason));
            } else {
                self.queue.push_front((c.job, crashes));
            }
        }
    }

    fn on_timer(&mut self) {
        let now = Instant::now();
        let overdue = self
            .current
            .as_ref()
            .and_then(|c| c.deadline)
            .is_some_and(|d| now >= d);
        if overdue {
            if let Some(c) = self.current.as_mut() {
                c.deadline = None; // once: its closed stdout then reports the death
            }
            if let Some(w) = self.worker.as_mut() {
                tracing::warn!("the engine worker did not answer in time; stopping it");
                w.hung = true;
                let _ = w.child.kill();
            }
        }
        if self.idle_due(now) {
            tracing::info!("engine idle: unloading the model");
            self.stop_worker();
        }
    }

    fn idle_due(&self, now: Instant) -> bool {
        self.idle_unload.is_some_and(|idle| {
            self.worker.is_some()
                && self.current.is_none()
                && self.queue.is_empty()
                && now >= self.idle_since + idle
        })
    }

    fn until_next_timer(&self) -> Duration {
        let now = Instant::now();
        let deadline = self.current.as_ref().and_then(|c| c.deadline);
        let idle = self
            .idle_unload
            .filter(|_| self.worker.is_some())
            .map(|d| self.idle_since + d);
        [deadline, idle]
            .into_iter()
            .flatten()
            .min()
            .map_or(Duration::from_secs(3600), |t| {
                t.saturating_duration_since(now)
            })
            .max(Duration::from_millis(1))
    }

    /// Closes the worker's stdin (it exits on that) and reaps it.
    fn stop_worker(&mut self) {
        let Some(Worker {
            mut child, stdin, ..
        }) = self.worker.take()
        else {
            return;
        };
        drop(stdin);
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// From now on every worker loads on the CPU.
    fn fall_back_to_cpu(&mut self) {
        self.cpu_only = true;
        self.fell_back.store(true, Ordering::Relaxed);
    }

    fn notify(&self, notice: EngineNotice) {
        let _ = self.notices.send(notice);
    }
}

/// "killed by SIGABRT", "exited with status 3".
pub(super) fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                libc::SIGABRT => "SIGABRT",
                libc::SIGKILL => "SIGKILL",
                libc::SIGSEGV => "SIGSEGV",
                libc::SIGBUS => "SIGBUS",
                libc::SIGILL => "SIGILL",
                libc::SIGFPE => "SIGFPE",
                libc::SIGTERM => "SIGTERM",
                _ => return format!("killed by signal {signal}"),
            };
            return format!("killed by {name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => status.to_string(),
    }
}
