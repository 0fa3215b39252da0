//! Which app has the keyboard focus, for its per-app profile: the
//! [`FocusProbe`] port. The probes (X11, sway, Hyprland, macOS, Windows) are
//! utter-platform's.

use serde::{Deserialize, Serialize};

/// The focused app, by every name a profile rule may use for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FocusedApp {
    /// The name shown to the user: the Wayland app id, the X11 class, the
    /// macOS bundle id, the Windows executable.
    pub id: String,
    /// Other names it goes by (the X11 instance name, the executable's file
    /// name); rules match any of them.
    pub aliases: Vec<String>,
}

impl FocusedApp {
    /// `id` and the distinct, non-empty `aliases`.
    pub fn new(id: impl Into<String>, aliases: impl IntoIterator<Item = String>) -> Self {
        let id = id.into();
        let mut names: Vec<String> = Vec::new();
        for alias in aliases {
            if !alias.is_empty() && alias != id && !names.contains(&alias) {
                names.push(alias);
            }
        }
        Self { id, aliases: names }
    }

    /// Every name, the id first.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.id.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// Why the focused app is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FocusError {
    /// The desktop lets no app ask (GNOME and KDE on Wayland, no display).
    #[error("{0}")]
    Unsupported(String),
    #[error("no window has the keyboard focus")]
    NoFocus,
    #[error("cannot ask the desktop which app is focused: {0}")]
    Query(String),
}

impl FocusError {
    /// A failed ask, with the desktop's reason.
    pub fn query(e: impl std::fmt::Display) -> Self {
        Self::Query(e.to_string())
    }
}

/// Asks which app is focused; one per dictation service (it may keep a
/// connection to the display server between asks).
pub trait FocusProbe: Send {
    fn focused(&mut self) -> Result<FocusedApp, FocusError>;
}
