//! The worker process: this same binary started with [`WORKER_ARG`]. It loads
//! the model, serves requests from its stdin and answers on its stdout. When
//! its parent goes away (the pipe closes, even after a SIGKILL), it exits at
//! once, mid-run or not, so no worker outlives the app.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use super::protocol::{read_frame, write_frame, FromWorker, ToWorker};
use super::run::RunGate;
use super::{local, EngineConfig, EngineError, EngineHost, Request, StreamEvent};

/// The hidden first argument that makes a binary an engine worker.
pub const WORKER_ARG: &str = "--utter-engine-worker";
/// The same for the voice detector's worker (its own name, so `ps` and the
/// tests tell the two apart).
pub const VAD_WORKER_ARG: &str = "--utter-vad-worker";

/// The second argument: parent and worker must be the same build (frames
/// are not self-describing), which a binary replaced on disk while Utter
/// runs may not be. Checked before any frame is read.
pub(super) const BUILD: &str = concat!("utter-engine/1/", env!("CARGO_PKG_VERSION"));

/// The worker's exit status when it is another build than its parent.
pub(super) const EXIT_OTHER_BUILD: i32 = 3;

static THIS_BINARY: OnceLock<PathBuf> = OnceLock::new();
/// A lean binary to start workers from instead (see [`start_workers_from`]).
static WORKER_BINARY: OnceLock<PathBuf> = OnceLock::new();

/// Call first in `main`. When this process was started as an engine worker,
/// it serves its parent and returns the exit code to end with; otherwise it
/// notes that this binary can host workers ([`EngineHost::for_this_process`])
/// and returns `None`.
pub fn serve_if_worker() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    let role = args.next();
    if role
        .as_ref()
        .is_some_and(|a| a == WORKER_ARG || a == VAD_WORKER_ARG)
    {
        let parent = args.next().unwrap_or_default();
        if parent != BUILD {
            eprintln!(
                "utter engine worker: this binary is {BUILD}, its parent {}",
                parent.to_string_lossy()
            );
            return Some(EXIT_OTHER_BUILD as u8);
        }
        let vad = role.is_some_and(|a| a == VAD_WORKER_ARG);
        return Some(serve(if vad { c"utter-vad" } else { c"utter-engine" }));
    }
    if let Some(exe) = running_binary() {
        let _ = THIS_BINARY.set(exe);
    }
    None
}

/// The file this process runs from. On Linux, `/proc/self/exe` names the
/// running binary even after a package upgrade replaced the file on disk, so
/// a worker restarted later is the same version as its parent (the protocol
/// check in `Load` covers the other systems).
fn running_binary() -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        let proc_exe = PathBuf::from("/proc/self/exe");
        if proc_exe.exists() {
            return Some(proc_exe);
        }
    }
    std::env::current_exe().ok()
}

/// Names this process (`utter-engine`, `utter-vad`) for `ps` and `top`
/// (started through `/proc/self/exe`, it would otherwise show as `exe`).
fn name_this_process(name: &std::ffi::CStr) {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_NAME copies at most 16 bytes from a NUL-terminated string.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = name;
}

/// The binary to start workers from: this one when it can host them (its
/// `main` called [`serve_if_worker`]) and `UTTER_ENGINE_IN_PROCESS=1` does
/// not ask for threads instead (benchmarks compare the two). Both the
/// engine and the voice detector decide here.
pub fn worker_binary() -> Option<PathBuf> {
    let in_process = std::env::var("UTTER_ENGINE_IN_PROCESS").is_ok_and(|v| v == "1");
    let lean = this_binary().and(WORKER_BINARY.get().cloned());
    lean.or_else(this_binary).filter(|_| !in_process)
}

/// Has workers started from `exe` (a binary whose `main` calls
/// [`serve_if_worker`] first, built with this one) instead of this binary.
/// For a program that links much its workers never use: each worker of the
/// desktop app mapped WebKit, GTK and their voices (~20 MB PSS a worker) for
/// nothing. Returns `false`, changing nothing, where `exe` is not a file.
pub fn start_workers_from(exe: PathBuf) -> bool {
    exe.is_file() && WORKER_BINARY.set(pinned(exe)).is_ok()
}

/// On Linux, `exe` opened now and named by its descriptor: a worker started
/// after a package upgrade replaced the file on disk is still this build (as
/// `/proc/self/exe` keeps it for this binary). execve opens the path before
/// it closes the descriptors marked close-on-exec, so the child can run it.
fn pinned(exe: PathBuf) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        static OPENED: OnceLock<std::fs::File> = OnceLock::new();
        if let Ok(file) = std::fs::File::open(&exe) {
            let fd = OPENED.get_or_init(|| file).as_raw_fd();
            return PathBuf::from(format!("/proc/self/fd/{fd}"));
        }
    }
    exe
}

/// This binary, when it can host workers (its `main` called [`serve_if_worker`]).
pub fn this_binary() -> Option<PathBuf> {
    THIS_BINARY.get().cloned()
}

