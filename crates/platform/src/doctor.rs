//! What works in this session, one line per capability, and what to do about
//! what does not (`utter doctor`, and the app's status).

use serde::Serialize;

use super::desktop::DesktopSession;
use super::focus::{FocusProbe, FocusedApp, SessionFocus};
use super::hotkeys::{Hotkeys, NoHotkeys};
use super::output::{self, OutputMethod};

/// One capability: working or not, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Capability {
    pub name: String,
    pub ok: bool,
    /// What is used when it works; why not and what to do when it does not.
    pub detail: String,
}

impl Capability {
    /// Working (with how) or not (with why).
    pub fn new<E: std::fmt::Display>(name: &str, result: Result<String, E>) -> Self {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(e) => (false, e.to_string()),
        };
        Self {
            name: name.to_string(),
            ok,
            detail,
        }
    }
}

/// The desktop-dependent capabilities: hotkey, paste, type, clipboard.
/// Nothing is registered; on Wayland a key simulator is opened and dropped to
/// learn whether the compositor offers a virtual keyboard.
pub fn desktop(session: &DesktopSession) -> Vec<Capability> {
    let hotkey = hotkey_availability(session).map(|how| match session {
        _ if !how.is_empty() => how.to_string(),
        DesktopSession::X11 => "global hotkeys through X11 grabs".to_string(),
        DesktopSession::MacOs => "global hotkeys (Carbon RegisterEventHotKey, main thread)".into(),
        DesktopSession::Windows => {
            "global hotkeys (RegisterHotKey, main-thread message loop)".into()
        }
        _ => String::new(),
    });
    let how = |m: OutputMethod| {
        match (m, session) {
        (OutputMethod::Paste, DesktopSession::X11) => {
            "clipboard + simulated Ctrl+V (XTest); the old clipboard comes back once the app has read ours"
        }
        (OutputMethod::Paste, DesktopSession::MacOs) => {
            "clipboard + simulated Cmd+V; needs Accessibility permission; clipboard restored after 300 ms"
        }
        (OutputMethod::Paste, DesktopSession::Wayland { .. }) => {
            "clipboard + Ctrl+V through the virtual-keyboard protocol; clipboard restored after 1 s"
        }
        (OutputMethod::Paste, _) => "clipboard + simulated Ctrl+V; clipboard restored after 300 ms",
        (OutputMethod::Type, DesktopSession::MacOs) => {
            "simulated key presses; needs Accessibility permission"
        }
        (OutputMethod::Type, DesktopSession::Wayland { .. }) => {
            "key presses through the virtual-keyboard protocol"
        }
        (OutputMethod::Type, _) => "simulated key presses",
        (OutputMethod::Clipboard, DesktopSession::Wayland { .. }) => {
            "the Wayland data-control clipboard (XWayland's where the compositor lacks it)"
        }
        (OutputMethod::Clipboard, _) => "the text is left on the clipboard",
        (OutputMethod::Stdout, _) => "printed on standard output",
    }
    };
    let mut list = vec![
        Capability::new("session", Ok::<_, String>(session.to_string())),
        Capability::new("hotkey", hotkey),
        Capability::new(
            "ptt",
            Ok::<_, String>(format!(
                "`utter ptt press|release|toggle|cancel` talks to the running dictation at {}",
                super::ptt::socket_path().display()
            )),
        ),
    ];
    for method in [
        OutputMethod::Paste,
        OutputMethod::Type,
        OutputMethod::Clipboard,
    ] {
        list.push(Capability::new(
            method.name(),
            output::probe(method, session).map(|path| match path {
                output::KeyPath::Native => how(method).to_string(),
                output::KeyPath::RemoteDesktop if method == OutputMethod::Type => {
                    "key presses through the RemoteDesktop portal and libei (the desktop asks \
                     once; characters the keyboard layout lacks cannot be typed)"
                        .to_string()
                }
                output::KeyPath::RemoteDesktop => "clipboard + Ctrl+V through the RemoteDesktop \
                    portal and libei (the desktop asks once)"
                    .to_string(),
            }),
        ));
    }
    list
}

/// Which app has the focus now (from a terminal: that terminal) and the
/// profile `profile_for` says would apply to a dictation into it (the caller
/// knows the profiles: the platform layer does not import them); where the
/// desktop cannot tell, why, and that the default settings apply.
pub fn focus(
    session: &DesktopSession,
    profile_for: impl Fn(&FocusedApp) -> Option<String>,
) -> Capability {
    let mut probe = SessionFocus::new(session.clone(), None);
    Capability::new(
        "focus",
        probe.focused().map(|app| {
            let names = match app.aliases.is_empty() {
                true => app.id.clone(),
                false => format!("{} ({})", app.id, app.aliases.join(", ")),
            };
            match profile_for(&app) {
                Some(name) => format!("{names} → profile `{name}`"),
                None => format!("{names} → no profile (the settings apply)"),
            }
        }),
    )
}

/// On Wayland, whether the GlobalShortcuts portal can stand in for the grabs
/// (asked without binding anything); elsewhere, the grabs' own check.
fn hotkey_availability(session: &DesktopSession) -> Result<&'static str, NoHotkeys> {
    match (Hotkeys::availability(session), session) {
        #[cfg(desktop_linux)]
        (Err(NoHotkeys::Wayland { compositor, .. }), DesktopSession::Wayland { .. }) => {
            match super::portal::available() {
                Ok(()) => Ok(
                    "the GlobalShortcuts portal: the desktop reports press and release \
                     (it may ask you to confirm the shortcut once)",
                ),
                Err(e) => Err(NoHotkeys::Wayland {
                    compositor,
                    portal: Some(e.to_string()),
                }),
            }
        }
        (result, _) => result.map(|()| ""),
    }
}

/// The first problem among `capabilities` that dictation depends on, as one
/// line for a status bar.
pub fn first_problem(capabilities: &[Capability]) -> Option<String> {
    capabilities
        .iter()
        .find(|c| !c.ok && (c.name == "hotkey" || c.name == "paste"))
        .map(|c| format!("{}: {}", c.name, c.detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wayland_names_what_fails_and_what_to_do() {
        let caps = desktop(&DesktopSession::Wayland {
            compositor: Some("sway".into()),
            xwayland: false,
        });
        let get = |n: &str| caps.iter().find(|c| c.name == n).unwrap().clone();
        // No session bus here, so no GlobalShortcuts portal either (tests/portal.rs has one).
        assert!(!get("hotkey").ok && get("hotkey").detail.contains("Wayland session (sway)"));
        assert!(
            get("hotkey")
                .detail
                .contains("GlobalShortcuts portal did not help"),
            "{}",
            get("hotkey").detail
        );
        // No compositor answers in a unit test: no virtual keyboard, so clipboard only.
        assert!(get("paste").ok || get("paste").detail.contains("clipboard instead"));
        assert!(get("clipboard").ok);
        assert!(get("ptt").ok);
        assert!(first_problem(&caps).unwrap().starts_with("hotkey: "));
    }

    #[test]
    fn macos_and_windows_claim_hotkeys_and_paste() {
        for session in [DesktopSession::MacOs, DesktopSession::Windows] {
            let caps = desktop(&session);
            assert!(caps.iter().all(|c| c.ok), "{caps:?}");
            assert_eq!(first_problem(&caps), None);
        }
    }
}
