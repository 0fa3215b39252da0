//! Knowing when a paste has been consumed, so the previous clipboard is only
//! restored after the target app has read the dictated text.
//!
//! On X11 we serve the CLIPBOARD selection ourselves for the duration of the
//! paste: the target app's `SelectionRequest` for a text target *is* the
//! paste being consumed. Elsewhere there is no such signal yet; the text goes
//! through the normal clipboard and we wait a fixed grace period:
//! - macOS could promise the pasteboard data (NSPasteboardItemDataProvider),
//!   Windows could use delayed rendering (SetClipboardData(NULL) +
//!   WM_RENDERFORMAT); both need a run loop / window on the main thread and are
//!   not built yet (they cannot be tested on the Linux machines we develop on);
//! - Wayland: the data source's `send` request is that signal; arboard's
//!   data-control clipboard does not expose it, so the grace period is used
//!   there too.

use std::time::Duration;

use crate::platform::session::DesktopSession;

/// Serves `text` as the clipboard while a paste happens.
pub struct PasteWatch {
    #[cfg(all(unix, not(target_os = "macos")))]
    x11: Option<x11::Server>,
}

/// Used when the platform gives no signal.
const FALLBACK_GRACE: Duration = Duration::from_millis(300);
const WAYLAND_GRACE: Duration = Duration::from_millis(1000);

impl PasteWatch {
    /// Takes the clipboard with `text`. Returns `None` when this platform
    /// cannot serve it directly: the caller then sets the clipboard itself.
    pub fn serve(text: &str, session: &DesktopSession) -> Option<Self> {
        #[cfg(all(unix, not(target_os = "macos")))]
        if *session == DesktopSession::X11 {
            match x11::Server::start(text) {
                Ok(server) => return Some(Self { x11: Some(server) }),
                Err(e) => tracing::debug!("no X11 clipboard server ({e}); using a timed paste"),
            }
        }
        let _ = (text, session);
        None
    }

    /// Waits until the target has read the text (true) or `timeout` passes (false).
    pub fn wait_consumed(&self, timeout: Duration) -> bool {
        #[cfg(all(unix, not(target_os = "macos")))]
        if let Some(server) = &self.x11 {
            return server.wait_consumed(timeout);
        }
        let _ = timeout;
        false
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

#[cfg(all(unix, not(target_os = "macos")))]
mod x11 {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use crossbeam_channel::{bounded, Receiver};
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        Atom, AtomEnum, ConnectionExt, CreateWindowAux, EventMask, PropMode, SelectionNotifyEvent,
        WindowClass, SELECTION_NOTIFY_EVENT,
    };
    use x11rb::protocol::Event;
    use x11rb::wrapper::ConnectionExt as _;
    use x11rb::CURRENT_TIME;

    /// A thread owning CLIPBOARD with our text until another owner takes it.
    pub struct Server {
        consumed: Receiver<()>,
        stop: Arc<AtomicBool>,
        thread: Option<JoinHandle<()>>,
    }

    impl Server {
        pub fn start(text: &str) -> Result<Self, String> {
            let (conn, screen) = x11rb::connect(None).map_err(|e| e.to_string())?;
            let atom = |name: &str| -> Result<Atom, String> {
                Ok(conn
                    .intern_atom(false, name.as_bytes())
                    .map_err(|e| e.to_string())?
                    .reply()
                    .map_err(|e| e.to_string())?
                    .atom)
            };
            let clipboard = atom("CLIPBOARD")?;
            let targets = atom("TARGETS")?;
            let text_targets = [
                atom("UTF8_STRING")?,
                atom("text/plain;charset=utf-8")?,
                atom("TEXT")?,
                AtomEnum::STRING.into(),
            ];
            let root = conn.setup().roots[screen].root;
            let win = conn.generate_id().map_err(|e| e.to_string())?;
            conn.create_window(
                0,
                win,
                root,
                0,
                0,
                1,
                1,
                0,
                WindowClass::INPUT_ONLY,
                0,
                &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
            )
            .map_err(|e| e.to_string())?;
            conn.set_selection_owner(win, clipboard, CURRENT_TIME)
                .map_err(|e| e.to_string())?;
            let owner = conn
                .get_selection_owner(clipboard)
                .map_err(|e| e.to_string())?
                .reply()
                .map_err(|e| e.to_string())?
                .owner;
            if owner != win {
                return Err("could not take the clipboard".into());
            }
            let (tx, consumed) = bounded(1);
            let stop = Arc::new(AtomicBool::new(false));
            let thread_stop = stop.clone();
            let text = text.as_bytes().to_vec();
            let thread = std::thread::Builder::new()
                .name("utter-paste".into())
                .spawn(move || {
                    let mut notified = false;
                    // Serve until someone else owns the clipboard or we are told to stop.
                    while !thread_stop.load(Ordering::Relaxed) {
                        let event = match conn.poll_for_event() {
                            Ok(Some(e)) => e,
                            Ok(None) => {
                                std::thread::sleep(Duration::from_millis(2));
                                continue;
                            }
                            Err(_) => break,
                        };
                        match event {
                            Event::SelectionClear(_) => break,
                            Event::SelectionRequest(req) => {
                                let mut property = req.property;
                                if property == x11rb::NONE {
                                    property = req.target; // obsolete clients
                                }
                                let served_text = text_targets.contains(&req.target);
                                let ok = if req.target == targets {
                                    let mut list = vec![targets];
                                    list.extend_from_slice(&text_targets);
                                    conn.change_property32(
                                        PropMode::REPLACE,
                                        req.requestor,
                                        property,
                                        AtomEnum::ATOM,
                                        &list,
                                    )
                                    .is_ok()
                                } else if served_text {
                                    conn.change_property8(
                                        PropMode::REPLACE,
                                        req.requestor,
                                        property,
                                        req.target,
                                        &text,
                                    )
                                    .is_ok()
                                } else {
                                    false
                                };
                                let notify = SelectionNotifyEvent {
                                    response_type: SELECTION_NOTIFY_EVENT,
                                    sequence: 0,
                                    time: req.time,
                                    requestor: req.requestor,
                                    selection: req.selection,
                                    target: req.target,
                                    property: if ok { property } else { x11rb::NONE },
                                };
                                let _ = conn.send_event(
                                    false,
                                    req.requestor,
                                    EventMask::NO_EVENT,
                                    notify,
                                );
                                let _ = conn.flush();
                                if ok && served_text && !notified {
                                    notified = true;
                                    let _ = tx.try_send(());
                                }
                            }
                            _ => {}
                        }
                    }
                    let _ = conn.destroy_window(win);
                    let _ = conn.flush();
                })
                .map_err(|e| e.to_string())?;
            Ok(Self {
                consumed,
                stop,
                thread: Some(thread),
            })
        }

        pub fn wait_consumed(&self, timeout: Duration) -> bool {
            let deadline = Instant::now() + timeout;
            let got = self.consumed.recv_deadline(deadline).is_ok();
            if got {
                // Some apps read twice (e.g. TARGETS then text, or two text
                // targets); a short grace lets a second read finish.
                std::thread::sleep(Duration::from_millis(30));
            }
            got
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}
