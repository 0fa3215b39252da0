//! How `utter dictate` ends, always within a bound:
//!
//! - SIGINT, SIGTERM or SIGHUP: the service is told to shut down (a dictation
//!   in progress is finished if that can be done in time); a second signal,
//!   or [`GRACE`] without an end, exits at once.
//! - The desktop session ends (the display server's connection closes, as
//!   at a logout): one line says so, the dictation in progress is left on
//!   disk for the next start to transcribe, and the exit status is
//!   [`exit::SESSION_ENDED`](crate::exit::SESSION_ENDED), within the same bound.
//!
//! Exiting at once means `_exit`: no destructor, no atexit handler and no
//! thread can hold it up. The engine and voice-detector workers end by
//! themselves when their stdin closes with this process; the ptt socket is
//! removed here first.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{never, select, unbounded, Receiver, Sender};
use utter_platform::session_watch::SessionEnded;
use utter_ports::control::Control;

use crate::exit;

/// From the first signal (or the session's end) to the exit, at most. A
/// service manager stops a unit in seconds; systemd kills after 90 s and
/// logs it, a logout waits for no one.
pub const GRACE: Duration = Duration::from_millis(1500);

/// Watches for the signals and the session's end; says how the process ends.
pub struct Ending {
    code: Arc<AtomicU8>,
}

impl Ending {
    /// Installs the signal handler and starts the thread that tells
    /// `control` to end (`Control::Shutdown` / `Control::SessionEnded`) and
    /// exits at once when that takes longer than [`GRACE`]. `socket` is
    /// removed before such an exit.
    pub fn watch(
        control: Sender<Control>,
        session: Option<Receiver<SessionEnded>>,
        socket: Option<PathBuf>,
    ) -> Result<Self> {
        let (signal_tx, signals) = unbounded();
        ctrlc::set_handler(move || {
            let _ = signal_tx.send(());
        })
        .context("cannot install the signal handler")?;
        let code = Arc::new(AtomicU8::new(0));
        let thread_code = code.clone();
        std::thread::Builder::new()
            .name("utter-ending".into())
            .spawn(move || coordinate(control, signals, session, socket, &thread_code))
            .context("cannot start the shutdown thread")?;
        Ok(Self { code })
    }

    /// The exit status once the service has returned: 0 after a signal,
    /// [`exit::SESSION_ENDED`] after the session's end.
    pub fn code(&self) -> u8 {
        self.code.load(Ordering::SeqCst)
    }
}

fn coordinate(
    control: Sender<Control>,
    signals: Receiver<()>,
    session: Option<Receiver<SessionEnded>>,
    socket: Option<PathBuf>,
    code: &AtomicU8,
) {
    let mut session = session.unwrap_or_else(never);
    let mut deadline: Option<Instant> = None;
    loop {
        let mut session_heard = false;
        let wait = deadline.map_or(Duration::from_secs(3600), |d| {
            d.saturating_duration_since(Instant::now())
        });
        select! {
            recv(signals) -> _ => {
                if deadline.is_some() {
                    tracing::warn!("a second signal: exiting now");
                    exit_now(socket.as_ref(), code.load(Ordering::SeqCst));
                }
                tracing::info!("signal: shutting down");
                let _ = control.send(Control::Shutdown);
                deadline = Some(Instant::now() + GRACE);
            }
            recv(session) -> ended => {
                session_heard = true;
                // Already ending on a signal (a logout sends both): that end stands.
                if let (Ok(ended), None) = (ended, deadline) {
                    eprintln!("error: {ended}: stopping");
                    code.store(exit::SESSION_ENDED, Ordering::SeqCst);
                    let _ = control.send(Control::SessionEnded);
                    deadline = Some(Instant::now() + GRACE);
                }
            }
            default(wait) => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    eprintln!(
                        "error: the dictation did not stop within {:.1} s; exiting without \
                         waiting (a recording in progress is kept for the next start)",
                        GRACE.as_secs_f64()
                    );
                    exit_now(socket.as_ref(), code.load(Ordering::SeqCst).max(exit::FILE_FAILED));
                }
            }
        }
        if session_heard {
            session = never(); // it says it once
        }
    }
}

/// Ends the process now, whatever its threads are doing.
fn exit_now(socket: Option<&PathBuf>, code: u8) -> ! {
    if let Some(path) = socket {
        let _ = std::fs::remove_file(path);
    }
    // No flush of stdout: its lock may be held by a thread blocked on a
    // full pipe, and every event line has gone out with its newline.
    #[cfg(unix)]
    // SAFETY: _exit has no preconditions; skipping destructors and atexit
    // handlers is the point (one of them may be what is stuck).
    unsafe {
        libc::_exit(i32::from(code))
    }
    #[cfg(not(unix))]
    std::process::exit(i32::from(code))
}
