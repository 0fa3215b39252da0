//! Runs the dictation service on its own thread with the current settings,
//! and restarts it when they change. Its events become history entries,
//! status changes, cues and UI events.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::{load_error_message, lock, sounds, AppEvent, AppState, Shared};
use crate::control::Control;
use crate::dictation::events::{DictationEvent, Stamped};
use crate::dictation::record_log::unix_ms;
use crate::dictation::service::{self, CpalMicrophone, ServiceConfig, ServiceIo};
use crate::history::{EntryKind, NewEntry};
use crate::platform::doctor::{self, Capability};
use crate::platform::hotkeys::{Bindings, HotkeyError, NoRecordingKeys, RecordingKeys};
use crate::platform::output::open_sink;
use crate::setup::{self, SetupError};

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
    supervisor: Mutex<Option<Supervisor>>,
    transcribing: AtomicBool,
}

struct Supervisor {
    requests: Sender<Request>,
    thread: JoinHandle<()>,
}

enum Request {
    Restart,
    Stop,
}

impl ServiceHost {
    pub fn send(&self, control: Control) -> Result<(), NotRunning> {
        let tx = lock(&self.control).clone().ok_or(NotRunning::NotStarted)?;
        tx.send(control).map_err(|_| NotRunning::Stopped)
    }

    pub fn transcribing(&self) -> bool {
        self.transcribing.load(Ordering::SeqCst)
    }

    /// Finishes a dictation in progress, then stops the service (app exit).
    pub fn stop(&self) {
        let supervisor = lock(&self.supervisor).take();
        if let Some(s) = supervisor {
            let _ = s.requests.send(Request::Stop);
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
        Supervisor { requests, thread }
    });
    let _ = s.requests.send(Request::Restart);
}

