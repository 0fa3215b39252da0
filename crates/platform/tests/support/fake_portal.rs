//! What the fake XDG Desktop Portals of these tests share: the portal's
//! Request/Response answers (on the private session bus of
//! `session_bus.rs`).

use std::collections::HashMap;

use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue};

pub const PATH: &str = "/org/freedesktop/portal/desktop";

/// The Request object a call's answer comes on (the spec's predictable path).
pub fn request_path(header: &Header<'_>, token: &str) -> OwnedObjectPath {
    let sender = header
        .sender()
        .unwrap()
        .trim_start_matches(':')
        .replace('.', "_");
    ObjectPath::try_from(format!("{PATH}/request/{sender}/{token}"))
        .unwrap()
        .into()
}

pub fn token(options: &HashMap<String, OwnedValue>) -> String {
    String::try_from(options["handle_token"].try_clone().unwrap()).unwrap()
}

/// Answers the request at `path` with `code` (0: granted, 1: cancelled by the user).
pub async fn respond(
    emitter: &SignalEmitter<'_>,
    path: &OwnedObjectPath,
    code: u32,
    results: HashMap<&str, zbus::zvariant::Value<'_>>,
) {
    emitter
        .connection()
        .emit_signal(
            None::<()>,
            path.as_str(),
            "org.freedesktop.portal.Request",
            "Response",
            &(code, results),
        )
        .await
        .unwrap();
}

/// Answers a `CreateSession` call: the session is `{PATH}/session/test/{name}`.
pub async fn session_created(
    header: &Header<'_>,
    emitter: &SignalEmitter<'_>,
    options: &HashMap<String, OwnedValue>,
    name: &str,
) -> OwnedObjectPath {
    let path = request_path(header, &token(options));
    let session = format!("{PATH}/session/test/{name}");
    let answer = HashMap::from([("session_handle", session.as_str().into())]);
    respond(emitter, &path, 0, answer).await;
    path
}
