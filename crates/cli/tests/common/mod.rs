//! Helpers shared by the CLI's test binaries (each uses some of them).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(target_os = "linux")]
pub mod dictate;
pub mod server;

/// Real speech: the LibriVox clips of Debian's `pocketsphinx-testdata`.
pub const LIBRIVOX: &str = "/usr/share/pocketsphinx/test/data/librivox";

/// (clip, reference text) for each LibriVox clip, in the order of the package's
/// `transcription` file (which is the clips' name order).
pub fn librivox_clips() -> Vec<(PathBuf, String)> {
    let listing = std::fs::read_to_string(Path::new(LIBRIVOX).join("transcription"))
        .expect("pocketsphinx-testdata is installed (apt install pocketsphinx-testdata)");
    listing
        .lines()
        .filter_map(|line| {
            let (text, id) = line.rsplit_once(" (")?;
            let text = text.replace("<s>", "").replace("</s>", "");
            let wav = Path::new(LIBRIVOX).join(format!("{}.wav", id.trim_end_matches(')')));
            Some((wav, text.trim().to_string()))
        })
        .collect()
}

/// The WAV files in `dir`, sorted by name.
pub fn wav_files(dir: &Path) -> Vec<PathBuf> {
    let mut wavs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wav"))
        .collect();
    wavs.sort();
    wavs
}

/// The engine worker processes `parent` started (they carry the hidden argument).
pub fn engine_workers(parent: u32) -> Vec<u32> {
    workers(parent, "--utter-engine-worker")
}

/// The voice detector's worker processes of `parent`.
pub fn vad_workers(parent: u32) -> Vec<u32> {
    workers(parent, "--utter-vad-worker")
}

fn workers(parent: u32, role: &str) -> Vec<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &parent.to_string(), "-f", "--", role])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}
