//! Runs the dictation service on its own thread with the current settings,
//! and restarts it when they change. Its events become history entries,
//! status changes, cues and UI events.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::{load_error_message, lock, sounds, AppEvent, AppState, Shared};
use crate::history::{EntryKind, EntryRecord};
use utter_capture::microphone as capture;
use utter_core::dictation::events::{DictationEvent, Stamped};
use utter_core::dictation::record_log::unix_ms;
use utter_desktop::setup::{self, Degraded, SetupError};
use utter_models::ModelUse;
use utter_platform::doctor::{self, Capability};
use utter_ports::control::Control;

/// Why a dictation command found no dictation to drive.
#[derive(Debug, thiserror::Error)]
pub enum NotRunning {
    #[error("dictation is not running (no model, or it is still loading)")]
    NotStarted,
    #[error("dictation has stopped")]
    Stopped,
}

/// Restarts are queued to one supervisor thread, so neither the UI's
/// commands nor a settings save ever wait for a dictation to finish.
#[derive(Default)]
pub(super) struct ServiceHost {
    /// The running service's control channel (cloned out, never held).
    control: Mutex<Option<Sender<Control>>>,
    supervisor: Mutex<Option<ServiceSupervisor>>,
}

struct ServiceSupervisor {
    requests: Sender<SupervisorRequest>,
    thread: JoinHandle<()>,
}

enum SupervisorRequest {
    Restart,
    Stop,
}

impl ServiceHost {
    pub fn send(&self, control: Control) -> Result<(), NotRunning> {
        let tx = lock(&self.control).clone().ok_or(NotRunning::NotStarted)?;
        tx.send(control).map_err(|_| NotRunning::Stopped)
    }

    /// Finishes a dictation in progress, then stops the service (app exit).
    pub fn stop(&self) {
        let supervisor = lock(&self.supervisor).take();
        if let Some(s) = supervisor {
            let _ = s.requests.send(SupervisorRequest::Stop);
            let _ = s.thread.join();
        }
    }
}

/// Stops the running service (if any) and starts one with the current
/// settings, in the background: it returns at once.
pub(super) fn restart(shared: &Arc<Shared>) {
    let mut supervisor = lock(&shared.service.supervisor);
    let s = supervisor.get_or_insert_with(|| {
        let (requests, rx) = unbounded();
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("utter-supervisor".into())
            .spawn(move || supervise(&worker, rx))
            .expect("spawn the supervisor thread");
        ServiceSupervisor { requests, thread }
    });
    let _ = s.requests.send(SupervisorRequest::Restart);
}

/// Restarts dictation when the model it would load now is not the one it
/// runs: the first speech model installed, another default chosen, the
/// settings' model changed. Every change to the models goes through here,
/// so none of them guesses on its own.
pub(super) fn dictation_model_changed(shared: &Arc<Shared>) {
    let wanted = shared
        .store
        .resolve_speech_for(shared.settings().model.as_deref(), ModelUse::Dictation)
        .ok()
        .map(|(name, _)| name);
    let running = match shared.dictation_state() {
        // Nothing loaded (yet): whatever is wanted now is a change.
        AppState::Loading | AppState::NoModel => None,
        // An error after loading (keys, output) keeps the model it loaded;
        // one while loading has cleared it.
        AppState::Idle | AppState::Recording | AppState::Transcribing | AppState::Error => {
            shared.status().model
        }
    };
    if wanted.is_some() && wanted != running {
        tracing::info!(
            "dictation model: {} -> {}",
            running.as_deref().unwrap_or("none"),
            wanted.as_deref().unwrap_or("none")
        );
        restart(shared);
    }
}

fn supervise(shared: &Arc<Shared>, requests: Receiver<SupervisorRequest>) {
    let mut running: Option<(Sender<Control>, JoinHandle<()>)> = None;
    while let Ok(first) = requests.recv() {
        // Several saves in a row restart once, with the newest settings.
        let mut stop = matches!(first, SupervisorRequest::Stop);
        stop |= requests
            .try_iter()
            .any(|r| matches!(r, SupervisorRequest::Stop));
        if let Some((control, thread)) = running.take() {
            *lock(&shared.service.control) = None;
            if let Some(ptt) = &shared.platform.ptt {
                ptt.set_target(None);
            }
            let _ = control.send(Control::Shutdown);
            let _ = thread.join();
        }
        if stop {
            return;
        }
        let (control, control_rx) = unbounded();
        let worker = shared.clone();
        let worker_control = control.clone();
        let thread = std::thread::Builder::new()
            .name("utter-dictation".into())
            .spawn(move || run(&worker, worker_control, control_rx))
            .expect("spawn the dictation thread");
        running = Some((control, thread));
    }
}

