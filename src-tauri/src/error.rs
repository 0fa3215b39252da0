//! What a command returns when it fails. Tauri sends a command's error to
//! the UI through serde, so the core's typed errors stay typed up to this
//! boundary and are written out as their message here (the UI shows it).

use utter_app_core::AppError;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    App(#[from] AppError),
    #[error("settings saved, but autostart could not be changed: {0}")]
    Autostart(tauri_plugin_autostart::Error),
    #[error("updates are not available in this build: {0}")]
    NoUpdater(tauri_plugin_updater::Error),
    #[error("cannot check for updates: {0}")]
    UpdateCheck(tauri_plugin_updater::Error),
    #[error("Utter is already up to date")]
    UpToDate,
    #[error("the update could not be installed: {0}")]
    UpdateInstall(tauri_plugin_updater::Error),
    /// A blocking worker panicked or was cancelled.
    #[error("internal error: {0}")]
    Worker(tauri::Error),
}

impl serde::Serialize for CommandError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}
