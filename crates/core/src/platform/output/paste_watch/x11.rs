//! X11: we own CLIPBOARD (and PRIMARY, for Shift+Insert) ourselves; a
//! `SelectionRequest` for a text target is the target app reading the paste.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::bounded;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt, CreateWindowAux, EventMask, PropMode, SelectionNotifyEvent,
    Window, WindowClass, SELECTION_NOTIFY_EVENT,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::CURRENT_TIME;

use super::{Selection, ServeError, Server};

/// A connection with a hidden 1×1 window of ours, to own or request selections.
fn connect_with_window() -> Result<(RustConnection, Window), ServeError> {
    let (conn, screen) = x11rb::connect(None).map_err(ServeError::connect)?;
    let root = conn.setup().roots[screen].root;
    let win = conn.generate_id().map_err(ServeError::protocol)?;
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
    .map_err(ServeError::protocol)?;
    Ok((conn, win))
}

fn intern(conn: &RustConnection, name: &str) -> Result<Atom, ServeError> {
    Ok(conn
        .intern_atom(false, name.as_bytes())
        .map_err(ServeError::protocol)?
        .reply()
        .map_err(ServeError::protocol)?
        .atom)
}

/// Owns CLIPBOARD (and PRIMARY with `primary`) with our text, on a thread,
/// until other owners have taken them all.
pub fn start(text: &str, primary: bool) -> Result<Server, ServeError> {
    let (conn, win) = connect_with_window()?;
    let atom = |name: &str| intern(&conn, name);
    let mut owned = vec![atom("CLIPBOARD")?];
    if primary {
        owned.push(AtomEnum::PRIMARY.into());
    }
    let targets = atom("TARGETS")?;
    let text_targets = [
        atom("UTF8_STRING")?,
        atom("text/plain;charset=utf-8")?,
        atom("TEXT")?,
        AtomEnum::STRING.into(),
    ];
    for &selection in &owned {
        conn.set_selection_owner(win, selection, CURRENT_TIME)
            .map_err(ServeError::protocol)?;
        let owner = conn
            .get_selection_owner(selection)
            .map_err(ServeError::protocol)?
            .reply()
            .map_err(ServeError::protocol)?
            .owner;
        if owner != win {
            return Err(ServeError::Refused);
        }
    }
    let (tx, consumed) = bounded(1);
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = stop.clone();
    let text = text.as_bytes().to_vec();
    let thread = std::thread::Builder::new()
        .name("utter-paste".into())
        .spawn(move || {
            let mut notified = false;
            let mut still_owned = owned.len();
            // Serve until others own every selection or we are told to stop.
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
                    Event::SelectionClear(_) => {
                        still_owned -= 1;
                        if still_owned == 0 {
                            break;
                        }
                    }
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
                        let _ = conn.send_event(false, req.requestor, EventMask::NO_EVENT, notify);
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
        })?;
    Ok(Server {
        consumed,
        stop,
        thread: Some(thread),
    })
}

/// What the clipboard's owner answers when asked for text.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Text(String),
    /// Too big for one property (INCR): someone serves it, which is what we check.
    Large,
    /// No owner, or it refused (it has nothing).
    Nothing,
}

/// Asks the selection's owner for its text, as a pasting app would.
pub fn read(selection: Selection, timeout: Duration) -> Result<Answer, ServeError> {
    let (conn, win) = connect_with_window()?;
    let atom = |name: &str| intern(&conn, name);
    let (clipboard, utf8, incr, property) = (
        match selection {
            Selection::Clipboard => atom("CLIPBOARD")?,
            Selection::Primary => AtomEnum::PRIMARY.into(),
        },
        atom("UTF8_STRING")?,
        atom("INCR")?,
        atom("UTTER_READ_BACK")?,
    );
    conn.convert_selection(win, clipboard, utf8, property, CURRENT_TIME)
        .map_err(ServeError::protocol)?;
    conn.flush().map_err(ServeError::protocol)?;
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        match conn.poll_for_event().map_err(ServeError::protocol)? {
            Some(Event::SelectionNotify(n)) if n.property == x11rb::NONE => {
                return Ok(Answer::Nothing)
            }
            Some(Event::SelectionNotify(_)) => {
                let reply = conn
                    .get_property(true, win, property, AtomEnum::ANY, 0, u32::MAX / 4)
                    .map_err(ServeError::protocol)?
                    .reply()
                    .map_err(ServeError::protocol)?;
                return Ok(if reply.type_ == incr {
                    Answer::Large
                } else {
                    Answer::Text(String::from_utf8_lossy(&reply.value).into_owned())
                });
            }
            Some(_) => {}
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    Ok(Answer::Nothing)
}
