//! A private D-Bus session bus for one test binary: a real dbus-daemon, so
//! nothing of the developer's desktop is touched.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

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
