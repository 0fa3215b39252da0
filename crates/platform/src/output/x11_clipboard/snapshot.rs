//! Copying everything a selection's owner offers before we take the
//! selection: X11 keeps a selection's data in its owner, which drops it (xclip
//! even exits) once another client owns the selection, so what is not copied
//! first is gone.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt, Property, Window};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::CURRENT_TIME;

use super::contents::{Contents, Item};
use super::{Atoms, OwnerError};

/// Longest the whole copy may take: it is on the path from the key release
/// to the text, and an owner that never answers must not hold a paste up.
pub const SNAPSHOT_BUDGET: Duration = Duration::from_millis(1500);
/// Longest one target may take to start arriving.
const TARGET_TIMEOUT: Duration = Duration::from_millis(400);
/// The most we copy: a clipboard bigger than this (a huge image) is not kept.
const MAX_BYTES: usize = 64 << 20;

/// A copy of a selection, and the targets that could not be copied (for the notice).
#[derive(Debug, Default)]
pub struct Snapshot {
    pub contents: Contents,
    pub lost: Vec<String>,
}

/// Reads every target `selection`'s owner lists. Events meant for the rest
/// of the owner (requests for a selection we own) are kept in `deferred`.
pub fn take(
    conn: &RustConnection,
    win: Window,
    atoms: &Atoms,
    selection: Atom,
    deferred: &mut VecDeque<Event>,
) -> Result<Snapshot, OwnerError> {
    let deadline = Instant::now() + SNAPSHOT_BUDGET;
    let mut reader = Reader {
        conn,
        win,
        atoms,
        selection,
        deferred,
    };
    let targets = match reader.convert(atoms.targets, deadline)? {
        Some((_, 32, data)) => data
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect::<Vec<Atom>>(),
        // No owner, or an owner with nothing to offer.
        _ => return Ok(Snapshot::default()),
    };
    let mut snapshot = Snapshot::default();
    let mut bytes = 0usize;
    for target in targets {
        if atoms.is_meta_target(target)
            || target == Atom::from(AtomEnum::NONE)
            || snapshot.contents.get(target).is_some()
        {
            continue;
        }
        let name = || atom_name(conn, target);
        if Instant::now() >= deadline {
            snapshot.lost.push(name());
            continue;
        }
        match reader.convert(target, deadline.min(Instant::now() + TARGET_TIMEOUT)) {
            Ok(Some((type_, format, data))) if bytes + data.len() <= MAX_BYTES => {
                bytes += data.len();
                snapshot.contents.items.push(Item {
                    target,
                    type_,
                    format,
                    data: Arc::new(data),
                });
            }
            // Refused by its owner: it had nothing under that name after all.
            Ok(None) => {}
            Ok(Some(_)) | Err(OwnerError::Timeout) => snapshot.lost.push(name()),
            Err(e) => return Err(e),
        }
    }
    Ok(snapshot)
}

fn atom_name(conn: &RustConnection, atom: Atom) -> String {
    conn.get_atom_name(atom)
        .ok()
        .and_then(|c| c.reply().ok())
        .map(|r| String::from_utf8_lossy(&r.name).into_owned())
        .unwrap_or_else(|| format!("atom {atom}"))
}

struct Reader<'a> {
    conn: &'a RustConnection,
    win: Window,
    atoms: &'a Atoms,
    selection: Atom,
    deferred: &'a mut VecDeque<Event>,
}

impl Reader<'_> {
    /// Asks the owner for `target`: its (type, format, data), `None` if refused.
    fn convert(
        &mut self,
        target: Atom,
        deadline: Instant,
    ) -> Result<Option<(Atom, u8, Vec<u8>)>, OwnerError> {
        let property = self.atoms.snapshot_property;
        self.conn.delete_property(self.win, property)?;
        self.conn
            .convert_selection(self.win, self.selection, target, property, CURRENT_TIME)?;
        self.conn.flush()?;
        loop {
            match self.next_event(deadline)? {
                Event::SelectionNotify(n) if n.requestor == self.win && n.target == target => {
                    if n.property == x11rb::NONE {
                        return Ok(None);
                    }
                    return self.read_property(deadline).map(Some);
                }
                other => self.deferred.push_back(other),
            }
        }
    }

    fn read_property(&mut self, deadline: Instant) -> Result<(Atom, u8, Vec<u8>), OwnerError> {
        let property = self.atoms.snapshot_property;
        let reply = self
            .conn
            .get_property(true, self.win, property, AtomEnum::ANY, 0, u32::MAX / 4)?
            .reply()?;
        if reply.type_ != self.atoms.incr {
            return Ok((reply.type_, reply.format, reply.value));
        }
        // INCR (ICCCM 2.7.2): deleting the property (done by the read above)
        // asks for the next chunk; an empty chunk ends the transfer.
        let mut data = Vec::new();
        let (mut type_, mut format) = (x11rb::NONE, 8);
        loop {
            match self.next_event(deadline)? {
                Event::PropertyNotify(p)
                    if p.window == self.win
                        && p.atom == property
                        && p.state == Property::NEW_VALUE =>
                {
                    let chunk = self
                        .conn
                        .get_property(true, self.win, property, AtomEnum::ANY, 0, u32::MAX / 4)?
                        .reply()?;
                    if chunk.value.is_empty() {
                        return Ok((type_, format, data));
                    }
                    (type_, format) = (chunk.type_, chunk.format);
                    data.extend_from_slice(&chunk.value);
                    if data.len() > MAX_BYTES {
                        return Err(OwnerError::Timeout);
                    }
                }
                Event::PropertyNotify(_) => {}
                other => self.deferred.push_back(other),
            }
        }
    }

    fn next_event(&mut self, deadline: Instant) -> Result<Event, OwnerError> {
        loop {
            if let Some(event) = self.conn.poll_for_event()? {
                return Ok(event);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(OwnerError::Timeout);
            }
            super::wait_readable(self.conn, None, left)?;
        }
    }
}
