//! The whole macOS pasteboard across a paste, through NSPasteboard
//! (<https://developer.apple.com/documentation/appkit/nspasteboard>).
//!
//! Before the paste every item of the general pasteboard is copied type by
//! type (`pasteboardItems`, each item's `types` and `dataForType:`);
//! afterwards the pasteboard is cleared and new NSPasteboardItems carrying the
//! same data are written (`clearContents`, `writeObjects:`). New items: Apple's
//! NSPasteboardItem docs say an item read from a pasteboard is only valid until
//! that pasteboard's contents change, so the old ones cannot be written back.
//!
//! Threads: NSPasteboard is not main-thread-only. AppKit's headers mark no
//! main-actor requirement on it, and objc2-app-kit, which carries those marks
//! into Rust (`MainThreadOnly` classes need a `MainThreadMarker`), asks for
//! none on NSPasteboard or NSPasteboardItem; arboard uses it from any thread,
//! as Utter's paste does on its service thread. So this runs on the caller's
//! thread, unlike the paste keystroke (main thread: enigo's TIS lookup).

use std::time::Instant;

use objc2::rc::Retained;
use objc2::runtime::ProtocolObject;
use objc2_app_kit::{NSPasteboard, NSPasteboardItem, NSPasteboardWriting};
use objc2_foundation::{NSArray, NSData, NSString};

use crate::{MAX_BYTES, SNAPSHOT_BUDGET};

/// The nspasteboard.org convention for "this content will be replaced in a
/// moment: do not record it", which clipboard managers honour.
const TRANSIENT_TYPE: &str = "org.nspasteboard.TransientType";

/// Why the pasteboard could not be given back.
#[derive(Debug, thiserror::Error)]
pub enum ClipboardError {
    #[error("the pasteboard refused the restored items (writeObjects: returned NO)")]
    Write,
}

/// What the pasteboard held before a paste: its items, each with its types'
/// data in the owner's order, and the types that could not be copied.
#[derive(Debug, Default)]
pub struct Snapshot {
    items: Vec<Vec<(String, Vec<u8>)>>,
    lost: Vec<String>,
}

impl Snapshot {
    /// Copies every type of every item on the general pasteboard. An empty
    /// pasteboard is an empty snapshot, not an error; a type whose data its
    /// owner does not provide (a file promise) is lost.
    pub fn take() -> Result<Self, ClipboardError> {
        let deadline = Instant::now() + SNAPSHOT_BUDGET;
        let pasteboard = NSPasteboard::generalPasteboard();
        let mut snapshot = Self::default();
        let Some(items) = pasteboard.pasteboardItems() else {
            return Ok(snapshot);
        };
        let mut bytes = 0usize;
        for item in items.iter() {
            let mut kept = Vec::new();
            for kind in item.types().iter() {
                let name = kind.to_string();
                let left = MAX_BYTES.saturating_sub(bytes);
                let why = if Instant::now() >= deadline {
                    "the copy ran out of time"
                } else {
                    // Data an owner promised is asked for now, which can take a while.
                    match item.dataForType(&kind) {
                        Some(data) if data.len() <= left => {
                            bytes += data.len();
                            kept.push((name, data.to_vec()));
                            continue;
                        }
                        Some(_) => "it is too large",
                        None => "its owner did not provide it",
                    }
                };
                tracing::debug!("pasteboard type {name} not kept: {why}");
                snapshot.lost.push(name);
            }
            if !kept.is_empty() {
                snapshot.items.push(kept);
            }
        }
        Ok(snapshot)
    }

    /// The types that could not be copied.
    pub fn lost(&self) -> &[String] {
        &self.lost
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The types this snapshot holds, item after item.
    pub fn formats(&self) -> impl Iterator<Item = String> + '_ {
        self.items.iter().flatten().map(|(name, _)| name.clone())
    }

    /// Makes the copy the pasteboard again.
    pub fn restore(&mut self) -> Result<(), ClipboardError> {
        let objects: Vec<Retained<ProtocolObject<dyn NSPasteboardWriting>>> = self
            .items
            .iter()
            .map(|types| {
                let item = NSPasteboardItem::new();
                for (name, data) in types {
                    let kind = NSString::from_str(name);
                    if !item.setData_forType(&NSData::with_bytes(data), &kind) {
                        tracing::warn!("pasteboard type {name} not given back");
                    }
                }
                ProtocolObject::from_retained(item)
            })
            .collect();
        let pasteboard = NSPasteboard::generalPasteboard();
        // "This is the first step in providing data on the pasteboard"
        // (clearContents docs).
        pasteboard.clearContents();
        if pasteboard.writeObjects(&NSArray::from_retained_slice(&objects)) {
            Ok(())
        } else {
            Err(ClipboardError::Write)
        }
    }
}

/// Marks what is on the general pasteboard now (Utter's dictated text, put
/// there by arboard a moment ago) as transient, so clipboard managers that
/// follow nspasteboard.org do not record a text that is about to be replaced.
pub fn mark_transient() {
    let pasteboard = NSPasteboard::generalPasteboard();
    // setString:forType: sets a representation "for the first item on the
    // receiver" (its docs): the text's item.
    if !pasteboard.setString_forType(&NSString::from_str(""), &NSString::from_str(TRANSIENT_TYPE)) {
        tracing::debug!("cannot mark the pasted text {TRANSIENT_TYPE}");
    }
}
