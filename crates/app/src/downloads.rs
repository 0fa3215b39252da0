//! The Models page's catalog and downloads: every catalog model with what is
//! installed and what this computer is recommended, and a download queue —
//! one download at a time, the others wait their turn. Pause keeps the
//! `.part` file (downloading again resumes it, also after a restart);
//! cancel deletes it. Downloads run on their own thread, so they go on
//! while the user is on another page.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{lock, service_host, AppError, AppEvent, Shared};
use utter_models::download::{DownloadError, DownloadOptions, DownloadProgress};
use utter_models::recommend::{recommend, Hardware};
use utter_models::{self as models, Catalog, CatalogModel, ModelError, ModelUse};

/// Where one catalog model's download stands.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
#[ts(export)]
pub enum DownloadState {
    Queued,
    #[serde(rename_all = "camelCase")]
    Downloading {
        downloaded: u64,
        total: u64,
        bytes_per_sec: f64,
        eta_secs: Option<f64>,
    },
    /// Downloaded; the engine is checking that it loads.
    Verifying,
    /// Stopped by the user (or an earlier run); the partial file is kept.
    Paused {
        downloaded: u64,
        total: u64,
    },
    Failed {
        error: String,
    },
    /// Installed (sent once; the row then shows the installed model).
    Installed,
}

/// A download's news for the UI; `state: None` = nothing in progress (cancelled).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct DownloadUpdate {
    pub name: String,
    pub state: Option<DownloadState>,
}

/// One catalog model as the Models page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CatalogRow {
    pub name: String,
    pub display_name: String,
    pub description: String,
    pub arch: String,
    pub parameters: Option<String>,
    pub size_bytes: u64,
    pub speed_score: Option<u32>,
    pub accuracy_score: Option<u32>,
    pub languages: Vec<String>,
    pub streaming: bool,
    pub translate: bool,
    pub detects_language: bool,
    pub license: String,
    pub installed: bool,
    pub is_dictation_default: bool,
    pub is_files_default: bool,
    /// Why this model suits this computer for dictation, if it is the pick.
    pub recommended_for_dictation: Option<String>,
    pub recommended_for_files: Option<String>,
    pub download: Option<DownloadState>,
}

/// Which default a model becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum UseFor {
    Dictation,
    Files,
    Both,
}

struct Current {
    name: String,
    stop: Arc<AtomicBool>,
    /// What the stop means: keep the partial file (pause) or delete it.
    cancel: bool,
}

#[derive(Default)]
struct Inner {
    states: BTreeMap<String, DownloadState>,
    queue: VecDeque<String>,
    current: Option<Current>,
    worker: bool,
}

#[derive(Default)]
pub(super) struct Downloads {
    inner: Mutex<Inner>,
}

/// Progress reaches the UI at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

fn catalog(shared: &Shared) -> Result<Catalog, AppError> {
    Ok(Catalog::load(shared.paths.catalog.as_deref())?)
}

fn find<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a CatalogModel, AppError> {
    catalog
        .find(name)
        .ok_or_else(|| AppError::NotInCatalog(name.to_string()))
}

/// Hardware is read once: the GPU probe loads the engine's backends.
fn hardware() -> &'static Hardware {
    static HW: OnceLock<Hardware> = OnceLock::new();
    HW.get_or_init(Hardware::detect)
}

fn set_state(shared: &Shared, name: &str, state: Option<DownloadState>) {
    {
        let mut inner = lock(&shared.downloads.inner);
        match &state {
            Some(DownloadState::Installed) | None => inner.states.remove(name),
            Some(s) => inner.states.insert(name.to_string(), s.clone()),
        };
    }
    shared.emit(AppEvent::Download(DownloadUpdate {
        name: name.to_string(),
        state,
    }));
}

