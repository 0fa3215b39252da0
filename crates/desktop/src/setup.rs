//! One dictation setup for both front ends: the CLI (`utter dictate`) and
//! the app turn their options into [`Settings`]; [`prepare`] loads the
//! models, starts the engine, checks the language and builds the service's
//! configuration; [`Prepared::wire`] binds the keys (falling back to `utter
//! ptt` where the desktop has no global hotkeys), points the ptt socket at
//! the service and opens the output; [`Wired::run`] recovers unfinished
//! dictations and runs the service. What differs between the front ends is
//! only what they do with the events (print them, or update the app).

use std::path::PathBuf;

use crossbeam_channel::{Receiver, Sender};

use std::sync::Arc;
use std::time::Duration;

use utter_capture::microphone::CpalMicrophone;
use utter_core::dictation::events::DictationEvent;
use utter_core::dictation::rewrite_step::RewriteStep;
use utter_core::dictation::service::{self, ServiceConfig, ServiceIo};
use utter_core::dictation::silence_stop::SilenceStop;
use utter_core::settings::{Settings, SettingsError};
use utter_engine::UnsupportedLanguage;
use utter_models::load::{load_models, EngineOptions, LoadError, LoadedModels};
use utter_models::{ModelStore, ModelUse};
use utter_platform::clipboard::SystemClipboard;
use utter_platform::desktop::DesktopSession;
use utter_platform::ducking::{self, Ducker};
use utter_platform::focus::SessionFocus;
use utter_platform::hotkeys::{Bindings, HotkeyError, Hotkeys, NoRecordingKeys, RecordingKeys};
use utter_platform::output::selection::{NoSelection, SelectionReader, SystemSelection};
use utter_platform::output::{OutputConfig, OutputEnv, OutputError, TextSink};
use utter_platform::ptt::PttServer;
use utter_ports::control::Control;
use utter_ports::other_audio::LeaveOtherAudio;
use utter_postprocess::TextRules;
use utter_rewrite::KeyStore;

/// The settings' text rules, with this desktop's clock and clipboard for a
/// snippet's placeholders.
pub fn text_rules(settings: &Settings) -> Result<TextRules, SettingsError> {
    settings.text_rules(Arc::new(SystemClipboard))
}

/// What the settings say about dictation; fields the settings do not hold
/// (latch and cancel keys, post-roll, retention) keep their defaults.
pub fn service_config(
    settings: &Settings,
    model_name: String,
) -> Result<ServiceConfig, SettingsError> {
    let mut config = ServiceConfig::new(model_name);
    config.hotkey = settings.hotkey.clone();
    config.mode = settings.mode;
    config.device = settings.input_device.clone();
    config.mic = settings.microphone;
    config.output = settings.output_config();
    config.dictation.vocabulary = settings.vocabulary.clone();
    config.dictation.segmenter.threshold = settings.vad_threshold;
    config.dictation.segmenter.min_silence_ms = settings.silence_ms;
    config.dictation.translate = settings.translate;
    let rules = text_rules(settings)?;
    let language = settings.engine_language();
    config.text_rules = rules.for_language(language.as_deref());
    config.profiles = settings.profile_set()?;
    config.dictation.language = language;
    config.rewrite = rewrite_step(settings)?;
    if config.rewrite.is_some() {
        config.command_key = settings.command_key.clone();
    }
    config.meeting_key = settings.meeting_key.clone();
    config.spoken_submit = settings.spoken_submit_words();
    config.edit_commands = settings.edit_commands;
    config.duck_other_audio = settings
        .duck_other_audio
        .map(|percent| f32::from(percent.min(100)) / 100.0);
    config.stop_on_silence = settings
        .stop_on_silence_ms
        .map(|ms| SilenceStop::after(Duration::from_millis(ms.into())));
    Ok(config)
}

