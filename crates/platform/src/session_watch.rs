//! Noticing that the desktop session ended. A logout, or a crashed X server
//! or compositor, closes every client's connection to the display server;
//! nothing else tells a process started from a key binding, a terminal or a
//! user service (global-hotkey's X thread swallows the error and goes on
//! polling a dead connection). So a thread of ours holds a connection of its
//! own and blocks on it: when the server goes away, the read fails and the
//! owner hears [`SessionEnded`] with the reason.
//!
//! - X11: an x11rb connection waiting for events (it asks for none, so only
//!   the connection's end wakes it).
//! - Wayland: a bare socket to the compositor. A client that has sent
//!   nothing is sent nothing, so a read returns only at the end (EOF).
//! - macOS and Windows: the OS ends a session's processes itself (a logout
//!   sends SIGTERM / WM_ENDSESSION), so there is nothing to watch.
//!
//! The watching thread is never joined: it blocks in a read that only the
//! server's end interrupts, and it holds nothing the process must release.

use crossbeam_channel::Receiver;

use super::desktop::DesktopSession;

/// The desktop session's display server went away.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the desktop session ended ({0})")]
pub struct SessionEnded(pub String);

/// Why the session could not be watched (dictation goes on; only a logout
/// goes unnoticed).
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot connect to the X server (DISPLAY={display}): {source}")]
    X11 {
        display: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("cannot connect to the Wayland compositor at {path}: {source}")]
    Wayland {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the session watcher: {0}")]
    Thread(#[source] std::io::Error),
}

/// Starts watching `session`; the receiver gets one [`SessionEnded`] when
/// it ends. `None` where there is no connection to watch (no display,
/// macOS, Windows).
pub fn watch(session: &DesktopSession) -> Result<Option<Receiver<SessionEnded>>, WatchError> {
    imp::watch(session)
}

#[cfg(desktop_linux)]
mod imp {
    use super::*;
    use crossbeam_channel::bounded;

    pub fn watch(session: &DesktopSession) -> Result<Option<Receiver<SessionEnded>>, WatchError> {
        match session {
            DesktopSession::X11 => x11().map(Some),
            DesktopSession::Wayland { .. } => wayland().map(Some),
            _ => Ok(None),
        }
    }

    fn spawn(
        wait: impl FnOnce() -> String + Send + 'static,
    ) -> Result<Receiver<SessionEnded>, WatchError> {
        let (tx, rx) = bounded(1);
        std::thread::Builder::new()
            .name("utter-session-watch".into())
            .spawn(move || {
                let reason = wait();
                tracing::warn!("the desktop session ended: {reason}");
                let _ = tx.send(SessionEnded(reason));
            })
            .map_err(WatchError::Thread)?;
        Ok(rx)
    }

    fn x11() -> Result<Receiver<SessionEnded>, WatchError> {
        use x11rb::connection::Connection;
        let display = std::env::var("DISPLAY").unwrap_or_default();
        let (conn, _) = x11rb::connect(None).map_err(|e| WatchError::X11 {
            display: display.clone(),
            source: e.into(),
        })?;
        spawn(move || loop {
            // No event mask is selected, so nothing but an error ends this.
            if let Err(e) = conn.wait_for_event() {
                return format!("the X server {display} closed the connection: {e}");
            }
        })
    }

    fn wayland() -> Result<Receiver<SessionEnded>, WatchError> {
        let name = std::env::var_os("WAYLAND_DISPLAY").unwrap_or_else(|| "wayland-0".into());
        let name = std::path::PathBuf::from(name);
        // WAYLAND_DISPLAY is a name in XDG_RUNTIME_DIR, or an absolute path.
        let path = match (name.is_absolute(), std::env::var_os("XDG_RUNTIME_DIR")) {
            (false, Some(dir)) => std::path::PathBuf::from(dir).join(&name),
            _ => name,
        };
        wayland_at(path)
    }

    pub(super) fn wayland_at(
        path: std::path::PathBuf,
    ) -> Result<Receiver<SessionEnded>, WatchError> {
        use std::io::Read;
        let mut socket = std::os::unix::net::UnixStream::connect(&path).map_err(|source| {
            WatchError::Wayland {
                path: path.clone(),
                source,
            }
        })?;
        spawn(move || {
            let mut buf = [0u8; 64];
            loop {
                match socket.read(&mut buf) {
                    Ok(0) => {
                        return format!("the Wayland compositor at {} is gone", path.display())
                    }
                    Ok(_) => {} // unasked-for bytes; keep waiting for the end
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return format!(
                            "the connection to the Wayland compositor at {} failed: {e}",
                            path.display()
                        )
                    }
                }
            }
        })
    }
}

#[cfg(not(desktop_linux))]
mod imp {
    use super::*;

    pub fn watch(_: &DesktopSession) -> Result<Option<Receiver<SessionEnded>>, WatchError> {
        Ok(None)
    }
}

#[cfg(all(test, desktop_linux))]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_wayland_compositor_that_goes_away_ends_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wayland-test");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let ended = imp::wayland_at(path).unwrap();
        let (client, _) = listener.accept().unwrap();
        assert!(
            ended.recv_timeout(Duration::from_millis(300)).is_err(),
            "quiet while the compositor is up"
        );
        drop(client);
        drop(listener);
        let why = ended.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(why.to_string().contains("Wayland compositor"), "{why}");
    }

    #[test]
    fn no_display_has_nothing_to_watch() {
        assert!(watch(&DesktopSession::Headless).unwrap().is_none());
    }
}