/// The catalog with install, recommendation and download state.
pub(super) fn rows(shared: &Shared) -> Result<Vec<CatalogRow>, AppError> {
    let catalog = catalog(shared)?;
    let installed: Vec<String> = shared.store.list()?.into_iter().map(|e| e.name).collect();
    let default_for = |use_| -> Result<Option<String>, AppError> {
        Ok(shared.store.default_for(use_)?.map(|e| e.name))
    };
    // The app's dictation model is the settings' choice, else the store's.
    let dictation_model = shared
        .settings()
        .model
        .or(default_for(ModelUse::Dictation)?);
    let files_model = default_for(ModelUse::Files)?;
    let language = shared
        .settings()
        .engine_language()
        .unwrap_or_else(|| "en".into());
    let pick = |use_| recommend(&catalog, hardware(), &language, use_);
    let (dictation, files) = (pick(ModelUse::Dictation), pick(ModelUse::Files));
    let states = lock(&shared.downloads.inner).states.clone();
    Ok(catalog
        .models
        .iter()
        .map(|m| {
            let size = m.file(None).map_or(0, |f| f.size);
            let reason = |r: &Option<models::recommend::Recommendation>| {
                r.as_ref()
                    .filter(|r| r.model == m.name)
                    .map(|r| r.reason.clone())
            };
            // A partial file from an earlier run shows as paused.
            let part = models::catalog_part_file(&shared.store, m);
            let download = states.get(&m.name).cloned().or_else(|| {
                let have = std::fs::metadata(&part).ok()?.len();
                Some(DownloadState::Paused {
                    downloaded: have,
                    total: size,
                })
            });
            CatalogRow {
                name: m.name.clone(),
                display_name: m.display_name.clone(),
                description: m.description.clone(),
                arch: m.arch.clone(),
                parameters: m.parameters.clone(),
                size_bytes: size,
                speed_score: m.speed_score,
                accuracy_score: m.accuracy_score,
                languages: m.languages.clone(),
                streaming: m.streaming,
                translate: m.translate,
                detects_language: m.lang_detect,
                license: m.license.clone(),
                installed: installed.contains(&m.name),
                is_dictation_default: dictation_model.as_deref() == Some(m.name.as_str()),
                is_files_default: files_model.as_deref() == Some(m.name.as_str()),
                recommended_for_dictation: reason(&dictation),
                recommended_for_files: reason(&files),
                download,
            }
        })
        .collect())
}

/// Queues a download (or resumes a paused one).
pub(super) fn start(shared: &Arc<Shared>, name: &str) -> Result<(), AppError> {
    let catalog = catalog(shared)?;
    find(&catalog, name)?;
    if shared.store.find(name)?.is_some() {
        return Err(AppError::AlreadyInstalled(name.to_string()));
    }
    let mut inner = lock(&shared.downloads.inner);
    let busy = inner.current.as_ref().is_some_and(|c| c.name == name)
        || inner.queue.iter().any(|q| q == name);
    if busy {
        return Ok(());
    }
    inner.queue.push_back(name.to_string());
    inner.states.insert(name.to_string(), DownloadState::Queued);
    let spawn = !inner.worker;
    inner.worker = true;
    drop(inner);
    shared.emit(AppEvent::Download(DownloadUpdate {
        name: name.to_string(),
        state: Some(DownloadState::Queued),
    }));
    if spawn {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("utter-downloads".into())
            .spawn(move || work(&shared))
            .map_err(AppError::Thread)?;
    }
    Ok(())
}

/// Pause (`cancel: false`, the partial file stays) or cancel (it goes).
pub(super) fn stop(shared: &Shared, name: &str, cancel: bool) -> Result<(), AppError> {
    let mut inner = lock(&shared.downloads.inner);
    if let Some(current) = inner.current.as_mut().filter(|c| c.name == name) {
        current.cancel = cancel;
        current.stop.store(true, Ordering::SeqCst);
        return Ok(()); // the worker reports the outcome
    }
    inner.queue.retain(|q| q != name);
    drop(inner);
    if cancel {
        let catalog = catalog(shared)?;
        let _ = std::fs::remove_file(models::catalog_part_file(
            &shared.store,
            find(&catalog, name)?,
        ));
        set_state(shared, name, None);
    } else {
        // Queued, not started: nothing downloaded yet.
        let part = catalog(shared).ok().and_then(|c| {
            c.find(name)
                .map(|m| models::catalog_part_file(&shared.store, m))
        });
        let have = part
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len());
        set_state(
            shared,
            name,
            Some(DownloadState::Paused {
                downloaded: have,
                total: 0,
            }),
        );
    }
    Ok(())
}

