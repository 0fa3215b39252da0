//! utter-platform: everything that differs between desktops, behind small
//! types, so the pipeline never imports an OS crate (global-hotkey, enigo,
//! arboard, x11rb). It knows nothing of dictation, engines or models (it
//! cannot: utter-core depends on it, not the other way round).
//!
//! - [`control`]: the messages that drive a dictation (press, release,
//!   toggle, cancel…), which hotkeys, the ptt socket and portals send —
//!   utter-ports', re-exported. So are the traits this crate implements for
//!   the dictation service (the text sink, recording keys, focus, selection),
//!   at their old paths in [`output`], [`hotkeys`] and [`focus`].
//! - [`paths`]: where Utter keeps its files (the OS's conventions).
//! - [`threads`]: joining a thread with a bound.
//! - [`panics`]: a third-party parser's panic contained as an error.
//! - [`clipboard`]: the clipboard's text for a snippet's `{clipboard}`.
//! - [`ducking`]: other programs' sound lowered while a dictation records.
//! - [`desktop`]: which desktop this process runs in (X11, Wayland, macOS, Windows).
//! - [`session_watch`]: notices the display server going away (a logout).
//! - [`hotkeys`]: the OS hotkey manager, owned by the main thread, forwarding
//!   presses and releases into the dictation service's control channel.
//! - [`output`]: where dictated text goes ([`output::TextSink`]: paste, type,
//!   clipboard, stdout).
//! - [`portal`] (Linux): push-to-talk through the GlobalShortcuts portal on Wayland.
//! - [`remote_desktop`] (Linux): the RemoteDesktop portal's libei socket, for
//!   the paste keystroke on GNOME and KDE Wayland ([`output::ei_keys`]).
//! - [`focus`]: which app has the keyboard focus (for its per-app profile).
//! - [`ptt`]: `utter ptt press|release|toggle|cancel` over a local socket, for
//!   compositors where an app cannot grab keys itself (Wayland).
//! - [`main_loop`]: the windowless event loop the CLI's main thread runs.
//! - [`doctor`]: what works in this session, and what to do about what does not.
//!
//! The X11/Wayland code (Linux and the other Unix desktops) is selected with
//! `cfg(desktop_linux)`, which build.rs sets: the condition is written once.

pub mod clipboard;
pub mod desktop;
pub mod doctor;
pub mod ducking;
pub mod focus;
pub mod hotkeys;
pub mod main_loop;
pub mod output;
#[cfg(desktop_linux)]
pub mod portal;
pub mod ptt;
#[cfg(desktop_linux)]
pub mod remote_desktop;
pub mod session_watch;

/// The messages that drive a dictation: utter-ports' (the service and the
/// hotkeys both speak them), here at their old path.
/// Paths, bounded joins and contained panics live in the leaf crate `utter-base`
/// (the engine and the model store use them without the desktop); here at their old paths.
pub use utter_base::{panics, paths, threads};
pub use utter_ports::control;

use std::sync::Arc;

use std::time::Duration;

use crossbeam_channel::{bounded, RecvTimeoutError};

const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a job could not run on the main thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MainThreadError {
    #[error("the main loop has stopped")]
    Stopped,
    #[error("the main thread did not answer in time")]
    Timeout,
    #[error("the main thread dropped the request")]
    Dropped,
}

/// A closure for the main thread.
pub type Job = Box<dyn FnOnce() + Send>;

/// Runs closures on the process's main thread, where macOS and Windows
/// require hotkey managers and some input APIs to live. The desktop shell
/// builds it from Tauri's `run_on_main_thread`; the CLI from its own loop.
#[derive(Clone)]
pub struct MainThread {
    post: Arc<dyn Fn(Job) -> Result<(), MainThreadError> + Send + Sync>,
}

impl MainThread {
    /// `post` must run each job on the main thread, in order.
    pub fn new(post: impl Fn(Job) -> Result<(), MainThreadError> + Send + Sync + 'static) -> Self {
        Self {
            post: Arc::new(post),
        }
    }

    /// A thread of its own standing in for the main thread. Valid only where
    /// the OS does not care which thread owns hotkeys and input (Linux: the
    /// X11 backends run their own connection threads): the CLI on Linux, tests.
    pub fn dedicated() -> Self {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        std::thread::Builder::new()
            .name("utter-main-standin".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })
            .expect("spawn a thread");
        Self::new(move |job| tx.send(job).map_err(|_| MainThreadError::Stopped))
    }

    /// Runs `f` on the main thread without waiting.
    pub fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        if let Err(e) = (self.post)(Box::new(f)) {
            tracing::warn!("cannot run on the main thread: {e}");
        }
    }

    /// Runs `f` on the main thread and waits for its result. Never call this
    /// from the main thread itself: it would wait for itself. Gives up after
    /// a few seconds (a main thread that is shutting down never answers).
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, MainThreadError> {
        let (tx, rx) = bounded(1);
        (self.post)(Box::new(move || {
            let _ = tx.send(f());
        }))?;
        rx.recv_timeout(CALL_TIMEOUT).map_err(|e| match e {
            RecvTimeoutError::Timeout => MainThreadError::Timeout,
            RecvTimeoutError::Disconnected => MainThreadError::Dropped,
        })
    }
}
