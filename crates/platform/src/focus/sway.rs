//! sway: the i3-compatible IPC (`$SWAYSOCK`), `GET_TREE`, and the node
//! whose `focused` is true.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::Value;

use super::{executable_of, FocusError, FocusedApp};

const MAGIC: &[u8] = b"i3-ipc";
const GET_TREE: u32 = 4;
/// The longest reply accepted (a tree with hundreds of windows is far less).
const MAX_REPLY: usize = 64 << 20;

pub fn focused() -> Result<FocusedApp, FocusError> {
    let socket = std::env::var_os("SWAYSOCK")
        .ok_or_else(|| FocusError::Query("SWAYSOCK is not set".into()))?;
    let tree = request(std::path::Path::new(&socket), GET_TREE)?;
    let node = find_focused(&tree).ok_or(FocusError::NoFocus)?;
    app_of(node).ok_or(FocusError::NoFocus)
}

fn request(socket: &std::path::Path, kind: u32) -> Result<Value, FocusError> {
    let mut stream = UnixStream::connect(socket).map_err(FocusError::query)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(FocusError::query)?;
    let mut message = MAGIC.to_vec();
    message.extend_from_slice(&0u32.to_ne_bytes());
    message.extend_from_slice(&kind.to_ne_bytes());
    stream.write_all(&message).map_err(FocusError::query)?;
    let mut header = [0u8; 14];
    stream.read_exact(&mut header).map_err(FocusError::query)?;
    if &header[..6] != MAGIC {
        return Err(FocusError::Query("not an i3/sway IPC reply".into()));
    }
    let len = u32::from_ne_bytes(header[6..10].try_into().expect("4 bytes")) as usize;
    if len > MAX_REPLY {
        return Err(FocusError::Query(format!("a {len}-byte IPC reply")));
    }
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).map_err(FocusError::query)?;
    serde_json::from_slice(&payload).map_err(FocusError::query)
}

/// The focused window: a leaf (or floating) node with `focused: true`.
fn find_focused(node: &Value) -> Option<&Value> {
    if node["focused"] == Value::Bool(true) && node["type"] != "workspace" {
        return Some(node);
    }
    ["nodes", "floating_nodes"]
        .iter()
        .filter_map(|key| node[key].as_array())
        .flatten()
        .find_map(find_focused)
}

/// A native Wayland window's `app_id`, or an XWayland window's class.
fn app_of(node: &Value) -> Option<FocusedApp> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let app_id = text(&node["app_id"]);
    let class = text(&node["window_properties"]["class"]);
    let instance = text(&node["window_properties"]["instance"]);
    let exe = node["pid"]
        .as_u64()
        .and_then(|pid| executable_of(pid as u32))
        .unwrap_or_default();
    let id = [&app_id, &class, &exe]
        .into_iter()
        .find(|s| !s.is_empty())?;
    Some(FocusedApp::new(
        id.clone(),
        [class.clone(), instance, exe.clone()],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_focused_leaf_is_found_below_outputs_and_workspaces() {
        let tree = serde_json::json!({
        "type": "root", "focused": false, "nodes": [
            {"type": "output", "focused": false, "nodes": [
                {"type": "workspace", "focused": false, "nodes": [
                    {"type": "con", "focused": false, "app_id": "zenity", "nodes": []},
                ], "floating_nodes": [
                    {"type": "floating_con", "focused": true, "app_id": null,
                     "window_properties": {"class": "XTerm", "instance": "xterm"}},
                ]},
            ]},
        ]});
        let app = app_of(find_focused(&tree).unwrap()).unwrap();
        assert_eq!(app.id, "XTerm");
        assert_eq!(app.aliases, ["xterm"]);
    }

    #[test]
    fn an_empty_workspace_with_the_focus_is_no_app() {
        let tree = serde_json::json!({"type": "root", "nodes": [
            {"type": "workspace", "focused": true, "nodes": []}]});
        assert!(find_focused(&tree).is_none());
    }
}
