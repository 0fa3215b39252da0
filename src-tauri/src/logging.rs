//! Logs go to `utter.log` in the app's log dir (and stderr), filtered by
//! `RUST_LOG` (default: info, without the updater plugin's own lines).

use std::path::PathBuf;
use std::sync::Mutex;

use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::EnvFilter;

pub fn init(dir: Option<PathBuf>) {
    // The updater plugin logs every failed check as an ERROR; offline is normal
    // for a local-first app, and updates.rs logs each check's outcome itself.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,tauri_plugin_updater=off"));
    let file = dir.and_then(|d| {
        std::fs::create_dir_all(&d).ok()?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(d.join("utter.log"))
            .ok()
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    let result = match file {
        Some(f) => builder
            .with_writer(Mutex::new(f).and(std::io::stderr))
            .try_init(),
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    if let Err(e) = result {
        eprintln!("logging: {e}");
    }
}
