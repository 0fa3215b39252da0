//! A small tmpfs to fill up (mounting it needs root).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A small tmpfs, unmounted on drop.
pub struct SmallDisk(pub PathBuf);

impl SmallDisk {
    pub fn mount(path: &Path, size: &str) -> Self {
        std::fs::create_dir_all(path).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount a tmpfs at {}", path.display());
        Self(path.to_path_buf())
    }

    /// Fills it up to `leave` free bytes (0: full).
    pub fn fill(&self, name: &str, leave: u64) {
        let free = || {
            let out = Command::new("df")
                .args(["--output=avail", "-B1"])
                .arg(&self.0)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .nth(1)
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap()
        };
        let bytes = free().saturating_sub(leave) as usize;
        // Past the end the write fails with ENOSPC, which is the point.
        let _ = std::fs::write(
            self.0.join(name),
            vec![0u8; bytes + if leave == 0 { 4096 } else { 0 }],
        );
        assert!(free() <= leave, "{} left", free());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}