/// What `UTTER_ENGINE_FAULT` asks the worker to do on which run (tests).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Abort,
    Hang,
}

/// `abort-on-run:N[,M...]` or `hang-on-run:N[,M...]` (the voice detector's
/// `UTTER_VAD_FAULT`: `abort-on-feed:N`, `hang-on-feed:N`); runs count from 1
/// over the parent's life, so a restarted worker does not repeat the fault.
fn parse_faults(spec: &str, unit: &str) -> Vec<(u64, Fault)> {
    let mut faults = Vec::new();
    for part in spec.split(';') {
        let Some((kind, runs)) = part.trim().split_once(':') else {
            continue;
        };
        let fault = match kind.strip_suffix(unit) {
            Some("abort-on-") => Fault::Abort,
            Some("hang-on-") => Fault::Hang,
            _ => continue,
        };
        faults.extend(
            runs.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .map(|n| (n, fault)),
        );
    }
    faults
}

fn inject_fault(faults: &[(u64, Fault)], seq: u64) {
    match faults.iter().find(|(n, _)| *n == seq).map(|(_, f)| f) {
        Some(Fault::Abort) => {
            tracing::warn!("fault injection: aborting on call {seq}");
            std::process::abort();
        }
        Some(Fault::Hang) => {
            tracing::warn!("fault injection: hanging on call {seq}");
            loop {
                std::thread::park();
            }
        }
        None => {}
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("UTTER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
    let debug = std::env::var("UTTER_LOG").is_ok_and(|v| v.contains("debug"));
    if !debug {
        crate::quiet_native_logs();
    }
}

/// The protocol's output. On Unix the real stdout is moved to a private
/// descriptor and fd 1 pointed at stderr, so a stray print from native code
/// cannot corrupt a frame.
fn protocol_output() -> Box<dyn Write + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: plain descriptor calls at start-up, before any other thread
        // writes to stdout; `dup` returns a descriptor only we own.
        unsafe {
            let fd = libc::dup(libc::STDOUT_FILENO);
            if fd >= 0 && libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) >= 0 {
                return Box::new(std::fs::File::from_raw_fd(fd));
            }
        }
    }
    Box::new(std::io::stdout())
}

/// A request the engine thread is working on (or will next), in the order
/// the replies must go out.
enum Pending {
    Batch {
        id: u64,
        seq: u64,
        reply: Receiver<super::BatchReply>,
    },
    Stream {
        id: u64,
        seq: u64,
        events: Receiver<StreamEvent>,
    },
}

/// The voice detector's worker: Silero scores each fed chunk, one reply per
/// request. Its own process, so a ggml abort in it ends only this worker.
fn serve_vad(model_path: &std::path::Path, mut input: impl Read, mut out: impl Write) -> u8 {
    let mut detector = match super::vad_model::SileroVad::load(model_path) {
        Ok(d) => d,
        Err(e) => {
            let _ = write_frame(&mut out, &FromWorker::LoadFailed(e));
            return 1;
        }
    };
    if write_frame(&mut out, &FromWorker::VadReady).is_err() {
        return 0;
    }
    let faults = std::env::var("UTTER_VAD_FAULT")
        .map(|s| parse_faults(&s, "feed"))
        .unwrap_or_default();
    loop {
        let scores = match read_frame::<ToWorker>(&mut input) {
            Ok(Some(ToWorker::VadFeed { seq, pcm })) => {
                inject_fault(&faults, seq);
                detector.feed(&pcm)
            }
            Ok(Some(ToWorker::VadFlush { seq })) => {
                inject_fault(&faults, seq);
                detector.flush()
            }
            Ok(Some(_)) => continue,
            Ok(None) => return 0, // the parent closed the pipe
            Err(e) => {
                tracing::error!("voice detector worker: unreadable request ({e})");
                return 2;
            }
        };
        if write_frame(&mut out, &FromWorker::VadScores(scores)).is_err() {
            return 0;
        }
    }
}