fn run(shared: &Arc<Shared>, control: Sender<Control>, control_rx: Receiver<Control>) {
    shared.set_dictation_state(AppState::Loading, |_| {});
    let settings = shared.settings();
    let fail =
        |message: String| shared.set_dictation_state(AppState::Error, |s| s.error = Some(message));
    let recordings = shared.paths.recordings.clone();
    let mut prepared = match setup::prepare(
        &shared.store,
        &settings,
        recordings,
        settings.engine_options(),
    ) {
        Ok(p) => p,
        Err(SetupError::Load(e)) if e.is_missing_model() => {
            shared.set_dictation_state(AppState::NoModel, |s| s.model = None);
            return;
        }
        Err(e) => {
            let message = match &e {
                SetupError::Load(e) => load_error_message(e),
                e => e.to_string(),
            };
            shared.set_dictation_state(AppState::Error, |s| {
                s.model = None;
                s.error = Some(message);
            });
            return;
        }
    };
    let loaded = &prepared.models;
    let info = loaded.engine.info().clone();
    let language = prepared.config.dictation.language.clone();
    let unsupported_language = prepared.unsupported_language.take();
    shared.update_status(|s| {
        s.model = Some(loaded.model_name.clone());
        s.model_arch = Some(info.arch.clone());
        s.backend = Some(info.backend.clone());
        s.backend_fallback = info.fallback.clone();
        s.languages = info.languages.clone();
        s.detects_language = info.detects_language;
        s.takes_vocabulary = info.takes_vocabulary;
        s.error = unsupported_language.map(|p| format!("{p}; choose another language in Settings"));
    });
    // History owns the audio's retention, not a count.
    prepared.config.keep_recordings = usize::MAX;
    prepared.config.emit_levels = true;

    let platform = &shared.platform;
    // The app's one kept sink (deliveries.rs), not one of the service's own.
    let deliveries = shared.deliveries.clone();
    let open_sink = move |config: &_, env: &_| deliveries.open(config, env);
    let desktop = setup::Desktop {
        hotkeys: &platform.hotkeys,
        ptt: platform.ptt.as_ref(),
        output: platform.output_env(),
        open_sink: &open_sink,
    };
    let wired = match prepared.wire(desktop, control.clone(), control_rx) {
        Ok(wired) => wired,
        Err(e) => return fail(e.to_string()),
    };
    let mut capabilities = doctor::desktop(&platform.session);
    // Listed, not opened: opening it is the press's job (and would light the
    // system's recording indicator for nothing).
    let microphone = capture::microphone_presence();
    let no_microphone = microphone.is_err();
    capabilities.push(Capability::new("microphone", microphone));
    for degraded in &wired.degraded {
        match degraded {
            Degraded::NoHotkeys(why) => set_capability(&mut capabilities, "hotkey", Err(why)),
            Degraded::Output { method, message } => {
                set_capability(&mut capabilities, method, Err(message))
            }
        }
    }
    shared.update_status(|s| s.capabilities = capabilities);
    if no_microphone {
        watch_for_a_microphone(Arc::downgrade(shared));
    }
    *lock(&shared.service.control) = Some(control);

    let mut handler = EventHandler {
        shared: shared.clone(),
        model: wired.models.model_name.clone(),
        language,
        sounds: settings.sounds,
        recordings: HashMap::new(),
    };
    wired.run(|e| handler.handle(e));
    shared.set_dictation_state(AppState::Loading, |_| {});
}

/// How often the device list is read again while there is no microphone.
const MICROPHONE_RECHECK: Duration = Duration::from_secs(3);

/// While no microphone is listed, reads the device list every few seconds and
/// tells Home as soon as one appears (one watcher at a time; it ends then, or
/// with the app).
fn watch_for_a_microphone(shared: Weak<Shared>) {
    static WATCHING: AtomicBool = AtomicBool::new(false);
    if WATCHING.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("utter-microphone-watch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(MICROPHONE_RECHECK);
                let Some(shared) = shared.upgrade() else {
                    break;
                };
                if let Ok(found) = capture::microphone_presence() {
                    tracing::info!("a microphone appeared: {found}");
                    shared.update_status(|s| {
                        set_capability(&mut s.capabilities, "microphone", Ok::<_, String>(found))
                    });
                    break;
                }
            }
            WATCHING.store(false, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        WATCHING.store(false, Ordering::SeqCst);
        tracing::warn!("cannot watch for a microphone: {e}");
    }
}

fn set_capability<E: std::fmt::Display>(
    list: &mut [Capability],
    name: &str,
    result: Result<String, E>,
) {
    if let Some(c) = list.iter_mut().find(|c| c.name == name) {
        *c = Capability::new(name, result);
    }
}

/// Turns the service's events into app effects.
struct EventHandler {
    shared: Arc<Shared>,
    model: String,
    language: Option<String>,
    sounds: bool,
    /// Each dictation in flight, by id.
    recordings: HashMap<u64, Recording>,
}

/// A dictation's recording, as its History entry records it.
struct Recording {
    audio_path: String,
    created_ms: i64,
    audio_ms: u64,
    /// What this dictation was transcribed in: its profile's language where
    /// the profile sets one, else the settings'.
    language: Option<String>,
}

