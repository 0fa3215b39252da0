//! The dictation service: the one thread where hotkeys, control messages,
//! microphone audio and engine results are serialised, so a press and a
//! release can never race. It owns the microphone (opened on demand), the
//! current [`Dictation`], and the output.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, Receiver};
use global_hotkey::hotkey::HotKey;
use global_hotkey::{GlobalHotKeyEvent, GlobalHotKeyManager, HotKeyState};

use crate::audio::capture::{Capture, CaptureEvent};
use crate::engine::Engine;
use crate::output::{Output, OutputConfig};
use crate::vad::SpeechDetector;

use super::events::DictationEvent;
use super::record_log::{self, RecordingRecord, RecordingStatus};
use super::session::{post_roll_done, Dictation, DictationConfig};
use super::trigger::{parse_hotkey, Intent, Trigger, TriggerKey, TriggerMode};

/// Everything the service needs to know, resolved at the edge.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    pub hotkey: String,
    pub mode: TriggerMode,
    pub latch_key: String,
    pub cancel_key: String,
    pub paste_last_key: Option<String>,
    pub device: Option<String>,
    /// Keep the microphone open between dictations (lowest start latency).
    pub always_open_mic: bool,
    /// Audio kept after the key is released, so the last word is not cut.
    pub post_roll: Duration,
    pub output: OutputConfig,
    pub dictation: DictationConfig,
    pub recordings_dir: PathBuf,
    /// Finished recordings whose audio is kept.
    pub keep_recordings: usize,
    pub model_name: String,
    /// Report the mic level (~20 per second) while recording, for level meters.
    pub emit_levels: bool,
}

impl ServiceConfig {
    pub fn new(model_name: String) -> Self {
        Self {
            hotkey: "ctrl+shift+space".into(),
            mode: TriggerMode::PushToTalk,
            latch_key: "ctrl+shift+l".into(),
            cancel_key: "escape".into(),
            paste_last_key: None,
            device: None,
            always_open_mic: false,
            post_roll: Duration::from_millis(400),
            output: OutputConfig::default(),
            dictation: DictationConfig::defaults(),
            recordings_dir: record_log::default_recordings_dir(),
            keep_recordings: 500,
            model_name,
            emit_levels: false,
        }
    }
}

/// Commands from outside the hotkeys (a UI, a signal handler, tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Start,
    Stop,
    Cancel,
    /// Finish any dictation in progress, then return.
    Shutdown,
}

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    Hotkey(String),
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
}

struct Keys {
    manager: GlobalHotKeyManager,
    main: HotKey,
    /// Each recording-time key also with the main hotkey's modifiers added,
    /// because in push-to-talk they are pressed while the hotkey is held.
    latch: [HotKey; 2],
    cancel: [HotKey; 2],
    paste_last: Option<HotKey>,
    recording_keys_on: bool,
}

impl Keys {
    fn new(config: &ServiceConfig) -> Result<Self, ServiceError> {
        let manager = GlobalHotKeyManager::new().map_err(|e| {
            ServiceError::Hotkey(format!(
                "global hotkeys are unavailable: {e} (on Linux they need an X11 session with DISPLAY set)"
            ))
        })?;
        let main = parse_hotkey(&config.hotkey).map_err(ServiceError::Hotkey)?;
        let latch = parse_hotkey(&config.latch_key).map_err(ServiceError::Hotkey)?;
        let cancel = parse_hotkey(&config.cancel_key).map_err(ServiceError::Hotkey)?;
        let paste_last = config
            .paste_last_key
            .as_deref()
            .map(parse_hotkey)
            .transpose()
            .map_err(ServiceError::Hotkey)?;
        let held = |k: HotKey| HotKey::new(Some(k.mods | main.mods), k.key);
        let keys = Self {
            manager,
            main,
            latch: [latch, held(latch)],
            cancel: [cancel, held(cancel)],
            paste_last,
            recording_keys_on: false,
        };
        keys.register(main, &config.hotkey)?;
        if let (Some(k), Some(name)) = (paste_last, &config.paste_last_key) {
            keys.register(k, name)?;
        }
        Ok(keys)
    }

    fn register(&self, key: HotKey, name: &str) -> Result<(), ServiceError> {
        // A previous instance that just exited may still hold the grab until
        // the X server notices; give it a moment before calling the key taken.
        let mut result = self.manager.register(key);
        for _ in 0..10 {
            if result.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
            result = self.manager.register(key);
        }
        result.map_err(|e| {
            let why = match e {
                global_hotkey::Error::AlreadyRegistered(_)
                | global_hotkey::Error::FailedToRegister(_) => {
                    "it is already taken by another application (or another `utter dictate`)"
                        .to_string()
                }
                other => other.to_string(),
            };
            ServiceError::Hotkey(format!(
                "cannot register hotkey `{name}`: {why}; choose another with --hotkey"
            ))
        })
    }