/// The AI step as the settings have it, with the provider's key from the
/// system keychain (read only for a hosted provider, and only when on).
fn rewrite_step(settings: &Settings) -> Result<Option<RewriteStep>, SettingsError> {
    if !settings.rewrite.enabled {
        return Ok(None);
    }
    let key = KeyStore::default().key_for(&settings.rewrite.provider);
    if let Err(e) = &key {
        tracing::warn!("AI rewrite: {e}");
    }
    RewriteStep::new(settings.rewrite.clone(), key).map_err(|e| SettingsError::Invalid {
        field: "rewrite",
        why: e.to_string(),
    })
}

/// What reads the selection for AI command mode: nothing unless its key is
/// bound (the reader holds a clipboard connection).
fn selection_reader(config: &ServiceConfig, output: &OutputEnv) -> Box<dyn SelectionReader> {
    if config.command_key.is_none() || output.session == DesktopSession::Headless {
        return Box::new(NoSelection);
    }
    match SystemSelection::new(output.clone()) {
        Ok(reader) => Box::new(reader),
        Err(e) => {
            tracing::warn!("the selection cannot be read, so commands act on none: {e}");
            Box::new(NoSelection)
        }
    }
}

/// Why dictation could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("cannot create the recordings folder {path}: {source}")]
    RecordingsDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Ready to run: the service's configuration and the loaded models.
pub struct Prepared {
    pub config: ServiceConfig,
    pub models: LoadedModels,
    /// The settings' language is one the model does not know; `config`
    /// dictates in the model's own language instead. The CLI refuses to
    /// start, the app starts and shows it.
    pub unsupported_language: Option<UnsupportedLanguage>,
}

/// Loads the settings' model (and the VAD), starts the engine and builds
/// the configuration, recording into `recordings_dir` (created here).
/// The app's `options` come from the settings
/// ([`Settings::engine_options`]); the CLI's from its flags.
pub fn prepare(
    store: &ModelStore,
    settings: &Settings,
    recordings_dir: PathBuf,
    options: EngineOptions,
) -> Result<Prepared, SetupError> {
    let models = load_models(
        store,
        settings.model.as_deref(),
        ModelUse::Dictation,
        options,
    )?;
    let mut config = service_config(settings, models.model_name.clone())?;
    let unsupported_language = models
        .engine
        .info()
        .check_language(config.dictation.language.as_deref())
        .err();
    if unsupported_language.is_some() {
        // Dictate in the model's language rather than not at all.
        config.dictation.language = None;
        config.text_rules = text_rules(settings)?.for_language(None);
    }
    std::fs::create_dir_all(&recordings_dir).map_err(|source| SetupError::RecordingsDir {
        path: recordings_dir.clone(),
        source,
    })?;
    config.recordings_dir = recordings_dir;
    Ok(Prepared {
        config,
        models,
        unsupported_language,
    })
}

/// Why a prepared dictation could not be wired to the desktop.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A key that does not parse or is taken (no fallback helps).
    #[error(transparent)]
    Keys(#[from] HotkeyError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// The front end's ends towards the desktop. They outlive one run of the
/// service (the app keeps them across restarts).
pub struct Desktop<'a> {
    pub hotkeys: &'a Hotkeys,
    /// `utter ptt ...` reaches the service through this, if it started.
    pub ptt: Option<&'a PttServer>,
    pub output: OutputEnv,
    /// Opens the dictation's output: the platform's
    /// [`open_sink`](utter_platform::output::open_sink), or a front end's
    /// own kept sink (the app shares one with History's Paste, so that one
    /// clipboard server serves the user's copy, whatever restarts).
    pub open_sink: &'a OpenSink,
}

/// How [`Desktop::open_sink`] opens a sink: the sink and, when the method
/// works another way here, what happens instead.
pub type OpenSink =
    dyn Fn(&OutputConfig, &OutputEnv) -> Result<(Box<dyn TextSink>, Option<String>), OutputError>;

/// Something that does not work here as asked; dictation runs anyway.
#[derive(Debug, Clone, PartialEq)]
pub enum Degraded {
    /// No global hotkeys on this desktop (why): `utter ptt` and the app's
    /// button drive dictation instead.
    NoHotkeys(String),
    /// The output method works another way here (e.g. the text is left on
    /// the clipboard): the method's name and what happens instead.
    Output {
        method: &'static str,
        message: String,
    },
}