impl EventHandler {
    fn handle(&mut self, event: DictationEvent) {
        let shared = &self.shared;
        match &event {
            DictationEvent::Level { rms } => {
                shared.emit(AppEvent::Level(*rms));
                return;
            }
            DictationEvent::Ready { model, mic } => {
                tracing::info!("dictation ready: model {model}, mic {mic}");
                shared.set_dictation_state(AppState::Idle, |_| {})
            }
            DictationEvent::RecordingStarted {
                id,
                audio_path,
                app,
                profile,
                language,
                ..
            } => {
                if let Some(app) = app {
                    lock(&shared.recent_apps).note(app, profile.as_deref());
                }
                if self.sounds {
                    sounds::play(sounds::Cue::Start);
                }
                let recording = Recording {
                    audio_path: audio_path.clone(),
                    created_ms: unix_ms() as i64,
                    audio_ms: 0,
                    language: language.clone(),
                };
                self.recordings.insert(*id, recording);
                shared.set_dictation_state(AppState::Recording, |s| s.error = None);
            }
            DictationEvent::RecordingStopped { id, audio_ms } => {
                if self.sounds {
                    sounds::play(sounds::Cue::Stop);
                }
                if let Some(r) = self.recordings.get_mut(id) {
                    r.audio_ms = *audio_ms;
                }
                shared.set_dictation_state(AppState::Transcribing, |_| {});
            }
            DictationEvent::Cancelled { id } => {
                self.recordings.remove(id);
                shared.set_dictation_state(AppState::Idle, |_| {});
            }
            DictationEvent::TextDelivered {
                id,
                text,
                raw_text,
                error,
                rewrite,
                warning,
                ..
            } => {
                if let Some(dictation) = self.recordings.remove(id) {
                    // A failed dictation is listed even without text, so
                    // the user sees it and can retry it; so is a command
                    // the model did not carry out, with what was said.
                    if !text.is_empty() || error.is_some() || rewrite.is_some() {
                        let record = EntryRecord {
                            raw_text: raw_text.clone(),
                            error: error.clone(),
                            rewrite: rewrite.clone(),
                            warning: warning.clone(),
                            ..self.record(text, dictation)
                        };
                        self.shared.add_history(&record, &[]);
                    }
                }
                shared.set_dictation_state(AppState::Idle, |s| {
                    if !text.is_empty() {
                        s.last_text = Some(text.clone());
                    }
                });
            }
            DictationEvent::Recovered {
                audio_path,
                text,
                raw_text,
            } => self.recovered(audio_path, text, raw_text.as_deref()),
            // Told once, until dismissed: from now on dictation runs on the CPU.
            DictationEvent::EngineRestarted {
                message,
                on_cpu: true,
            } => {
                let message = message.clone();
                shared.update_status(|s| {
                    s.backend = Some("cpu".into());
                    s.backend_fallback = Some(message.clone());
                    s.notice = Some(message);
                });
            }
            DictationEvent::MeetingKey => {
                // Starting loads models: not on the dictation's thread.
                let shared = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name("utter-meeting-key".into())
                    .spawn(move || crate::meetings::toggle(&shared));
                if let Err(e) = spawned {
                    tracing::warn!("the meeting shortcut: {e}");
                }
                return;
            }
            DictationEvent::Error { message } => {
                tracing::warn!("dictation: {message}");
                let message = message.clone();
                shared.update_status(|s| s.error = Some(message));
            }
            _ => {}
        }
        shared.emit(AppEvent::Dictation(Stamped::from(event)));
    }

    fn record(&self, text: &str, dictation: Recording) -> EntryRecord {
        EntryRecord {
            kind: EntryKind::Dictation,
            text: text.to_string(),
            created_ms: dictation.created_ms,
            duration_ms: dictation.audio_ms as i64,
            model: self.model.clone(),
            language: dictation.language,
            audio_path: Some(dictation.audio_path.into()),
            source_name: None,
            error: None,
            raw_text: None,
            rewrite: None,
            warning: None,
        }
    }

    /// A recording an earlier run left unfinished, now transcribed: it
    /// completes the History entry of a failed dictation, or becomes one.
    fn recovered(&self, audio_path: &str, text: &str, raw_text: Option<&str>) {
        let listed = lock(&self.shared.history).dictation_with_audio(Path::new(audio_path));
        match listed {
            Ok(Some(entry)) => {
                let updated = lock(&self.shared.history).update_text(
                    entry.id,
                    text,
                    raw_text,
                    &self.model,
                    &[],
                );
                match updated {
                    Ok(_) => self.shared.emit(AppEvent::HistoryChanged),
                    Err(e) => tracing::warn!("history: {e}"),
                }
            }
            Ok(None) if !text.is_empty() => {
                let audio_ms = hound::WavReader::open(audio_path)
                    .map(|r| {
                        u64::from(r.duration()) * 1000 / u64::from(r.spec().sample_rate.max(1))
                    })
                    .unwrap_or(0);
                let record = EntryRecord {
                    raw_text: raw_text.map(str::to_owned),
                    ..self.record(
                        text,
                        Recording {
                            audio_path: audio_path.to_string(),
                            created_ms: unix_ms() as i64,
                            audio_ms,
                            // A recovered recording's profile is not known: the settings' language.
                            language: self.language.clone(),
                        },
                    )
                };
                self.shared.add_history(&record, &[]);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("history: {e}"),
        }
    }
}
