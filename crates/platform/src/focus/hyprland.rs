//! Hyprland: `j/activewindow` on its request socket. Written from Hyprland's
//! IPC documentation; no Hyprland session ran it here.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::{executable_of, FocusError, FocusedApp};

/// Where the request socket is: `$XDG_RUNTIME_DIR/hypr/SIG/.socket.sock`
/// (Hyprland ≥ 0.40), or under /tmp/hypr before that.
fn socket() -> Result<PathBuf, FocusError> {
    let signature = std::env::var("HYPRLAND_INSTANCE_SIGNATURE")
        .map_err(|_| FocusError::Query("HYPRLAND_INSTANCE_SIGNATURE is not set".into()))?;
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    runtime
        .into_iter()
        .chain([PathBuf::from("/tmp")])
        .map(|dir| dir.join("hypr").join(&signature).join(".socket.sock"))
        .find(|p| p.exists())
        .ok_or_else(|| FocusError::Query("Hyprland's IPC socket was not found".into()))
}

pub fn focused() -> Result<FocusedApp, FocusError> {
    let mut stream = UnixStream::connect(socket()?).map_err(FocusError::query)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(FocusError::query)?;
    stream
        .write_all(b"j/activewindow")
        .map_err(FocusError::query)?;
    let mut reply = Vec::new();
    stream
        .take(1 << 20)
        .read_to_end(&mut reply)
        .map_err(FocusError::query)?;
    let window: Value = serde_json::from_slice(&reply).map_err(FocusError::query)?;
    app_of(&window).ok_or(FocusError::NoFocus)
}

fn app_of(window: &Value) -> Option<FocusedApp> {
    let text = |key: &str| window[key].as_str().unwrap_or_default().to_string();
    let (class, initial) = (text("class"), text("initialClass"));
    let exe = window["pid"]
        .as_u64()
        .and_then(|pid| executable_of(pid as u32))
        .unwrap_or_default();
    let id = [&class, &initial, &exe]
        .into_iter()
        .find(|s| !s.is_empty())?;
    Some(FocusedApp::new(id.clone(), [initial.clone(), exe.clone()]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_is_the_id_and_the_initial_class_an_alias() {
        let window = serde_json::json!({"class": "kitty", "initialClass": "Kitty", "pid": 0});
        let app = app_of(&window).unwrap();
        assert_eq!(
            (app.id.as_str(), app.aliases.as_slice()),
            ("kitty", &["Kitty".to_string()][..])
        );
    }

    #[test]
    fn no_window_is_no_app() {
        assert!(app_of(&serde_json::json!({})).is_none());
    }
}
