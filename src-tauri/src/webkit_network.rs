//! WebKitGTK's network process, ended once no webview is left (Linux).
//!
//! Every webview's loads go through one `WebKitNetworkProcess`, which WebKitGTK
//! keeps for the app's whole life even after the last webview has gone, and
//! the 4.1 API has no call to end it (tauri-apps/tauri#14626: Tauri therefore
//! keeps the web context for the app's life, so that at least no second one is
//! started). For a tray app that is ~25 MB all day for nothing. So once the main
//! window and the overlay are both gone, Utter ends it (`no_webview_left`); the next webview makes
//! WebKit start a new one, as it does after a network process crash (WebKit
//! forgets a network process whose connection closed and launches one when a
//! page next needs it).

/// Ends this process's WebKit network processes (SIGTERM).
pub fn end() {
    for pid in children_named(std::process::id(), "WebKitNetworkProcess") {
        // SAFETY: kill(2) has no memory effects; `pid` is our own child, read
        // from /proc just now (a child is not reaped, so its pid is not reused,
        // until GLib's child watch on this thread has seen it exit).
        if unsafe { libc::kill(pid, libc::SIGTERM) } == 0 {
            tracing::info!("no webview left: ended WebKit's network process ({pid})");
        } else {
            let e = std::io::Error::last_os_error();
            tracing::warn!("cannot end WebKit's network process ({pid}): {e}");
        }
    }
}

/// Our children whose program file is named `name` (WebKit starts its
/// helpers by path, so /proc's 15-character `comm` would cut the name).
fn children_named(parent: u32, name: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| parent_of(pid) == Some(parent))
        .filter(|&pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe.file_name().is_some_and(|n| n == name))
        })
        .collect()
}

/// The parent pid, from `/proc/PID/stat`: the fourth field, counted after
/// the command name's closing parenthesis (the name may hold spaces).
fn parent_of(pid: i32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_found_by_its_program_name() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let found = children_named(std::process::id(), "sleep");
        let other = children_named(std::process::id(), "WebKitNetworkProcess");
        child.kill().ok();
        child.wait().ok();
        assert_eq!(found, vec![child.id() as i32]);
        assert!(other.is_empty());
    }
}
