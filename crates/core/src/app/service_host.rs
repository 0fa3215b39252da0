//! Runs the dictation service on its own thread with the current settings,
//! and restarts it when they change. Its events become history entries,
//! status changes, cues and UI events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Sender};

use super::{load_models, lock, sounds, AppEvent, AppState, LoadFailure, Shared};
use crate::dictation::events::{DictationEvent, Stamped};
use crate::dictation::record_log::unix_ms;
use crate::dictation::service::{self, Control, ServiceConfig};
use crate::history::{EntryKind, NewEntry};

#[derive(Default)]
pub(super) struct ServiceHost {
    running: Mutex<Option<Running>>,
    transcribing: AtomicBool,
}

struct Running {
    control: Sender<Control>,
    thread: JoinHandle<()>,
}

impl ServiceHost {
    pub fn send(&self, control: Control) -> Result<(), String> {
        let running = lock(&self.running);
        let r = running
            .as_ref()
            .filter(|r| !r.thread.is_finished())
            .ok_or("dictation is not running (no model, or the hotkey could not be registered)")?;
        r.control
            .send(control)
            .map_err(|_| "dictation has stopped".to_string())
    }

    pub fn transcribing(&self) -> bool {
        self.transcribing.load(Ordering::SeqCst)
    }

    /// Finishes a dictation in progress, then stops the service.
    pub fn stop(&self) {
        if let Some(r) = lock(&self.running).take() {
            let _ = r.control.send(Control::Shutdown);
            let _ = r.thread.join();
        }
    }
}

/// Stops the running service (if any) and starts one with the current
/// settings, in the background: loading a model must never block the UI.
pub(super) fn restart(shared: &Arc<Shared>) {
    let shared = shared.clone();
    std::thread::spawn(move || {
        // Held across stop and start, so concurrent restarts run one after another.
        let mut running = lock(&shared.service.running);
        if let Some(r) = running.take() {
            let _ = r.control.send(Control::Shutdown);
            let _ = r.thread.join();
        }
        let (control, control_rx) = unbounded();
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("utter-dictation".into())
            .spawn(move || run(&worker, control_rx))
            .expect("spawn the dictation thread");
        *running = Some(Running { control, thread });
    });
}

fn run(shared: &Arc<Shared>, control: crossbeam_channel::Receiver<Control>) {
    shared.update_status(|s| s.state = AppState::Loading);
    let settings = shared.settings();
    let loaded = match load_models(shared, settings.model.as_deref()) {
        Ok(l) => l,
        Err(LoadFailure::NoModel) => {
            shared.update_status(|s| {
                s.state = AppState::NoModel;
                s.model = None;
            });
            return;
        }
        Err(LoadFailure::Error(message)) => {
            shared.update_status(|s| {
                s.state = AppState::Error;
                s.error = Some(message);
            });
            return;
        }
    };
    let info = loaded.engine.info().clone();
    let mut language = settings.engine_language();
    let language_problem = info.check_language(language.as_deref()).err();
    if language_problem.is_some() {
        language = None; // dictate in the model's language rather than not at all
    }
    shared.update_status(|s| {
        s.model = Some(loaded.model_name.clone());
        s.model_arch = Some(info.arch.clone());
        s.languages = info.languages.clone();
        s.detects_language = info.detects_language;
        s.error = language_problem.map(|p| format!("{p}; choose another language in Settings"));
    });

    let mut config = ServiceConfig::new(loaded.model_name.clone());
    config.hotkey = settings.hotkey.clone();
    config.mode = settings
        .trigger_mode()
        .unwrap_or(crate::dictation::trigger::TriggerMode::PushToTalk);
    config.device = settings.input_device.clone();
    config.output = settings.output_config().unwrap_or_default();
    config.dictation.language = language.clone();
    config.dictation.segmenter.threshold = settings.vad_threshold;
    config.dictation.segmenter.min_silence_ms = settings.silence_ms;
    config.recordings_dir = shared.paths.recordings.clone();
    // History owns the audio's retention, not a count.
    config.keep_recordings = usize::MAX;
    config.emit_levels = true;
    if let Err(e) = std::fs::create_dir_all(&config.recordings_dir) {
        shared.update_status(|s| {
            s.state = AppState::Error;
            s.error = Some(format!(
                "cannot create {}: {e}",
                config.recordings_dir.display()
            ));
        });
        return;
    }

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
        &mut |e| handler.handle(e),
    );
    let result = service::run(config, loaded.engine, vad, control, |e| handler.handle(e));
    shared.service.transcribing.store(false, Ordering::SeqCst);
    match result {
        Ok(()) => shared.update_status(|s| s.state = AppState::Loading),
        Err(e) => shared.update_status(|s| {
            s.state = AppState::Error;
            s.error = Some(format!("{e}"));
        }),
    }
}

/// Turns the service's events into app effects.
struct EventHandler {
    shared: Arc<Shared>,
    model: String,
    language: Option<String>,
    sounds: bool,
    /// Audio path, start time and length of each dictation in flight.
    recordings: HashMap<u64, (String, i64, u64)>,
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
                self.recordings
                    .insert(*id, (audio_path.clone(), unix_ms() as i64, 0));
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
                    r.2 = *audio_ms;
                }
                shared.service.transcribing.store(true, Ordering::SeqCst);
                shared.update_status(|s| s.state = AppState::Transcribing);
            }
            DictationEvent::Cancelled { id } => {
                self.recordings.remove(id);
                shared.service.transcribing.store(false, Ordering::SeqCst);
                shared.update_status(|s| s.state = AppState::Idle);
            }
            DictationEvent::TextDelivered { id, text, .. } => {
                shared.service.transcribing.store(false, Ordering::SeqCst);
                if let Some((audio, created_ms, audio_ms)) = self.recordings.remove(id) {
                    if !text.is_empty() {
                        self.record(text, audio, created_ms, audio_ms);
                    }
                }
                shared.update_status(|s| {
                    s.state = AppState::Idle;
                    if !text.is_empty() {
                        s.last_text = Some(text.clone());
                    }
                });
            }
            DictationEvent::Recovered { audio_path, text } => {
                let audio_ms = hound::WavReader::open(audio_path)
                    .map(|r| {
                        u64::from(r.duration()) * 1000 / u64::from(r.spec().sample_rate.max(1))
                    })
                    .unwrap_or(0);
                if !text.is_empty() {
                    self.record(text, audio_path.clone(), unix_ms() as i64, audio_ms);
                }
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

    fn record(&self, text: &str, audio: String, created_ms: i64, audio_ms: u64) {
        self.shared.add_history(&NewEntry {
            kind: EntryKind::Dictation,
            text: text.to_string(),
            created_ms,
            duration_ms: audio_ms as i64,
            model: self.model.clone(),
            language: self.language.clone(),
            audio_path: Some(audio.into()),
            source_name: None,
            segments: vec![],
        });
    }
}
