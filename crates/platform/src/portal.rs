//! Push-to-talk on Wayland through the XDG Desktop Portal's GlobalShortcuts
//! interface (KDE Plasma 5.27+, GNOME 48+, Hyprland): the desktop asks the
//! user to confirm the shortcut once, then reports `Activated` (press) and
//! `Deactivated` (release), which become `Control::Key` messages.
//!
//! Protocol (flatpak.github.io/xdg-desktop-portal, GlobalShortcuts v1):
//! `CreateSession` and `BindShortcuts` answer through a `Request` object whose
//! `Response` signal carries the result; its path is predictable from our
//! `handle_token`, so we subscribe before calling, as the spec advises.

use std::collections::HashMap;

use crossbeam_channel::Sender;
use zbus::blocking::{Connection, Proxy};
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

use crate::control::{Control, TriggerKey};

const DESTINATION: &str = "org.freedesktop.portal.Desktop";
const PATH: &str = "/org/freedesktop/portal/desktop";
const INTERFACE: &str = "org.freedesktop.portal.GlobalShortcuts";
/// The id of our one shortcut.
pub const SHORTCUT_ID: &str = "dictate";

/// A bound shortcut; its presses and releases flow until this is dropped
/// (dropping the connection ends the portal session).
pub struct PortalShortcut {
    _connection: Connection,
}

