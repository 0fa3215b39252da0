//! Signed updates from GitHub releases (tauri-plugin-updater): a check at
//! start when the user allows it, a "Check now", and an install that only
//! ever happens on the user's click.

use tauri::{AppHandle, Emitter, Manager};
use tauri_plugin_updater::UpdaterExt;
use utter_app_core::{App, UpdateInfo};

use crate::error::CommandError;

/// `UTTER_UPDATE_CHECK=0` turns the check at start off for a whole environment
/// (tests; distribution packages that update through their package manager).
fn disabled_by_env() -> bool {
    std::env::var("UTTER_UPDATE_CHECK").is_ok_and(|v| v == "0")
}

pub fn check_at_start(app: &AppHandle) {
    if disabled_by_env() || !app.state::<App>().settings().check_updates {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        match check(&app).await {
            Ok(Some(info)) => {
                tracing::info!("update check: {} is available", info.version);
                let _ = app.emit("update-available", info);
            }
            Ok(None) => tracing::info!("update check: Utter is up to date"),
            // Offline is normal for a local-first app: log it, bother no one.
            Err(e) => tracing::info!("update check: {e}"),
        }
    });
}

async fn check(app: &AppHandle) -> Result<Option<UpdateInfo>, CommandError> {
    let update = app
        .updater()
        .map_err(CommandError::NoUpdater)?
        .check()
        .await
        .map_err(CommandError::UpdateCheck)?;
    Ok(update.map(|u| UpdateInfo {
        version: u.version.clone(),
        notes: u.body.clone(),
    }))
}

#[tauri::command]
pub async fn check_for_updates(app: AppHandle) -> Result<Option<UpdateInfo>, CommandError> {
    check(&app).await
}

/// Downloads the update, verifies its signature against the public key in
/// the config, installs it and restarts Utter.
#[tauri::command]
pub async fn install_update(app: AppHandle) -> Result<(), CommandError> {
    let update = app
        .updater()
        .map_err(CommandError::NoUpdater)?
        .check()
        .await
        .map_err(CommandError::UpdateCheck)?
        .ok_or(CommandError::UpToDate)?;
    update
        .download_and_install(|_, _| {}, || {})
        .await
        .map_err(CommandError::UpdateInstall)?;
    app.state::<App>().shutdown();
    app.restart()
}
