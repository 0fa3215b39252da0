//! Answering other programs' requests for a selection we own (ICCCM 2.2,
//! 2.6.2): TARGETS, TIMESTAMP, MULTIPLE (several targets in one request, as
//! clipboard managers take a copy) and every target of its contents, large
//! data in INCR chunks.

use std::sync::Arc;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ChangeWindowAttributesAux, ConnectionExt, EventMask, PropMode, Property,
    PropertyNotifyEvent, SelectionNotifyEvent, SelectionRequestEvent, Timestamp, Window,
    SELECTION_NOTIFY_EVENT,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::contents::{Contents, Item};
use super::{Atoms, OwnerError};

/// Data above this goes in INCR chunks of this size: owners commonly switch
/// at the classic request limit, and every toolkit reads INCR.
const CHUNK_BYTES: usize = 256 * 1024;

/// A large item being sent to one requestor, chunk by chunk.
struct Transfer {
    requestor: Window,
    property: Atom,
    item: Item,
    offset: usize,
}

/// Serves requests; keeps the INCR transfers in flight.
#[derive(Default)]
pub struct Server {
    transfers: Vec<Transfer>,
}

/// What a request asked for, for the owner's bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// A text target was written: a paste reading the text.
    Text,
    /// Anything else (the target list, an image...), or a refusal.
    Other,
}

impl Server {
    /// Answers `req` from `contents`, owned since `owned_at`.
    pub fn answer(
        &mut self,
        conn: &RustConnection,
        atoms: &Atoms,
        req: &SelectionRequestEvent,
        contents: &Contents,
        owned_at: Timestamp,
    ) -> Result<Served, OwnerError> {
        // Obsolete clients name no property: the target is the property then.
        let property = if req.property == x11rb::NONE {
            req.target
        } else {
            req.property
        };
        let mut served = Served::Other;
        let ok = if req.target == atoms.targets {
            let mut list = vec![atoms.targets, atoms.timestamp];
            list.extend(contents.items.iter().map(|item| item.target));
            conn.change_property32(
                PropMode::REPLACE,
                req.requestor,
                property,
                AtomEnum::ATOM,
                &list,
            )?;
            true
        } else if req.target == atoms.timestamp {
            conn.change_property32(
                PropMode::REPLACE,
                req.requestor,
                property,
                AtomEnum::INTEGER,
                &[owned_at],
            )?;
            true
        } else if req.target == atoms.multiple && req.property != x11rb::NONE {
            served = self.answer_multiple(conn, atoms, req.requestor, property, contents)?;
            true
        } else if let Some(item) = contents.get(req.target) {
            self.write(conn, atoms, req.requestor, property, item)?;
            if Contents::is_text_target(req.target, atoms) {
                served = Served::Text;
            }
            true
        } else {
            false
        };
        notify(conn, req, if ok { property } else { x11rb::NONE })?;
        conn.flush()?;
        Ok(served)
    }

    /// MULTIPLE: the requestor's `property` lists (target, property) pairs
    /// (type ATOM_PAIR); each target's data goes in its property, and the
    /// property of a target we cannot give is replaced by None in the list.
    fn answer_multiple(
        &mut self,
        conn: &RustConnection,
        atoms: &Atoms,
        requestor: Window,
        property: Atom,
        contents: &Contents,
    ) -> Result<Served, OwnerError> {
        let asked = conn
            .get_property(false, requestor, property, AtomEnum::ANY, 0, u32::MAX / 4)?
            .reply()?;
        let mut pairs: Vec<u32> = asked.value32().map(Iterator::collect).unwrap_or_default();
        let mut served = Served::Other;
        for pair in pairs.chunks_exact_mut(2) {
            let (target, into) = (pair[0], pair[1]);
            match contents.get(target) {
                Some(item) if into != x11rb::NONE => {
                    self.write(conn, atoms, requestor, into, item)?;
                    if Contents::is_text_target(target, atoms) {
                        served = Served::Text;
                    }
                }
                _ => pair[1] = x11rb::NONE,
            }
        }
        conn.change_property32(PropMode::REPLACE, requestor, property, asked.type_, &pairs)?;
        Ok(served)
    }

    fn write(
        &mut self,
        conn: &RustConnection,
        atoms: &Atoms,
        requestor: Window,
        property: Atom,
        item: &Item,
    ) -> Result<(), OwnerError> {
        if item.data.len() <= CHUNK_BYTES {
            return change(
                conn,
                requestor,
                property,
                item.type_,
                item.format,
                &item.data,
            );
        }
        // INCR: announce the size, then a chunk each time the requestor deletes the property.
        conn.change_window_attributes(
            requestor,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        let size = u32::try_from(item.data.len()).unwrap_or(u32::MAX);
        conn.change_property32(PropMode::REPLACE, requestor, property, atoms.incr, &[size])?;
        self.transfers
            .retain(|t| (t.requestor, t.property) != (requestor, property));
        self.transfers.push(Transfer {
            requestor,
            property,
            item: item.clone(),
            offset: 0,
        });
        Ok(())
    }

    /// A requestor deleted a property: the next INCR chunk, if it is one of ours.
    pub fn property_changed(
        &mut self,
        conn: &RustConnection,
        event: &PropertyNotifyEvent,
    ) -> Result<(), OwnerError> {
        if event.state != Property::DELETE {
            return Ok(());
        }
        let Some(index) = self
            .transfers
            .iter()
            .position(|t| (t.requestor, t.property) == (event.window, event.atom))
        else {
            return Ok(());
        };
        let t = &mut self.transfers[index];
        let end = (t.offset + CHUNK_BYTES).min(t.item.data.len());
        let chunk = Arc::clone(&t.item.data);
        change(
            conn,
            t.requestor,
            t.property,
            t.item.type_,
            t.item.format,
            &chunk[t.offset..end],
        )?;
        if t.offset == end {
            // The empty chunk just written ends the transfer.
            let requestor = t.requestor;
            self.transfers.remove(index);
            if !self.transfers.iter().any(|t| t.requestor == requestor) {
                conn.change_window_attributes(
                    requestor,
                    &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT),
                )?;
            }
        } else {
            t.offset = end;
        }
        conn.flush()?;
        Ok(())
    }
}

/// Refuses `req`: a selection we no longer own.
pub fn refuse(conn: &RustConnection, req: &SelectionRequestEvent) -> Result<(), OwnerError> {
    notify(conn, req, x11rb::NONE)
}

/// Tells the requestor its conversion is done (in `property`) or refused (NONE).
fn notify(
    conn: &RustConnection,
    req: &SelectionRequestEvent,
    property: Atom,
) -> Result<(), OwnerError> {
    let event = SelectionNotifyEvent {
        response_type: SELECTION_NOTIFY_EVENT,
        sequence: 0,
        time: req.time,
        requestor: req.requestor,
        selection: req.selection,
        target: req.target,
        property,
    };
    conn.send_event(false, req.requestor, EventMask::NO_EVENT, event)?;
    Ok(())
}

fn change(
    conn: &RustConnection,
    window: Window,
    property: Atom,
    type_: Atom,
    format: u8,
    data: &[u8],
) -> Result<(), OwnerError> {
    let unit = usize::from(format / 8).max(1);
    let len = u32::try_from(data.len() / unit).unwrap_or(u32::MAX);
    conn.change_property(
        PropMode::REPLACE,
        window,
        property,
        type_,
        format,
        len,
        data,
    )?;
    Ok(())
}