    /// Latch and cancel are grabbed only while recording, so Escape keeps
    /// working normally in other apps the rest of the time.
    fn set_recording(&mut self, on: bool, mode: TriggerMode) {
        if on == self.recording_keys_on {
            return;
        }
        self.recording_keys_on = on;
        let mut keys = self.cancel.to_vec();
        if mode == TriggerMode::PushToTalk {
            keys.extend(self.latch);
        }
        keys.dedup();
        for k in keys {
            let result = if on {
                self.manager.register(k)
            } else {
                self.manager.unregister(k)
            };
            if let Err(e) = result {
                tracing::warn!("hotkey {k:?}: {e}");
            }
        }
    }

    fn which(&self, id: u32) -> Option<TriggerKey> {
        if id == self.main.id() {
            Some(TriggerKey::Main)
        } else if self.latch.iter().any(|k| k.id() == id) {
            Some(TriggerKey::Latch)
        } else if self.cancel.iter().any(|k| k.id() == id) {
            Some(TriggerKey::Cancel)
        } else if self.paste_last.is_some_and(|k| k.id() == id) {
            Some(TriggerKey::PasteLast)
        } else {
            None
        }
    }
}

/// Runs until `Control::Shutdown` (or the control channel closes).
pub fn run(
    config: ServiceConfig,
    engine: Engine,
    mut vad: SpeechDetector,
    control: Receiver<Control>,
    mut emit: impl FnMut(DictationEvent),
) -> Result<(), ServiceError> {
    let mut keys = Keys::new(&config)?;
    let mut output = Output::new(config.output.clone())?;
    let mut trigger = Trigger::new(config.mode);
    let hotkeys = GlobalHotKeyEvent::receiver();
    let mut mic: Option<Capture> = None;
    let mut current: Option<Dictation> = None;
    let mut next_id = 1u64;
    let mut last_text = String::new();
    let mut shutting_down = false;
    // With an always-open mic, the moments before the press are kept as pre-roll.
    let mut preroll: VecDeque<f32> = VecDeque::new();
    const PREROLL_SAMPLES: usize = 16 * 300;
    let mut level_sent = Instant::now();

    let open_mic =
        |emit: &mut dyn FnMut(DictationEvent)| match Capture::open(config.device.as_deref()) {
            Ok(c) => Some(c),
            Err(e) => {
                emit(DictationEvent::Error {
                    message: e.to_string(),
                });
                None
            }
        };
    if config.always_open_mic {
        mic = open_mic(&mut emit);
    }
    emit(DictationEvent::Ready {
        model: config.model_name.clone(),
        mic: mic.as_ref().map_or_else(
            || config.device.clone().unwrap_or_else(|| "default".into()),
            |m| m.info.device.clone(),
        ),
    });

    loop {
        let recording = current.as_ref().is_some_and(|d| d.stopped_at.is_none());
        let audio_rx = mic.as_ref().map(|m| m.events.clone()).unwrap_or_else(never);
        let mut intent: Option<Intent> = None;
        select! {
            recv(control) -> msg => match msg {
                Ok(Control::Start) if !recording => intent = Some(Intent::Start),
                Ok(Control::Stop) if recording => intent = Some(Intent::Stop),
                Ok(Control::Cancel) if recording => intent = Some(Intent::Cancel),
                Ok(Control::Shutdown) | Err(_) => {
                    shutting_down = true;
                    if recording {
                        intent = Some(Intent::Stop);
                    }
                }
                Ok(_) => {}
            },
            recv(hotkeys) -> ev => if let Ok(ev) = ev {
                if let Some(key) = keys.which(ev.id) {
                    intent = trigger.on_key(key, ev.state == HotKeyState::Pressed, recording);
                }
            },
            recv(audio_rx) -> ev => match ev {
                Ok(CaptureEvent::Audio(pcm)) => match current.as_mut() {
                    Some(d) if !d.audio_done => d.push_audio(&pcm, &mut vad, &engine, &mut emit),
                    _ => {
                        preroll.extend(pcm);
                        let excess = preroll.len().saturating_sub(PREROLL_SAMPLES);
                        preroll.drain(..excess);
                    }
                },
                Ok(CaptureEvent::Lost(e)) => {
                    emit(DictationEvent::Error { message: e.to_string() });
                    mic = None;
                    // The dictation keeps what was captured before the device went away.
                    if let Some(d) = current.as_mut() {
                        if d.stopped_at.is_none() {
                            d.stopped_at = Some(Instant::now());
                            emit(DictationEvent::RecordingStopped { id: d.id, audio_ms: d.audio_ms() });
                            keys.set_recording(false, config.mode);
                        }
                        d.finish_audio(&mut vad, &engine, &mut emit);
                    }
                }
                Err(_) => mic = None,
            },
            // Busy only while a dictation is in flight; idle, wake rarely (CPU ≈ 0).
            default(if current.is_some() { Duration::from_millis(10) } else { Duration::from_secs(1) }) => {}
        }

        if config.emit_levels && recording && level_sent.elapsed() >= Duration::from_millis(50) {
            if let Some(m) = &mic {
                emit(DictationEvent::Level { rms: m.level() });
                level_sent = Instant::now();
            }
        }

        match intent {
            Some(Intent::Start) if current.is_none() => {
                if mic.is_none() {
                    mic = open_mic(&mut emit);
                }
                if mic.is_some() {
                    let path = record_log::new_recording_path(&config.recordings_dir);
                    match Dictation::start(
                        next_id,
                        &path,
                        config.dictation.clone(),
                        &mut vad,
                        &engine,
                    ) {
                        Ok(mut d) => {
                            // Grab cancel/latch before announcing, so an immediate press is not lost.
                            keys.set_recording(true, config.mode);
                            emit(DictationEvent::RecordingStarted {
                                id: d.id,
                                audio_path: path.display().to_string(),
                            });
                            let pre: Vec<f32> = preroll.drain(..).collect();
                            if !pre.is_empty() {
                                d.push_audio(&pre, &mut vad, &engine, &mut emit);
                            }
                            next_id += 1;
                            current = Some(d);
                        }
                        Err(e) => emit(DictationEvent::Error {
                            message: format!(
                                "{}: cannot create the recording: {e}",
                                path.display()
                            ),
                        }),
                    }
                }
            }
            Some(Intent::Stop) => {
                if let Some(d) = current.as_mut().filter(|d| d.stopped_at.is_none()) {
                    d.stopped_at = Some(Instant::now());
                    emit(DictationEvent::RecordingStopped {
                        id: d.id,
                        audio_ms: d.audio_ms(),
                    });
                    keys.set_recording(false, config.mode);
                }
            }
            Some(Intent::Latch) => {
                if let Some(d) = &current {
                    emit(DictationEvent::Latched { id: d.id });
                }
            }
            Some(Intent::Cancel) => {
                if let Some(mut d) = current.take() {
                    engine.cancel();
                    d.stopped_at = Some(Instant::now());
                    d.abort(&engine);
                    emit(DictationEvent::Cancelled { id: d.id });
                    keys.set_recording(false, config.mode);
                    let _ = record_log::write_record(
                        d.audio_path(),
                        &RecordingRecord {
                            status: RecordingStatus::Cancelled,
                            text: String::new(),
                            model: config.model_name.clone(),
                            audio_ms: d.audio_ms(),
                            finished_unix_ms: record_log::unix_ms(),
                        },
                    );
                    if !config.always_open_mic {
                        mic = None;
                    }
                    // Drain replies of the cancelled requests so they cannot leak into the next one.
                    while !d.poll(&mut |_| {}) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
            Some(Intent::PasteLast) => {
                if let Err(e) = output.deliver(&last_text) {
                    emit(DictationEvent::Error {
                        message: e.to_string(),
                    });
                }
            }
            _ => {}
        }

        if let Some(d) = current.as_mut() {
            // Post-roll over (or the user had already stopped speaking, so the
            // rest is silence): close the mic (unless always open) and send the tail.
            let post_roll_done = d
                .stopped_at
                .is_some_and(|t| post_roll_done(t.elapsed(), config.post_roll, d.hearing_speech()));
            if !d.audio_done && post_roll_done {
                if !config.always_open_mic {
                    if let Some(m) = mic.take() {
                        let rx = m.events.clone();
                        m.close(); // delivers what was still buffered
                        for ev in rx.try_iter() {
                            if let CaptureEvent::Audio(pcm) = ev {
                                d.push_audio(&pcm, &mut vad, &engine, &mut emit);
                            }
                        }
                    }
                }
                d.finish_audio(&mut vad, &engine, &mut emit);
            }
            if d.poll(&mut emit) {
                let d = current.take().expect("current");
                let text = d.text();
                let status = if text.is_empty() {
                    RecordingStatus::NoSpeech
                } else {
                    RecordingStatus::Delivered
                };
                let delivered = output.deliver(&text);
                if let Err(e) = &delivered {
                    emit(DictationEvent::Error {
                        message: e.to_string(),
                    });
                }
                emit(DictationEvent::TextDelivered {
                    id: d.id,
                    text: text.clone(),
                    output: format!("{:?}", output.method()).to_lowercase(),
                    engine_ms: d.engine_ms(),
                    segments: d.segments(),
                });
                if !text.is_empty() {
                    last_text = text.clone();
                }
                // The sidecar marks the recording finished only once the text is out
                // (on a delivery error it stays unfinished and is recovered next start).
                if delivered.is_ok() {
                    let _ = record_log::write_record(
                        d.audio_path(),
                        &RecordingRecord {
                            status,
                            text,
                            model: config.model_name.clone(),
                            audio_ms: d.audio_ms(),
                            finished_unix_ms: record_log::unix_ms(),
                        },
                    );
                }
                record_log::prune(&config.recordings_dir, config.keep_recordings);
            }
        }
        if shutting_down && current.is_none() {
            return Ok(());
        }
    }
}
