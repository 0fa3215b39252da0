//! The X11 clipboard as another program of the desktop sees it (`xclip`),
//! and a user's copy served the way a copying app serves it — for the paste
//! tests that check what Utter leaves on the clipboard. Needs Debian's
//! `xclip`; the display is the process's `DISPLAY`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::desktop::{wait_until, KilledOnDrop};

/// What `xclip` reads from the clipboard as `target` (empty when nothing
/// offers it).
pub fn clipboard(target: &str) -> Vec<u8> {
    Command::new("xclip")
        .args(["-selection", "clipboard", "-o", "-t", target])
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default()
}

/// Whether the clipboard offers `target` (in its `TARGETS`).
pub fn clipboard_offers(target: &str) -> bool {
    clipboard("TARGETS")
        .split(|&b| b == b'\n')
        .any(|t| t == target.as_bytes())
}

/// Puts `data` on the clipboard as `target` only, served by xclip as a
/// user's copy is, once the clipboard gives it back; served until dropped.
pub fn copy(data: &[u8], target: &str) -> KilledOnDrop {
    let mut child = Command::new("xclip")
        .args(["-selection", "clipboard", "-t", target, "-i", "-quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("xclip is installed (apt install xclip)");
    child.stdin.take().unwrap().write_all(data).unwrap();
    wait_until("xclip to own the clipboard", Duration::from_secs(5), || {
        clipboard(target) == data
    });
    KilledOnDrop(child)
}