/// Runs queued downloads one after the other until the queue is empty.
fn work(shared: &Arc<Shared>) {
    loop {
        let (name, stop) = {
            let mut inner = lock(&shared.downloads.inner);
            let Some(name) = inner.queue.pop_front() else {
                inner.worker = false;
                inner.current = None;
                return;
            };
            let stop = Arc::new(AtomicBool::new(false));
            inner.current = Some(Current {
                name: name.clone(),
                stop: stop.clone(),
                cancel: false,
            });
            (name, stop)
        };
        let outcome = download_one(shared, &name, stop);
        let cancel = lock(&shared.downloads.inner)
            .current
            .take()
            .is_some_and(|c| c.cancel);
        match outcome {
            Ok(()) => {
                set_state(shared, &name, Some(DownloadState::Installed));
                // A first speech model, or a new default: dictation follows it.
                service_host::dictation_model_changed(shared);
            }
            Err(Stopped { downloaded, total }) if !cancel => set_state(
                shared,
                &name,
                Some(DownloadState::Paused { downloaded, total }),
            ),
            Err(Stopped { .. }) => {
                if let Ok(c) = catalog(shared) {
                    if let Some(m) = c.find(&name) {
                        let _ = std::fs::remove_file(models::catalog_part_file(&shared.store, m));
                    }
                }
                set_state(shared, &name, None);
            }
            Err(Failed(error)) => set_state(shared, &name, Some(DownloadState::Failed { error })),
        }
    }
}

enum Outcome {
    Stopped { downloaded: u64, total: u64 },
    Failed(String),
}
use Outcome::{Failed, Stopped};

fn download_one(shared: &Shared, name: &str, stop: Arc<AtomicBool>) -> Result<(), Outcome> {
    let catalog = catalog(shared).map_err(|e| Failed(e.to_string()))?;
    let model = find(&catalog, name).map_err(|e| Failed(e.to_string()))?;
    let bases = models::download_bases(&catalog, &[], true);
    let options = DownloadOptions {
        cancel: stop,
        ..DownloadOptions::default()
    };
    let mut last = (Instant::now() - PROGRESS_EVERY, 0u64, 0u64);
    let result = models::install_from_catalog(
        &shared.store,
        &catalog,
        model,
        None,
        &bases,
        &options,
        |p: DownloadProgress| {
            last.1 = p.downloaded;
            last.2 = p.total;
            if p.downloaded >= p.total {
                set_state(shared, name, Some(DownloadState::Verifying));
            } else if last.0.elapsed() >= PROGRESS_EVERY {
                last.0 = Instant::now();
                set_state(
                    shared,
                    name,
                    Some(DownloadState::Downloading {
                        downloaded: p.downloaded,
                        total: p.total,
                        bytes_per_sec: p.bytes_per_sec,
                        eta_secs: p.eta.map(|d| d.as_secs_f64()),
                    }),
                );
            }
        },
    );
    match result {
        Ok(_) => Ok(()),
        Err(ModelError::Download(DownloadError::Cancelled)) => Err(Stopped {
            downloaded: last.1,
            total: last.2,
        }),
        Err(e) => Err(Failed(e.to_string())),
    }
}

/// Makes an installed model the default for dictation, files or both, and
/// restarts dictation when its model changed.
pub(super) fn use_model(shared: &Arc<Shared>, name: &str, for_: UseFor) -> Result<(), AppError> {
    let use_ = match for_ {
        UseFor::Dictation => Some(ModelUse::Dictation),
        UseFor::Files => Some(ModelUse::Files),
        UseFor::Both => None,
    };
    shared.store.set_default_for(name, use_)?;
    service_host::dictation_model_changed(shared);
    Ok(())
}