fn serve(name: &std::ffi::CStr) -> u8 {
    init_logging();
    name_this_process(name);
    // The terminal's Ctrl+C goes to the whole process group; the parent
    // decides what happens to its dictation, and we exit when it closes the pipe.
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to SIG_IGN at start-up.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let mut out = protocol_output();
    let mut input = std::io::BufReader::new(std::io::stdin());
    let (model_path, threads, compute, cpu_only) = match read_frame::<ToWorker>(&mut input) {
        Ok(Some(ToWorker::Load {
            model_path,
            threads,
            compute,
            cpu_only,
        })) => (model_path, threads, compute, cpu_only),
        Ok(Some(ToWorker::LoadVad { model_path })) => {
            return serve_vad(&model_path, input, out);
        }
        Ok(Some(ToWorker::Probe { model_path })) => {
            let probed = FromWorker::Probed(super::probe_here(&model_path));
            return u8::from(write_frame(&mut out, &probed).is_err());
        }
        _ => {
            tracing::error!("engine worker: no load request from the parent");
            return 2;
        }
    };
    let gate = Arc::new(RunGate::default());
    let config = EngineConfig {
        model_path,
        threads,
        host: EngineHost::Thread,
        compute,
        // This process's own priority was set by whoever started it.
        priority: crate::Priority::Normal,
    };
    let (engine, _thread) = match local::start(config, cpu_only, gate.clone()) {
        Ok((tx, loaded, thread)) => {
            let ready = FromWorker::Ready {
                info: loaded.info,
                backend: loaded.backend,
            };
            if write_frame(&mut out, &ready).is_err() {
                return 0;
            }
            (tx, thread)
        }
        Err(e) => {
            let _ = write_frame(&mut out, &FromWorker::LoadFailed(e));
            return 1;
        }
    };
    let (pending_tx, pending_rx) = unbounded();
    std::thread::Builder::new()
        .name("utter-engine-input".into())
        .spawn(move || {
            read_requests(input, engine, pending_tx, gate);
            // The parent closed the pipe or died: nobody wants the answer.
            std::process::exit(0);
        })
        .expect("spawn the worker's input thread");
    let faults = std::env::var("UTTER_ENGINE_FAULT")
        .map(|s| parse_faults(&s, "run"))
        .unwrap_or_default();
    write_replies(&mut out, pending_rx, &faults);
    0
}

/// Turns frames from the parent into engine requests; returns at end of input.
fn read_requests(
    mut input: impl Read,
    engine: Sender<Request>,
    pending: Sender<Pending>,
    gate: Arc<RunGate>,
) {
    loop {
        let message = match read_frame::<ToWorker>(&mut input) {
            Ok(Some(m)) => m,
            Ok(None) => return,
            Err(e) => {
                tracing::error!("engine worker: unreadable request ({e})");
                return;
            }
        };
        let request = match message {
            ToWorker::Run {
                id,
                seq,
                params,
                pcms,
            } => {
                let (reply, rx) = bounded(1);
                let _ = pending.send(Pending::Batch { id, seq, reply: rx });
                // The parent's request id names the run: its `Cancel` names it too.
                Request::Batch {
                    run: id,
                    pcms,
                    params,
                    reply,
                }
            }
            ToWorker::StreamBegin { id, seq, params } => {
                let (events, rx) = unbounded();
                let _ = pending.send(Pending::Stream {
                    id,
                    seq,
                    events: rx,
                });
                Request::StreamBegin { params, events }
            }
            ToWorker::StreamFeed(pcm) => Request::StreamFeed(pcm),
            ToWorker::StreamFinish => Request::StreamFinish,
            ToWorker::StreamAbort => Request::StreamAbort,
            ToWorker::Cancel { id } => {
                gate.cancel(id);
                continue;
            }
            ToWorker::Load { .. }
            | ToWorker::Probe { .. }
            | ToWorker::LoadVad { .. }
            | ToWorker::VadFeed { .. }
            | ToWorker::VadFlush { .. } => continue,
        };
        if engine.send(request).is_err() {
            return;
        }
    }
}

/// Sends each reply as the engine thread produces it, in request order.
fn write_replies(out: &mut impl Write, pending: Receiver<Pending>, faults: &[(u64, Fault)]) {
    for item in pending {
        let sent = match item {
            Pending::Batch { id, seq, reply } => {
                inject_fault(faults, seq);
                let result = reply.recv().unwrap_or(Err(EngineError::WorkerGone));
                write_frame(out, &FromWorker::Reply { id, result })
            }
            Pending::Stream { id, seq, events } => {
                inject_fault(faults, seq);
                let mut sent = Ok(());
                // Ends at the final text, or when an abort drops the stream.
                for event in events.iter() {
                    let (frame, last) = match event {
                        StreamEvent::Partial {
                            committed,
                            tentative,
                        } => (
                            FromWorker::Partial {
                                id,
                                committed,
                                tentative,
                            },
                            false,
                        ),
                        StreamEvent::Final(result) => (FromWorker::Final { id, result }, true),
                    };
                    sent = write_frame(out, &frame);
                    if last || sent.is_err() {
                        break;
                    }
                }
                sent
            }
        };
        if sent.is_err() {
            return; // the parent is gone
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_name_runs_over_the_parents_life() {
        assert_eq!(
            parse_faults("abort-on-run:2", "run"),
            vec![(2, Fault::Abort)]
        );
        assert_eq!(
            parse_faults("abort-on-run:2,3; hang-on-run:5", "run"),
            vec![(2, Fault::Abort), (3, Fault::Abort), (5, Fault::Hang)]
        );
        assert_eq!(
            parse_faults("abort-on-feed:7", "feed"),
            vec![(7, Fault::Abort)]
        );
        assert!(
            parse_faults("abort-on-feed:7", "run").is_empty(),
            "not the engine's"
        );
        assert!(parse_faults("explode:1", "run").is_empty());
        assert!(parse_faults("", "run").is_empty());
    }
}
