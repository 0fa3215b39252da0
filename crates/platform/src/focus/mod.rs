//! Which app has the keyboard focus, so a dictation can follow that app's
//! profile (the core's `profiles` module). Asked once per dictation, at the key press:
//! the profile of the app the user started in applies, wherever the focus
//! goes while they speak.
//!
//! - X11: `_NET_ACTIVE_WINDOW` (or, without a window manager, the input
//!   focus) → `WM_CLASS`, and `_NET_WM_PID` → the executable.
//! - sway: its IPC `GET_TREE`, the focused node's `app_id` (or the XWayland
//!   window's class). Hyprland: `j/activewindow` on its IPC socket.
//! - GNOME and KDE on Wayland: no way an app may ask (by design); said so,
//!   and the default settings apply.
//! - macOS: `NSWorkspace.frontmostApplication`'s bundle id, on the main thread.
//! - Windows: `GetForegroundWindow` → the owning process's image name.

#[cfg(desktop_linux)]
mod hyprland;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(desktop_linux)]
mod sway;
#[cfg(windows)]
mod windows;
#[cfg(desktop_linux)]
mod x11;

pub use utter_ports::focus::{FocusError, FocusProbe, FocusedApp};

use super::desktop::DesktopSession;
use super::MainThread;

/// The focus as this desktop session tells it.
pub struct SessionFocus {
    session: DesktopSession,
    main_thread: Option<MainThread>,
    #[cfg(desktop_linux)]
    x11: Option<x11::Connection>,
}

impl SessionFocus {
    /// `main_thread` is where macOS wants AppKit asked.
    pub fn new(session: DesktopSession, main_thread: Option<MainThread>) -> Self {
        Self {
            session,
            main_thread,
            #[cfg(desktop_linux)]
            x11: None,
        }
    }
}

impl FocusProbe for SessionFocus {
    fn focused(&mut self) -> Result<FocusedApp, FocusError> {
        let _ = &self.main_thread;
        match &self.session {
            DesktopSession::Headless => Err(FocusError::Unsupported(
                "there is no display (DISPLAY and WAYLAND_DISPLAY are unset)".into(),
            )),
            #[cfg(desktop_linux)]
            DesktopSession::X11 => {
                if self.x11.is_none() {
                    self.x11 = Some(x11::Connection::open()?);
                }
                let result = self.x11.as_ref().map(x11::Connection::focused);
                if let Some(Err(FocusError::Query(_))) = &result {
                    self.x11 = None; // reconnect next time (the server restarted?)
                }
                result.unwrap_or(Err(FocusError::NoFocus))
            }
            #[cfg(desktop_linux)]
            DesktopSession::Wayland { compositor, .. } => match compositor.as_deref() {
                Some("sway") => sway::focused(),
                Some("Hyprland") => hyprland::focused(),
                other => Err(FocusError::Unsupported(wayland_unsupported(other))),
            },
            #[cfg(target_os = "macos")]
            DesktopSession::MacOs => macos::focused(self.main_thread.as_ref()),
            #[cfg(windows)]
            DesktopSession::Windows => windows::focused(),
            #[allow(unreachable_patterns)]
            other => Err(FocusError::Unsupported(format!(
                "the focused app cannot be known on {other}"
            ))),
        }
    }
}

/// What the user is told on a Wayland desktop without a focus query.
#[cfg(desktop_linux)]
fn wayland_unsupported(compositor: Option<&str>) -> String {
    let desktop = compositor.unwrap_or("this Wayland desktop");
    format!(
        "{desktop} does not tell apps which window is focused (Wayland keeps that private; \
         only sway and Hyprland offer it): per-app profiles cannot switch here, the default \
         settings apply to every app"
    )
}

/// The file name of a process's executable (`/proc/PID/exe`), for rules
/// written against it.
#[cfg(desktop_linux)]
fn executable_of(pid: u32) -> Option<String> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    Some(exe.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_id_then_distinct_aliases() {
        let app = FocusedApp::new(
            "XTerm",
            [
                "xterm".to_string(),
                "XTerm".into(),
                String::new(),
                "xterm".into(),
            ],
        );
        assert_eq!(app.names().collect::<Vec<_>>(), ["XTerm", "xterm"]);
    }

    #[test]
    fn without_a_display_the_focus_is_unsupported_and_says_why() {
        let err = SessionFocus::new(DesktopSession::Headless, None)
            .focused()
            .unwrap_err();
        assert!(matches!(err, FocusError::Unsupported(_)), "{err}");
        assert!(err.to_string().contains("no display"), "{err}");
    }

    #[cfg(desktop_linux)]
    #[test]
    fn gnome_on_wayland_says_profiles_cannot_switch() {
        let session = DesktopSession::Wayland {
            compositor: Some("GNOME".into()),
            xwayland: true,
        };
        let err = SessionFocus::new(session, None).focused().unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("GNOME does not tell apps"), "{text}");
        assert!(text.contains("default settings apply"), "{text}");
    }
}
