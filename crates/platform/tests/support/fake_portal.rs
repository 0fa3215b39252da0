//! What the fake XDG Desktop Portals of these tests share: a private session
//! bus (a real dbus-daemon, so nothing of the developer's desktop is touched)
//! and the portal's Request/Response answers.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue};

pub const PATH: &str = "/org/freedesktop/portal/desktop";

/// Starts a dbus-daemon and points this process's session bus at it. Only
/// one test per test binary may call this (the variable is process-wide).
pub fn private_session_bus() -> Child {
    let mut daemon = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("dbus-daemon is installed (apt install dbus-daemon)");
    let mut address = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", address.trim());
    daemon
}

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