/// A dictation ready to run: keys bound, ptt pointed at it, output open.
pub struct Wired<'a> {
    pub config: ServiceConfig,
    pub models: LoadedModels,
    /// What works differently than asked, for the front end to tell.
    pub degraded: Vec<Degraded>,
    io: ServiceIo,
    control_rx: Receiver<Control>,
    desktop: Desktop<'a>,
}

impl Prepared {
    /// Binds the configured keys to `control` (the service reads the other
    /// end, `control_rx`), points the ptt socket at it and opens the output.
    /// Set the front end's own fields of `self.config` before calling this.
    pub fn wire<'a>(
        self,
        desktop: Desktop<'a>,
        control: Sender<Control>,
        control_rx: Receiver<Control>,
    ) -> Result<Wired<'a>, WireError> {
        let config = self.config;
        let mut degraded = vec![];
        let bindings = Bindings::parse(
            &config.hotkey,
            &config.latch_key,
            &config.cancel_key,
            config.paste_last_key.as_deref(),
            config.mode,
        )?
        .with_command(config.command_key.as_deref())?
        .with_meeting(config.meeting_key.as_deref())?;
        let keys: Box<dyn RecordingKeys> = match desktop.hotkeys.bind(&bindings, control.clone()) {
            Ok(()) => desktop.hotkeys.recording_keys(&bindings),
            Err(HotkeyError::Unavailable(why)) => {
                tracing::warn!("global hotkeys are unavailable: {why}");
                degraded.push(Degraded::NoHotkeys(why.to_string()));
                Box::new(NoRecordingKeys)
            }
            Err(e) => return Err(e.into()),
        };
        let (sink, notice) = match (desktop.open_sink)(&config.output, &desktop.output) {
            Ok(opened) => opened,
            Err(e) => {
                desktop.hotkeys.unbind();
                return Err(e.into());
            }
        };
        if let Some(message) = notice {
            degraded.push(Degraded::Output {
                method: config.output.method.name(),
                message,
            });
        }
        if let Some(ptt) = desktop.ptt {
            ptt.set_target(Some(control));
        }
        let io = ServiceIo {
            keys,
            sink,
            mic: Box::new(CpalMicrophone::new(config.device.clone())),
            focus: Box::new(SessionFocus::new(
                desktop.output.session.clone(),
                desktop.output.main_thread.clone(),
            )),
            selection: selection_reader(&config, &desktop.output),
            other_audio: match config.duck_other_audio {
                Some(level) => Box::new(Ducker::new(level, ducking::journal_path())),
                None => Box::new(LeaveOtherAudio),
            },
        };
        Ok(Wired {
            config,
            models: self.models,
            degraded,
            io,
            control_rx,
            desktop,
        })
    }
}

impl Wired<'_> {
    /// Transcribes what an earlier run left unfinished, then runs the
    /// service until it is told to shut down; the keys and the ptt socket
    /// let go of it after.
    pub fn run(self, mut emit: impl FnMut(DictationEvent)) {
        let LoadedModels {
            model_name,
            engine,
            mut vad,
        } = self.models;
        // Volumes a run cut off while ducking left turned down go back up
        // (whatever the setting is now).
        match ducking::restore_after_crash(&ducking::journal_path()) {
            Ok(0) => {}
            Ok(n) => emit(DictationEvent::Notice {
                message: format!(
                    "{n} other program(s) left turned down by a dictation that was cut off were \
                     turned back up"
                ),
            }),
            Err(e) => emit(DictationEvent::Notice {
                message: format!("other audio left turned down could not be restored: {e}"),
            }),
        }
        utter_core::dictation::recover_unfinished(
            &self.config.recordings_dir,
            &engine,
            &mut vad,
            &model_name,
            &self.config.text_rules,
            &mut emit,
        );
        service::run(self.config, engine, vad, self.control_rx, self.io, emit);
        if let Some(ptt) = self.desktop.ptt {
            ptt.set_target(None);
        }
        self.desktop.hotkeys.unbind();
    }
}
