//! Noticing that the X11 keyboard layout changed under us (`setxkbmap de`, a
//! desktop's layout switcher): enigo reads the keymap once, when it is made,
//! and then presses the keys of the old layout — under German, `y` typed `z`
//! and `'` typed `ä`; a Ctrl+V can become another shortcut. The sink asks
//! before each delivery and makes a fresh enigo when the answer is yes.
//! It also tells the sink when enigo bound spare keycodes, which the apps
//! must learn before those keys are pressed (see `EnigoKeys::type_text`),
//! and holds the keyboard on its first layout group while enigo presses
//! keys: enigo finds every key in the first group, and with a second group
//! active (a Russian layout beside a US one) "Hello" was typed "Hуддщ".

use x11rb::connection::Connection;
use x11rb::protocol::xkb::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt, ModMask};
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
    /// Whether the server has XKB (the layout groups); every X.Org server
    /// and Xvfb has.
    xkb: bool,
}

/// How long apps get to take in a layout group switch before keys come.
const GROUP_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// The layout group the user had locked before [`LayoutWatch::hold_first_group`].
#[derive(Debug, Clone, Copy)]
pub struct HeldGroup(xkb::Group);

impl LayoutWatch {
    pub fn start() -> Result<Self, LayoutWatchError> {
        let (conn, _) = x11rb::connect(None)?;
        let (per_keycode, keysyms) = mapping(&conn)?;
        let min_keycode = conn.setup().min_keycode;
        let xkb = conn
            .xkb_use_extension(1, 0)
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .is_some_and(|reply| reply.supported);
        Ok(Self {
            conn,
            min_keycode,
            per_keycode,
            keysyms,
            xkb,
        })
    }

    /// Locks the keyboard on its first layout group while enigo presses
    /// keys (it looks keys up in that group only), if another is active;
    /// [`LayoutWatch::restore_group`] gives the user's group back. The
    /// switch is what a layout switcher does; the apps see it with the next
    /// key event.
    pub fn hold_first_group(&self) -> Option<HeldGroup> {
        self.hold_group(0)
    }

    /// The key that types `c` without Shift in some layout group, and that
    /// group (0 for the first): the V key for `v` while a Russian layout
    /// comes first. Apps take shortcuts from such a real key; a spare
    /// keycode bound to `v` was no Ctrl+V to Chromium.
    pub fn key_in_any_group(&self, c: char) -> Option<(u8, u8)> {
        let sym = u32::from(xkeysym::Keysym::from_char(c));
        let per = self.per_keycode.max(1);
        // The core mapping lists each key's symbols group by group, two
        // levels each.
        let groups = (per / 2).clamp(1, 4);
        (0..groups).find_map(|group| {
            self.keysyms
                .chunks(per)
                .position(|syms| syms.get(group * 2) == Some(&sym))
                .map(|i| (self.min_keycode + i as u8, group as u8))
        })
    }

    /// Locks layout group `group` (0 for the first) while keys are pressed,
    /// if another is locked; see [`LayoutWatch::hold_first_group`].
    pub fn hold_group(&self, group: u8) -> Option<HeldGroup> {
        if !self.xkb {
            return None;
        }
        let wanted = match group {
            0 => xkb::Group::M1,
            1 => xkb::Group::M2,
            2 => xkb::Group::M3,
            _ => xkb::Group::M4,
        };
        let state = self
            .conn
            .xkb_get_state(xkb::ID::USE_CORE_KBD.into())
            .ok()?
            .reply()
            .ok()?;
        if state.locked_group == wanted {
            return None;
        }
        lock_group(&self.conn, wanted);
        // Apps rebuild their layout state on a group change, off their event
        // loop, and X11 has no acknowledgement to wait for: Chromium dropped
        // a character typed at once after the switch.
        std::thread::sleep(GROUP_SETTLE);
        Some(HeldGroup(state.locked_group))
    }

    /// Locks the group the user had again.
    pub fn restore_group(&self, held: HeldGroup) {
        lock_group(&self.conn, held.0);
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

/// Locks `group` (what a layout switch key does) and waits until the
/// server has done it, so that the next key is read in that group.
fn lock_group(conn: &RustConnection, group: xkb::Group) {
    let none = ModMask::from(0u16);
    let locked = conn
        .xkb_latch_lock_state(
            xkb::ID::USE_CORE_KBD.into(),
            none,
            none,
            true,
            group,
            none,
            false,
            0,
        )
        .map(|cookie| cookie.check());
    if let Err(e) | Ok(Err(e)) = locked.map_err(x11rb::errors::ReplyError::from) {
        tracing::warn!("could not switch the keyboard's layout group: {e}");
    }
    let _ = conn.get_input_focus().map(|cookie| cookie.reply());
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