fn supervise(shared: &Arc<Shared>, requests: Receiver<Request>) {
    let mut running: Option<(Sender<Control>, JoinHandle<()>)> = None;
    while let Ok(first) = requests.recv() {
        // Several saves in a row restart once, with the newest settings.
        let mut stop = matches!(first, Request::Stop);
        stop |= requests.try_iter().any(|r| matches!(r, Request::Stop));
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
    shared.update_status(|s| s.state = AppState::Loading);
    let settings = shared.settings();
    let fail = |message: String| {
        shared.update_status(|s| {
            s.state = AppState::Error;
            s.error = Some(message);
        })
    };
    let recordings = shared.paths.recordings.clone();
    let prepared = match setup::prepare(
        &shared.store,
        &settings,
        recordings,
        settings.engine_options(),
    ) {
        Ok(p) => p,
        Err(SetupError::Load(e)) if e.is_missing_model() => {
            shared.update_status(|s| {
                s.state = AppState::NoModel;
                s.model = None;
            });
            return;
        }
        Err(SetupError::Load(e)) => return fail(load_error_message(&e)),
        Err(e) => return fail(e.to_string()),
    };
    let setup::Prepared {
        mut config,
        models: loaded,
        unsupported_language,
    } = prepared;
    let info = loaded.engine.info().clone();
    let language = config.dictation.language.clone();
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
    config.keep_recordings = usize::MAX;
    config.emit_levels = true;

    let platform = &shared.platform;
    let mut capabilities = doctor::desktop(&platform.session);
    let keys = match bind_hotkeys(shared, &config, control.clone(), &mut capabilities) {
        Ok(keys) => keys,
        Err(e) => return fail(e.to_string()),
    };
    let (sink, notice) = match open_sink(&config.output, &platform.output_env()) {
        Ok(s) => s,
        Err(e) => {
            platform.hotkeys.unbind();
            return fail(e.to_string());
        }
    };
    if let Some(notice) = notice {
        set_capability(&mut capabilities, config.output.method.name(), Err(notice));
    }
    if let Some(ptt) = &platform.ptt {
        ptt.set_target(Some(control.clone()));
    }
    shared.update_status(|s| s.capabilities = capabilities);
    *lock(&shared.service.control) = Some(control);

    let mut handler = EventHandler {
        shared: shared.clone(),
        model: loaded.model_name.clone(),
        language,
        sounds: settings.sounds,
        recordings: HashMap::new(),
    };
    let mut vad = loaded.vad;
    crate::dictation::recover_unfinished(
        &config.recordings_dir,
        &loaded.engine,
        &mut vad,
        &loaded.model_name,
        &config.text_rules,
        &mut |e| handler.handle(e),
    );
    let io = ServiceIo {
        keys,
        sink,
        mic: Box::new(CpalMicrophone::new(config.device.clone())),
    };
    service::run(config, loaded.engine, vad, control_rx, io, |e| {
        handler.handle(e)
    });
    platform.hotkeys.unbind();
    shared.service.transcribing.store(false, Ordering::SeqCst);
    shared.update_status(|s| s.state = AppState::Loading);
}

/// Registers the settings' hotkeys on the main thread. Where this desktop
/// has no global hotkeys the service still runs (the UI's button and
/// `utter ptt` drive it) and the capability says why.
fn bind_hotkeys(
    shared: &Shared,
    config: &ServiceConfig,
    control: Sender<Control>,
    capabilities: &mut [Capability],
) -> Result<Box<dyn RecordingKeys>, HotkeyError> {
    let bindings = Bindings::parse(
        &config.hotkey,
        &config.latch_key,
        &config.cancel_key,
        config.paste_last_key.as_deref(),
        config.mode,
    )?;
    let hotkeys = &shared.platform.hotkeys;
    match hotkeys.bind(&bindings, control) {
        Ok(()) => Ok(hotkeys.recording_keys(&bindings)),
        Err(HotkeyError::Unavailable(why)) => {
            tracing::warn!("global hotkeys are unavailable: {why}");
            set_capability(capabilities, "hotkey", Err(why));
            Ok(Box::new(NoRecordingKeys))
        }
        Err(e) => Err(e),
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
                shared.update_status(|s| s.state = AppState::Idle)
            }
            DictationEvent::RecordingStarted { id, audio_path } => {
                if self.sounds {
                    sounds::play(sounds::Cue::Start);
                }
                let recording = Recording {
                    audio_path: audio_path.clone(),
                    created_ms: unix_ms() as i64,
                    audio_ms: 0,
                };
                self.recordings.insert(*id, recording);
                shared.update_status(|s| {
                    s.state = AppState::Recording;
                    s.error = None;
                });
            }
            DictationEvent::RecordingStopped { id, audio_ms } => {
                if self.sounds {
                    sounds::play(sounds::Cue::Stop);
                }
                if let Some(r) = self.recordings.get_mut(id) {
                    r.audio_ms = *audio_ms;
                }
                shared.service.transcribing.store(true, Ordering::SeqCst);
                shared.update_status(|s| s.state = AppState::Transcribing);
            }
            DictationEvent::Cancelled { id } => {
                self.recordings.remove(id);
                shared.service.transcribing.store(false, Ordering::SeqCst);
                shared.update_status(|s| s.state = AppState::Idle);
            }
            DictationEvent::TextDelivered {
                id,
                text,
                raw_text,
                error,
                ..
            } => {
                shared.service.transcribing.store(false, Ordering::SeqCst);
                if let Some(dictation) = self.recordings.remove(id) {
                    // A failed dictation is listed even without text, so
                    // the user sees it and can retry it.
                    if !text.is_empty() || error.is_some() {
                        let entry = NewEntry {
                            raw_text: raw_text.clone(),
                            error: error.clone(),
                            ..self.entry(text, dictation)
                        };
                        self.shared.add_history(&entry);
                    }
                }
                shared.update_status(|s| {
                    s.state = AppState::Idle;
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
            DictationEvent::Error { message } => {
                tracing::warn!("dictation: {message}");
                let message = message.clone();
                shared.update_status(|s| s.error = Some(message));
            }
            _ => {}
        }
        shared.emit(AppEvent::Dictation(Stamped::from(event)));
    }

    fn entry(&self, text: &str, dictation: Recording) -> NewEntry {
        NewEntry {
            kind: EntryKind::Dictation,
            text: text.to_string(),
            created_ms: dictation.created_ms,
            duration_ms: dictation.audio_ms as i64,
            model: self.model.clone(),
            language: self.language.clone(),
            audio_path: Some(dictation.audio_path.into()),
            source_name: None,
            segments: vec![],
            error: None,
            raw_text: None,
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
                self.shared.add_history(&NewEntry {
                    raw_text: raw_text.map(str::to_owned),
                    ..self.entry(
                        text,
                        Recording {
                            audio_path: audio_path.to_string(),
                            created_ms: unix_ms() as i64,
                            audio_ms,
                        },
                    )
                });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("history: {e}"),
        }
    }
}
