//! `utter paths` and `utter uninstall`: every place Utter keeps something
//! (`platform::paths::places`), and removing them.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use utter_platform::paths::{places, Place};

#[derive(Args)]
pub struct UninstallArgs {
    /// Remove them; without it, only list what would be removed
    #[arg(long)]
    yes: bool,
    /// Keep models, recordings, meetings and History (remove settings, caches, logs and the
    /// autostart entry)
    #[arg(long)]
    keep_data: bool,
}

/// Bytes under `path`, symlinks not followed (a link counts as itself).
fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / f64::from(1u32 << 30)),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / f64::from(1u32 << 20)),
        b => format!("{:.0} kB", b as f64 / 1024.0),
    }
}

fn exists(place: &Place) -> bool {
    std::fs::symlink_metadata(&place.path).is_ok()
}

/// `utter paths`.
pub fn paths() -> Result<ExitCode> {
    for place in places() {
        let state = if exists(&place) {
            human(size_of(&place.path))
        } else {
            "(none)".into()
        };
        out!("{:<42} {:>9}  {}", place.what, state, place.path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// A folder an uninstall must never remove, however the environment moved
/// Utter's places: the filesystem root, the home folder or one above it.
fn is_too_wide(path: &Path) -> bool {
    path.parent().is_none() || dirs::home_dir().is_some_and(|home| home.starts_with(path))
}

/// `utter uninstall`.
pub fn uninstall(args: UninstallArgs) -> Result<ExitCode> {
    let (remove, keep): (Vec<Place>, Vec<Place>) = places()
        .into_iter()
        .filter(exists)
        .partition(|p| !(args.keep_data && p.holds.is_the_users()));
    if let Some(p) = remove.iter().find(|p| is_too_wide(&p.path)) {
        anyhow::bail!(
            "{} ({}) is the home folder or above it: remove what you want of it by hand",
            p.path.display(),
            p.what
        );
    }
    if remove.is_empty() {
        out!("Utter keeps nothing here to remove.");
    }
    for place in &remove {
        let verb = if args.yes { "Removing" } else { "Would remove" };
        out!(
            "{verb} {} ({}, {})",
            place.path.display(),
            place.what,
            human(size_of(&place.path))
        );
        if args.yes {
            remove_place(&place.path)
                .with_context(|| format!("cannot remove {}", place.path.display()))?;
        }
    }
    for place in &keep {
        out!("Keeping {} ({})", place.path.display(), place.what);
    }
    if !args.yes {
        out!("Nothing was removed: run `utter uninstall --yes` to remove these.");
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", REMOVE_THE_PROGRAM);
    Ok(ExitCode::SUCCESS)
}

fn remove_place(path: &Path) -> std::io::Result<()> {
    // A link (or a file) goes as itself: never what it points at. Gone
    // already (the models inside the data folder) is done.
    let result = std::fs::symlink_metadata(path).and_then(|meta| {
        if meta.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        }
    });
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(target_os = "linux")]
const REMOVE_THE_PROGRAM: &str = "Now remove the program: `sudo apt remove utter` (.deb), \
     `sudo dnf remove utter` (.rpm), or delete the AppImage.";
#[cfg(target_os = "macos")]
const REMOVE_THE_PROGRAM: &str = "Now remove the program: drag Utter from Applications to the Bin.";
#[cfg(windows)]
const REMOVE_THE_PROGRAM: &str = "Now remove the program: Settings → Apps → Utter → Uninstall. \
     If it started at login, also delete the `Utter` value under \
     HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run (or turn the setting off first).";
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
const REMOVE_THE_PROGRAM: &str = "Now remove the program the way you installed it.";
