//! Key presses on GNOME and KDE Wayland: the XDG Desktop Portal's
//! RemoteDesktop interface hands us a libei socket (`ConnectToEIS`, interface
//! version 2) on which [`crate::output::ei_keys`] sends the paste
//! keystroke. These desktops offer apps no virtual-keyboard protocol.
//!
//! Protocol (flatpak.github.io/xdg-desktop-portal, RemoteDesktop):
//! `CreateSession` → `SelectDevices` (keyboard; `persist_mode` 2 asks to keep
//! the permission "until revoked" and the answer to `Start` carries a
//! `restore_token`) → `Start` (the desktop shows its dialog the first time) →
//! `ConnectToEIS`. The token is kept in the data directory so later starts
//! skip the dialog. The session lives as long as our bus connection.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use zbus::blocking::{Connection, Proxy};
use zbus::zvariant::{self, Value};

use super::portal::{create_session, err, open, request, PortalError};

const INTERFACE: &str = "org.freedesktop.portal.RemoteDesktop";
/// `DeviceType` bit for a keyboard.
const KEYBOARD: u32 = 1;
/// `persist_mode`: until the user revokes it.
const PERSIST_UNTIL_REVOKED: u32 = 2;

/// A started RemoteDesktop session and its libei socket.
pub struct RemoteKeyboard {
    /// The session ends when this connection closes.
    pub connection: Connection,
    pub eis: OwnedFd,
}

/// Where the permission's restore token is kept between runs.
fn token_file() -> PathBuf {
    crate::paths::data_dir().join("remote-desktop-token")
}

/// Whether the desktop has a RemoteDesktop portal that can hand out a libei
/// socket, without starting a session (which would show the desktop's dialog).
pub fn available() -> Result<(), PortalError> {
    let (_connection, portal) = portal()?;
    let types = portal
        .get_property::<u32>("AvailableDeviceTypes")
        .map_err(err("AvailableDeviceTypes"))?;
    if types & KEYBOARD == 0 {
        return Err(PortalError::Unusable(
            "the RemoteDesktop portal offers no keyboard".into(),
        ));
    }
    Ok(())
}

/// The RemoteDesktop portal, if the desktop has one recent enough:
/// ConnectToEIS came with version 2 (GNOME 46+, KDE Plasma 6.1+).
fn portal() -> Result<(Connection, Proxy<'static>), PortalError> {
    let (connection, portal, version) = open(
        INTERFACE,
        "the RemoteDesktop portal",
        PortalError::NoRemoteDesktop,
    )?;
    if version < 2 {
        return Err(PortalError::Unusable(format!(
            "the RemoteDesktop portal is version {version}; libei needs version 2 \
             (GNOME 46 or KDE Plasma 6.1 and later)"
        )));
    }
    Ok((connection, portal))
}

/// Starts a keyboard-only RemoteDesktop session and connects it to libei.
/// Blocks while the desktop asks the user (the first time only).
pub fn connect_keyboard() -> Result<RemoteKeyboard, PortalError> {
    let (connection, portal) = portal()?;
    let (_, session) = create_session(&connection, &portal, "utter_rd")?;

    let saved_token = std::fs::read_to_string(token_file()).ok();
    let mut options: HashMap<&str, Value> = HashMap::from([
        ("handle_token", Value::from("utter_rd_select")),
        ("types", Value::from(KEYBOARD)),
        ("persist_mode", Value::from(PERSIST_UNTIL_REVOKED)),
    ]);
    if let Some(token) = saved_token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        options.insert("restore_token", Value::from(token));
    }
    request(
        &connection,
        &portal,
        "SelectDevices",
        "utter_rd_select",
        &(&session, options),
    )?;

    let options: HashMap<&str, Value> =
        HashMap::from([("handle_token", Value::from("utter_rd_start"))]);
    let started = request(
        &connection,
        &portal,
        "Start",
        "utter_rd_start",
        &(&session, "", options),
    )?;
    let devices = started
        .get("devices")
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0);
    if devices & KEYBOARD == 0 {
        return Err(PortalError::Unusable(
            "Start: the desktop did not grant a keyboard".into(),
        ));
    }
    if let Some(token) = started
        .get("restore_token")
        .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
    {
        let file = token_file();
        let saved = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&file, token));
        if let Err(e) = saved {
            // Only costs the dialog again next time.
            tracing::warn!("cannot keep the RemoteDesktop permission in {file:?}: {e}");
        }
    }

    let options: HashMap<&str, Value> = HashMap::new();
    let fd: zvariant::OwnedFd = portal
        .call("ConnectToEIS", &(&session, options))
        .map_err(err("ConnectToEIS"))?;
    Ok(RemoteKeyboard {
        connection,
        eis: fd.into(),
    })
}
