//! Which desktop this process is running in. Global hotkeys and simulated
//! input work differently in each, so every platform path starts here.

use std::fmt;

/// The kind of graphical session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesktopSession {
    /// Linux/BSD X11: global-hotkey and XTest work everywhere.
    X11,
    /// A Wayland compositor; `compositor` as far as the environment tells
    /// (sway, Hyprland, GNOME, KDE...). `xwayland`: DISPLAY is also set, but
    /// X11 grabs and XTest only reach XWayland windows there.
    Wayland {
        compositor: Option<String>,
        xwayland: bool,
    },
    MacOs,
    Windows,
    /// No display at all (SSH, CI): no hotkeys, no paste.
    Headless,
}

impl DesktopSession {
    /// The session of this process, from its environment.
    pub fn detect() -> Self {
        Self::from_env(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
    }

    /// The decision itself, over any environment (tested without a desktop).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Self {
        if cfg!(target_os = "macos") {
            return Self::MacOs;
        }
        if cfg!(windows) {
            return Self::Windows;
        }
        let session_type = var("XDG_SESSION_TYPE").map(|s| s.to_ascii_lowercase());
        let wayland =
            var("WAYLAND_DISPLAY").is_some() || session_type.as_deref() == Some("wayland");
        let x11 = var("DISPLAY").is_some();
        if wayland {
            let compositor = if var("SWAYSOCK").is_some() {
                Some("sway".to_string())
            } else if var("HYPRLAND_INSTANCE_SIGNATURE").is_some() {
                Some("Hyprland".to_string())
            } else {
                var("XDG_CURRENT_DESKTOP")
            };
            return Self::Wayland {
                compositor,
                xwayland: x11,
            };
        }
        if x11 {
            Self::X11
        } else {
            Self::Headless
        }
    }

    /// The Wayland compositor's name, where the environment tells it.
    pub fn compositor(&self) -> Option<&str> {
        match self {
            Self::Wayland { compositor, .. } => compositor.as_deref(),
            _ => None,
        }
    }

    pub fn is_wayland(&self) -> bool {
        matches!(self, Self::Wayland { .. })
    }
}

impl fmt::Display for DesktopSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::X11 => write!(f, "X11"),
            Self::Wayland { compositor, .. } => match compositor {
                Some(c) => write!(f, "Wayland ({c})"),
                None => write!(f, "Wayland"),
            },
            Self::MacOs => write!(f, "macOS"),
            Self::Windows => write!(f, "Windows"),
            Self::Headless => write!(f, "no display"),
        }
    }
}

#[cfg(all(test, desktop_linux))]
mod tests {
    use super::*;

    fn session(vars: &[(&str, &str)]) -> DesktopSession {
        DesktopSession::from_env(|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn wayland_wins_over_xwayland_display() {
        assert_eq!(
            session(&[
                ("WAYLAND_DISPLAY", "wayland-1"),
                ("DISPLAY", ":0"),
                ("SWAYSOCK", "/x")
            ]),
            DesktopSession::Wayland {
                compositor: Some("sway".into()),
                xwayland: true
            }
        );
        assert_eq!(
            session(&[
                ("XDG_SESSION_TYPE", "wayland"),
                ("XDG_CURRENT_DESKTOP", "GNOME")
            ]),
            DesktopSession::Wayland {
                compositor: Some("GNOME".into()),
                xwayland: false
            }
        );
    }

    #[test]
    fn x11_and_headless() {
        assert_eq!(session(&[("DISPLAY", ":0")]), DesktopSession::X11);
        assert_eq!(
            session(&[("DISPLAY", ":0"), ("XDG_SESSION_TYPE", "x11")]),
            DesktopSession::X11
        );
        assert_eq!(session(&[]), DesktopSession::Headless);
    }
}
