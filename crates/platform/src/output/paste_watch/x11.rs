//! X11: reading a selection back as a pasting app would (the check that a
//! restore held). Pastes on X11 go through `x11_clipboard`, our own owner.
use std::time::Duration;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt, CreateWindowAux, EventMask, Window, WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::CURRENT_TIME;

use super::{Selection, ServeError};

/// A connection with a hidden 1×1 window of ours, to request selections.
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