/// Why the portal could not bind our shortcut.
#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    #[error("{what}: {source}")]
    Bus {
        what: &'static str,
        source: Box<zbus::Error>,
    },
    #[error("the desktop has no GlobalShortcuts portal ({0})")]
    NoPortal(Box<zbus::Error>),
    #[error("{method}: the portal never answered")]
    NoAnswer { method: &'static str },
    #[error("{method}: not allowed (cancelled in the desktop's dialog)")]
    Cancelled { method: &'static str },
    #[error("{method}: the desktop refused it (code {code})")]
    Refused { method: &'static str, code: u32 },
    #[error("CreateSession: {0}")]
    BadSession(String),
    #[error("the desktop has no RemoteDesktop portal ({0})")]
    NoRemoteDesktop(Box<zbus::Error>),
    /// The portal answered, but not with something we can use.
    #[error("{0}")]
    Unusable(String),
    #[error("cannot start the portal thread: {0}")]
    Thread(std::io::Error),
}

pub(super) fn err(what: &'static str) -> impl Fn(zbus::Error) -> PortalError {
    move |source| PortalError::Bus {
        what,
        source: Box::new(source),
    }
}

/// A portal request: subscribe to its `Response`, make the call, wait for the answer.
pub(super) fn request<B>(
    connection: &Connection,
    portal: &Proxy<'_>,
    method: &'static str,
    token: &str,
    body: &B,
) -> Result<HashMap<String, OwnedValue>, PortalError>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let sender = connection
        .unique_name()
        .ok_or(PortalError::BadSession(
            "no unique name on the session bus".into(),
        ))?
        .trim_start_matches(':')
        .replace('.', "_");
    let path = format!("{PATH}/request/{sender}/{token}");
    let request = Proxy::new(
        connection,
        DESTINATION,
        path.as_str(),
        "org.freedesktop.portal.Request",
    )
    .map_err(err("portal request"))?;
    let mut responses = request
        .receive_signal("Response")
        .map_err(err("portal request"))?;
    let _: OwnedObjectPath = portal.call(method, body).map_err(err(method))?;
    let message = responses.next().ok_or(PortalError::NoAnswer { method })?;
    let (code, results): (u32, HashMap<String, OwnedValue>) =
        message.body().deserialize().map_err(err(method))?;
    match code {
        0 => Ok(results),
        1 => Err(PortalError::Cancelled { method }),
        _ => Err(PortalError::Refused { method, code }),
    }
}

/// The session a `CreateSession` answer names, as a string and as a path.
fn session_handle(
    answer: &HashMap<String, OwnedValue>,
) -> Result<(String, OwnedObjectPath), PortalError> {
    let handle = answer
        .get("session_handle")
        .and_then(|v| {
            String::try_from(v.try_clone().ok()?).ok().or_else(|| {
                OwnedObjectPath::try_from(v.try_clone().ok()?)
                    .ok()
                    .map(|p| p.to_string())
            })
        })
        .ok_or(PortalError::BadSession(
            "no session handle in the answer".into(),
        ))?;
    let path = OwnedObjectPath::try_from(handle.clone())
        .map_err(|e| PortalError::BadSession(format!("bad session handle: {e}")))?;
    Ok((handle, path))
}

/// A portal `interface` on the session bus (`what` names it in errors) and
/// its `version` property: not every desktop has every interface, and that
/// property is how to tell (`missing` says so when it cannot be read).
pub(super) fn open(
    interface: &'static str,
    what: &'static str,
    missing: fn(Box<zbus::Error>) -> PortalError,
) -> Result<(Connection, Proxy<'static>, u32), PortalError> {
    let connection = Connection::session().map_err(err("the session bus"))?;
    let portal = Proxy::new(&connection, DESTINATION, PATH, interface).map_err(err(what))?;
    let version = portal
        .get_property::<u32>("version")
        .map_err(|e| missing(Box::new(e)))?;
    Ok((connection, portal, version))
}

/// `CreateSession` with our tokens (`{token}_session` for the request,
/// `token` for the session): the session's handle and path.
pub(super) fn create_session(
    connection: &Connection,
    portal: &Proxy<'_>,
    token: &str,
) -> Result<(String, OwnedObjectPath), PortalError> {
    let request_token = format!("{token}_session");
    let options: HashMap<&str, Value> = HashMap::from([
        ("handle_token", Value::from(request_token.as_str())),
        ("session_handle_token", Value::from(token)),
    ]);
    let answer = request(
        connection,
        portal,
        "CreateSession",
        &request_token,
        &(options,),
    )?;
    session_handle(&answer)
}

/// The GlobalShortcuts portal, if the desktop has one.
fn global_shortcuts() -> Result<(Connection, Proxy<'static>), PortalError> {
    let (connection, portal, _) = open(
        INTERFACE,
        "the GlobalShortcuts portal",
        PortalError::NoPortal,
    )?;
    Ok((connection, portal))
}

/// Whether the desktop has the GlobalShortcuts portal, without opening a
/// session (for `utter doctor`).
pub fn available() -> Result<(), PortalError> {
    global_shortcuts().map(|_| ())
}

impl PortalShortcut {
    /// Binds our shortcut, suggesting `preferred_trigger` (the portal's
    /// format, e.g. `CTRL+SHIFT+space`); its events go to `control`.
    pub fn bind(preferred_trigger: &str, control: Sender<Control>) -> Result<Self, PortalError> {
        let (connection, portal) = global_shortcuts()?;
        let mut signals = portal
            .receive_all_signals()
            .map_err(err("GlobalShortcuts signals"))?;
        let (session_handle, session_path) = create_session(&connection, &portal, "utter")?;

        let shortcut: HashMap<&str, Value> = HashMap::from([
            ("description", Value::from("Dictate (hold to talk)")),
            ("preferred_trigger", Value::from(preferred_trigger)),
        ]);
        let options: HashMap<&str, Value> =
            HashMap::from([("handle_token", Value::from("utter_bind"))]);
        request(
            &connection,
            &portal,
            "BindShortcuts",
            "utter_bind",
            &(&session_path, vec![(SHORTCUT_ID, shortcut)], "", options),
        )?;

        std::thread::Builder::new()
            .name("utter-portal".into())
            .spawn(move || {
                for message in signals.by_ref() {
                    let header = message.header();
                    let pressed = match header.member().map(|m| m.as_str()) {
                        Some("Activated") => true,
                        Some("Deactivated") => false,
                        _ => continue,
                    };
                    let body = message.body();
                    let Ok((session, id, _, _)) = body.deserialize::<(
                        OwnedObjectPath,
                        String,
                        u64,
                        HashMap<String, OwnedValue>,
                    )>() else {
                        continue;
                    };
                    if session.as_str() == session_handle && id == SHORTCUT_ID {
                        let key = TriggerKey::Main;
                        if control.send(Control::Key { key, pressed }).is_err() {
                            break;
                        }
                    }
                }
            })
            .map_err(PortalError::Thread)?;
        Ok(Self {
            _connection: connection,
        })
    }
}

/// Our hotkey (`ctrl+shift+space`) in the portal's trigger format
/// (`CTRL+SHIFT+space`, per the shortcuts spec of freedesktop.org).
pub fn trigger_for(hotkey: &str) -> String {
    hotkey
        .split('+')
        .map(|part| match part.trim().to_ascii_lowercase().as_str() {
            "ctrl" | "control" => "CTRL".to_string(),
            "shift" => "SHIFT".to_string(),
            "alt" | "option" => "ALT".to_string(),
            "super" | "cmd" | "meta" | "logo" => "LOGO".to_string(),
            key => key.to_string(),
        })
        .collect::<Vec<_>>()
        .join("+")
}

#[cfg(test)]
mod tests {
    #[test]
    fn hotkeys_become_portal_triggers() {
        assert_eq!(super::trigger_for("ctrl+shift+space"), "CTRL+SHIFT+space");
        assert_eq!(super::trigger_for("super+alt+F9"), "LOGO+ALT+f9");
    }
}
