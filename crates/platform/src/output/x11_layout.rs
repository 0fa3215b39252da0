//! Noticing that the X11 keyboard layout changed under us (`setxkbmap de`, a
//! desktop's layout switcher): enigo reads the keymap once, when it is made,
//! and then presses the keys of the old layout — under German, `y` typed `z`
//! and `'` typed `ä`; a Ctrl+V can become another shortcut. The sink asks
//! before each delivery and makes a fresh enigo when the answer is yes.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt;
use x11rb::rust_connection::RustConnection;

#[derive(Debug, thiserror::Error)]
pub enum LayoutWatchError {
    #[error("cannot connect to the X server: {0}")]
    Connect(#[from] x11rb::errors::ConnectError),
    #[error("cannot read the keyboard mapping: {0}")]
    Connection(#[from] x11rb::errors::ConnectionError),
    #[error("cannot read the keyboard mapping: {0}")]
    Reply(#[from] x11rb::errors::ReplyError),
}

/// The keysyms of every keycode, as last seen.
pub struct LayoutWatch {
    conn: RustConnection,
    per_keycode: usize,
    keysyms: Vec<u32>,
}

impl LayoutWatch {
    pub fn start() -> Result<Self, LayoutWatchError> {
        let (conn, _) = x11rb::connect(None)?;
        let (per_keycode, keysyms) = mapping(&conn)?;
        Ok(Self {
            conn,
            per_keycode,
            keysyms,
        })
    }

    /// Whether a key that had symbols now has others. Keys going from no
    /// symbol to one and back are enigo binding spare keycodes for the
    /// characters the layout lacks (and giving them back): not a new layout.
    pub fn changed(&mut self) -> bool {
        let Ok((per_keycode, keysyms)) = mapping(&self.conn) else {
            // The display went away: nothing to type into either.
            return false;
        };
        let changed = per_keycode != self.per_keycode
            || keysyms.len() != self.keysyms.len()
            || self
                .keysyms
                .chunks(self.per_keycode.max(1))
                .zip(keysyms.chunks(per_keycode.max(1)))
                .any(|(before, now)| bound(before) && bound(now) && before != now);
        self.per_keycode = per_keycode;
        self.keysyms = keysyms;
        changed
    }
}

fn bound(keysyms: &[u32]) -> bool {
    keysyms.iter().any(|&sym| sym != 0)
}

fn mapping(conn: &RustConnection) -> Result<(usize, Vec<u32>), LayoutWatchError> {
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let reply = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
    Ok((reply.keysyms_per_keycode as usize, reply.keysyms))
}
