//! Knowing when a paste has been consumed, so the previous clipboard is only
//! restored after the target app has read the dictated text.
//!
//! On X11 and on Wayland compositors with the data-control protocol (wlroots
//! compositors, KDE) we serve the clipboard ourselves for the duration of the
//! paste: the target app's request for our text *is* the paste being
//! consumed. Elsewhere there is no such signal yet; the text goes through the
//! normal clipboard and we wait a fixed grace period:
//! - macOS could promise the pasteboard data (NSPasteboardItemDataProvider),
//!   Windows could use delayed rendering (SetClipboardData(NULL) +
//!   WM_RENDERFORMAT); both need a run loop / window on the main thread and are
//!   not built yet (they cannot be tested on the Linux machines we develop on);
//! - GNOME's Wayland session has no data-control protocol.

use std::time::Duration;

use super::PasteKeys;
use crate::desktop::DesktopSession;

/// An X11 selection a paste may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    Clipboard,
    /// What xterm and rxvt paste on Shift+Insert (the last text selected).
    Primary,
}

/// The selections one paste serves: always the clipboard, and PRIMARY too
/// where the paste keys may read it (Shift+Insert on X11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selections {
    pub primary: bool,
}

impl Selections {
    pub fn for_keys(keys: PasteKeys, session: &DesktopSession) -> Self {
        Self {
            primary: keys == PasteKeys::ShiftInsert && *session == DesktopSession::X11,
        }
    }
}

/// Serves `text` as the clipboard while a paste happens.
pub struct PasteWatch {
    #[cfg(desktop_linux)]
    server: Server,
}

/// The thread serving the clipboard for one paste (X11 or Wayland): it says
/// once when the text was read, and stops when dropped or replaced.
#[cfg(desktop_linux)]
struct Server {
    consumed: crossbeam_channel::Receiver<()>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[cfg(desktop_linux)]
impl Server {
    /// Waits for the first read of the text, then until the reader has
    /// been quiet for [`QUIET_AFTER_READ`]: apps read more than once
    /// (Chromium twice, and it inserts the second answer), so giving the
    /// clipboard back at the first read can paste the old one, or nothing.
    fn wait_consumed(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        if self.consumed.recv_deadline(deadline).is_err() {
            return false;
        }
        let hold_until = std::time::Instant::now() + MAX_HOLD_AFTER_READ;
        while self
            .consumed
            .recv_deadline(hold_until.min(std::time::Instant::now() + QUIET_AFTER_READ))
            .is_ok()
        {}
        true
    }
}

#[cfg(desktop_linux)]
impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why we could not serve the clipboard ourselves: the paste then sets the
/// clipboard normally and waits a fixed grace.
#[cfg(desktop_linux)]
#[derive(Debug, thiserror::Error)]
enum ServeError {
    #[error("cannot connect to the display server: {0}")]
    Connect(#[source] BoxedError),
    #[error("the display server failed a request: {0}")]
    Protocol(#[source] BoxedError),
    #[error("the compositor offers no {what}: {source}")]
    Missing {
        what: &'static str,
        source: BoxedError,
    },
    #[error("another program took the clipboard first")]
    Refused,
    #[error("cannot start the clipboard thread: {0}")]
    Thread(#[from] std::io::Error),
    #[error("the clipboard thread ended early")]
    ThreadEnded,
}

#[cfg(desktop_linux)]
type BoxedError = Box<dyn std::error::Error + Send + Sync>;

#[cfg(desktop_linux)]
impl ServeError {
    fn connect(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Connect(Box::new(e))
    }

    fn protocol(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Protocol(Box::new(e))
    }

    /// For `map_err`: the compositor lacks `what`.
    fn missing<E: std::error::Error + Send + Sync + 'static>(
        what: &'static str,
    ) -> impl FnOnce(E) -> Self {
        move |e| Self::Missing {
            what,
            source: Box::new(e),
        }
    }
}

/// Used when the platform gives no signal.
const FALLBACK_GRACE: Duration = Duration::from_millis(300);
const WAYLAND_GRACE: Duration = Duration::from_millis(1000);

impl PasteWatch {
    /// Takes the clipboard with `text`. Returns `None` when this platform
    /// cannot serve it directly: the caller then sets the clipboard itself.
    pub fn serve(text: &str, session: &DesktopSession, selections: Selections) -> Option<Self> {
        #[cfg(desktop_linux)]
        {
            // X11 pastes go through our own owner (`x11_clipboard`); this
            // path serves X11 only when that could not start: timed.
            let server = match session {
                DesktopSession::Wayland { .. } => wayland::start(text),
                _ => return None,
            };
            match server {
                Ok(server) => return Some(Self { server }),
                Err(e) => tracing::debug!("no clipboard server ({e}); using a timed paste"),
            }
        }
        let _ = (text, session, selections);
        None
    }

    /// Waits until the target has read the text (true) or `timeout` passes (false).
    pub fn wait_consumed(&self, timeout: Duration) -> bool {
        #[cfg(desktop_linux)]
        return self.server.wait_consumed(timeout);
        #[allow(unreachable_code)]
        {
            let _ = timeout;
            false
        }
    }

    /// Whether the clipboard now holds `text` (X11; elsewhere assumed). The
    /// previous clipboard goes back through arboard, whose X11 thread drops
    /// its text whenever it handles a SelectionClear, however old: the one
    /// our paste server caused can reach it late (a loaded machine), right
    /// after it was given the text back, and the user's clipboard would be
    /// empty. Events reach that thread in order, so once it has answered this
    /// read with the text, no stale clear is left to wipe it.
    pub fn holds(session: &DesktopSession, selection: Selection, text: &str) -> bool {
        #[cfg(desktop_linux)]
        if *session == DesktopSession::X11 {
            return match x11::read(selection, Duration::from_millis(500)) {
                Ok(x11::Answer::Text(got)) => got == text,
                Ok(x11::Answer::Large) => true,
                Ok(x11::Answer::Nothing) => false,
                Err(e) => {
                    tracing::debug!("cannot read the clipboard back: {e}");
                    true
                }
            };
        }
        let _ = (session, selection, text);
        true
    }

    /// Without a signal, a fixed grace period is all we can do.
    pub fn fallback_wait(session: &DesktopSession) {
        // Wayland apps read the clipboard through the compositor after the key
        // event reaches them; a longer grace keeps a slow one from finding the
        // old clipboard (or none, once ours is withdrawn).
        let grace = if session.is_wayland() {
            WAYLAND_GRACE
        } else {
            FALLBACK_GRACE
        };
        std::thread::sleep(grace);
    }
}

/// How long the reader must have stopped reading before the clipboard is
/// given back, and the longest the text is held after its first read.
#[cfg(desktop_linux)]
const QUIET_AFTER_READ: Duration = Duration::from_millis(150);
#[cfg(desktop_linux)]
const MAX_HOLD_AFTER_READ: Duration = Duration::from_secs(2);

#[cfg(desktop_linux)]
mod wayland;
#[cfg(desktop_linux)]
mod x11;
