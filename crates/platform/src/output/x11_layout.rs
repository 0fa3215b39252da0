//! Noticing that the X11 keyboard layout changed under us (`setxkbmap de`, a
//! desktop's layout switcher): enigo reads the keymap once, when it is made,
//! and then presses the keys of the old layout — under German, `y` typed `z`
//! and `'` typed `ä`; a Ctrl+V can become another shortcut. The sink asks
//! before each delivery and makes a fresh enigo when the answer is yes.
//! It also tells the sink when enigo bound spare keycodes, which the apps
//! must learn before those keys are pressed (see `EnigoKeys::type_text`).

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
    min_keycode: u8,
    per_keycode: usize,
    keysyms: Vec<u32>,
}

impl LayoutWatch {
    pub fn start() -> Result<Self, LayoutWatchError> {
        let (conn, _) = x11rb::connect(None)?;
        let (per_keycode, keysyms) = mapping(&conn)?;
        let min_keycode = conn.setup().min_keycode;
        Ok(Self {
            conn,
            min_keycode,
            per_keycode,
            keysyms,
        })
    }

    /// Whether enigo types `c` with a key of the layout, found as enigo
    /// finds it (the first level only); otherwise it binds a spare keycode.
    pub fn has_key_for(&self, c: char) -> bool {
        let sym = xkeysym::Keysym::from_char(c);
        let keycodes = self.keysyms.len() / self.per_keycode.max(1);
        let min = xkeysym::KeyCode::from(self.min_keycode);
        (0..keycodes).any(|i| {
            let keycode = xkeysym::KeyCode::from(u32::from(self.min_keycode) + i as u32);
            xkeysym::keysym(keycode, 0, min, self.per_keycode as u8, &self.keysyms) == Some(sym)
        })
    }

    /// What changed in the keyboard mapping since the last look.
    pub fn check(&mut self) -> KeymapChange {
        let Ok((per_keycode, keysyms)) = mapping(&self.conn) else {
            // The display went away: nothing to type into either.
            return KeymapChange::default();
        };
        let mut change = KeymapChange {
            layout: per_keycode != self.per_keycode || keysyms.len() != self.keysyms.len(),
            ..KeymapChange::default()
        };
        if !change.layout {
            for (before, now) in self
                .keysyms
                .chunks(self.per_keycode.max(1))
                .zip(keysyms.chunks(per_keycode.max(1)))
            {
                match (bound(before), bound(now)) {
                    (true, true) => change.layout |= before != now,
                    (false, true) => change.spare_bound = true,
                    (true, false) => change.spare_freed = true,
                    (false, false) => {}
                }
            }
        }
        self.per_keycode = per_keycode;
        self.keysyms = keysyms;
        change
    }
}

/// A change to the keyboard mapping. Keys going from no symbol to one and
/// back are enigo binding spare keycodes for the characters the layout
/// lacks (and giving them back): not a new layout.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct KeymapChange {
    /// A key that had symbols now has others: `setxkbmap`, a layout switcher.
    pub layout: bool,
    /// A spare keycode got a symbol.
    pub spare_bound: bool,
    /// A bound spare keycode was given back.
    pub spare_freed: bool,
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
