//! Wayland: we offer the clipboard through the wlroots data-control protocol
//! (`zwlr_data_control_manager_v1`: sway, Hyprland, river, KDE); the
//! compositor forwards the target app's paste to us as a `send` request on
//! our data source, which is the signal that the paste was consumed.
//! Compositors without the protocol (GNOME) make `start` fail, and the paste
//! falls back to the timed grace period.

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{ServeError, Server};
use crossbeam_channel::{bounded, Sender};
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{event_created_child, Connection, Dispatch, EventQueue, QueueHandle};
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_device_v1::{self, ZwlrDataControlDeviceV1},
    zwlr_data_control_manager_v1::ZwlrDataControlManagerV1,
    zwlr_data_control_offer_v1::ZwlrDataControlOfferV1,
    zwlr_data_control_source_v1::{self, ZwlrDataControlSourceV1},
};

/// The text types apps ask for (GTK, Qt, foot, XWayland's bridge).
const TEXT_TYPES: [&str; 5] = [
    "text/plain;charset=utf-8",
    "text/plain",
    "UTF8_STRING",
    "TEXT",
    "STRING",
];

/// How often the serving thread looks at its stop flag while idle.
const POLL_INTERVAL_MS: i32 = 20;

/// Offers our text as the clipboard, on a thread, until another source
/// replaces it or the server is dropped.
pub fn start(text: &str) -> Result<Server, ServeError> {
    let (ready_tx, ready) = bounded(1);
    // One message per read: the waiter counts the reads until they stop.
    let (consumed_tx, consumed) = crossbeam_channel::unbounded();
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = stop.clone();
    let text = text.as_bytes().to_vec();
    // Wayland objects are not Send: the connection lives on its thread.
    let thread = std::thread::Builder::new()
        .name("utter-paste".into())
        .spawn(move || {
            let mut state = State {
                text,
                consumed: consumed_tx,
                replaced: false,
            };
            match offer(&mut state) {
                Ok((conn, queue)) => {
                    let _ = ready_tx.send(Ok(()));
                    serve(&conn, queue, &mut state, &thread_stop);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            }
        })?;
    match ready.recv() {
        Ok(Ok(())) => Ok(Server {
            consumed,
            stop,
            thread: Some(thread),
        }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => Err(ServeError::ThreadEnded),
    }
}

/// Connects, and makes a data source with our text the clipboard of the
/// first seat. Returns once the compositor has processed it.
fn offer(state: &mut State) -> Result<(Connection, EventQueue<State>), ServeError> {
    let conn = Connection::connect_to_env().map_err(ServeError::connect)?;
    let (globals, mut queue) = registry_queue_init::<State>(&conn).map_err(ServeError::protocol)?;
    let qh = queue.handle();
    let manager: ZwlrDataControlManagerV1 = globals
        .bind(&qh, 1..=2, ())
        .map_err(ServeError::missing("data-control protocol"))?;
    let seat: wl_seat::WlSeat = globals
        .bind(&qh, 1..=8, ())
        .map_err(ServeError::missing("seat"))?;
    let device = manager.get_data_device(&seat, &qh, ());
    let source = manager.create_data_source(&qh, ());
    for mime in TEXT_TYPES {
        source.offer(mime.to_string());
    }
    device.set_selection(Some(&source));
    queue.roundtrip(state).map_err(ServeError::protocol)?;
    if state.replaced {
        return Err(ServeError::Refused);
    }
    Ok((conn, queue))
}

/// Answers paste requests until our source is replaced (the caller restores
/// the previous clipboard) or `stop` is set.
fn serve(conn: &Connection, mut queue: EventQueue<State>, state: &mut State, stop: &AtomicBool) {
    while !state.replaced && !stop.load(Ordering::Relaxed) {
        if queue.dispatch_pending(state).is_err() || conn.flush().is_err() {
            return;
        }
        let Some(guard) = queue.prepare_read() else {
            continue;
        };
        let mut fds = [libc::pollfd {
            fd: guard.connection_fd().as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: one valid pollfd, borrowed from the live connection.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, POLL_INTERVAL_MS) };
        if ready > 0 {
            if guard.read().is_err() {
                return;
            }
        } else {
            drop(guard);
        }
    }
}

struct State {
    text: Vec<u8>,
    consumed: Sender<()>,
    /// Another source took the clipboard (or ours was cancelled).
    replaced: bool,
}

impl State {
    fn send(&mut self, mime_type: &str, fd: OwnedFd) {
        if !TEXT_TYPES.contains(&mime_type) {
            return;
        }
        // The pipe may be non-blocking; a blocking write sends all of it.
        // SAFETY: F_GETFL/F_SETFL on a file descriptor we own.
        unsafe {
            let flags = libc::fcntl(fd.as_fd().as_raw_fd(), libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(
                    fd.as_fd().as_raw_fd(),
                    libc::F_SETFL,
                    flags & !libc::O_NONBLOCK,
                );
            }
        }
        let mut pipe = std::fs::File::from(fd);
        // A reader that closes early (EPIPE) has what it wanted.
        let written = pipe.write_all(&self.text);
        if let Err(e) = &written {
            tracing::debug!("clipboard read cut short: {e}");
        }
        let _ = self.consumed.try_send(());
    }
}

impl Dispatch<ZwlrDataControlSourceV1, ()> for State {
    fn event(
        state: &mut Self,
        source: &ZwlrDataControlSourceV1,
        event: zwlr_data_control_source_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            zwlr_data_control_source_v1::Event::Send { mime_type, fd } => {
                state.send(&mime_type, fd)
            }
            zwlr_data_control_source_v1::Event::Cancelled => {
                state.replaced = true;
                source.destroy();
            }
            _ => {}
        }
    }
}

impl Dispatch<ZwlrDataControlDeviceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrDataControlDeviceV1,
        event: zwlr_data_control_device_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            // The compositor tells every data-control client about each new
            // clipboard, ours included; we never read them.
            zwlr_data_control_device_v1::Event::Selection { id: Some(offer) }
            | zwlr_data_control_device_v1::Event::PrimarySelection { id: Some(offer) } => {
                offer.destroy()
            }
            zwlr_data_control_device_v1::Event::Finished => state.replaced = true,
            _ => {}
        }
    }

    event_created_child!(State, ZwlrDataControlDeviceV1, [
        zwlr_data_control_device_v1::EVT_DATA_OFFER_OPCODE => (ZwlrDataControlOfferV1, ()),
    ]);
}

/// Objects whose events we ignore.
macro_rules! ignore_events {
    ($($proxy:ty),*) => {$(
        impl Dispatch<$proxy, ()> for State {
            fn event(
                _: &mut Self,
                _: &$proxy,
                _: <$proxy as wayland_client::Proxy>::Event,
                _: &(),
                _: &Connection,
                _: &QueueHandle<Self>,
            ) {
            }
        }
    )*};
}
ignore_events!(
    ZwlrDataControlManagerV1,
    ZwlrDataControlOfferV1,
    wl_seat::WlSeat
);

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}
