//! What a selection holds: each target it can be converted to, with the
//! data, its type and format — a dictated text, or a copy of everything the
//! user had copied (images, rich text, file lists).

use std::sync::Arc;

use x11rb::protocol::xproto::{Atom, AtomEnum};

use super::Atoms;

/// One conversion a selection offers.
#[derive(Debug, Clone)]
pub struct Item {
    pub target: Atom,
    /// The property type the data is written with (usually the target itself).
    pub type_: Atom,
    /// 8, 16 or 32 bits per unit.
    pub format: u8,
    pub data: Arc<Vec<u8>>,
}

/// Every target a selection offers, in the order its owner listed them.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    pub items: Vec<Item>,
}

impl Contents {
    /// A dictated text, under every text target the common toolkits ask for
    /// (GTK and Chromium: UTF8_STRING; Qt: text/plain;charset=utf-8; Xt and
    /// old clients: TEXT, STRING).
    pub fn text(text: &str, atoms: &Atoms) -> Self {
        let utf8 = Arc::new(text.as_bytes().to_vec());
        let mut items: Vec<Item> = [atoms.utf8_string, atoms.text_plain_utf8, atoms.text_plain]
            .into_iter()
            .map(|target| Item {
                target,
                type_: target,
                format: 8,
                data: utf8.clone(),
            })
            .collect();
        // TEXT lets the owner pick the encoding: UTF-8.
        items.push(Item {
            target: atoms.text,
            type_: atoms.utf8_string,
            format: 8,
            data: utf8.clone(),
        });
        // STRING is ISO Latin-1 by definition; text beyond it is sent as UTF-8
        // (what other owners do) rather than refused.
        let latin1: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(c).ok()).collect();
        items.push(Item {
            target: AtomEnum::STRING.into(),
            type_: AtomEnum::STRING.into(),
            format: 8,
            data: latin1.map(Arc::new).unwrap_or(utf8),
        });
        Self { items }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, target: Atom) -> Option<&Item> {
        self.items.iter().find(|item| item.target == target)
    }

    /// Whether `target` is one of the text targets [`Contents::text`] serves.
    pub fn is_text_target(target: Atom, atoms: &Atoms) -> bool {
        target == atoms.utf8_string
            || target == atoms.text_plain_utf8
            || target == atoms.text_plain
            || target == atoms.text
            || target == Atom::from(AtomEnum::STRING)
    }
}
