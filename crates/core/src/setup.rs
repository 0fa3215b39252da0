//! One dictation setup for both front ends: the CLI (`utter dictate`) and
//! the app turn their options into [`Settings`], and this module loads the
//! models, starts the engine, checks the language and builds the service's
//! configuration. Each front end then binds its keys and output its own way.

use std::path::PathBuf;

use crate::dictation::service::ServiceConfig;
use crate::engine::UnsupportedLanguage;
use crate::models::load::{load_models, EngineOptions, LoadError, LoadedModels};
use crate::models::{ModelStore, ModelUse};
use crate::settings::{Settings, SettingsError};

impl ServiceConfig {
    /// What the settings say about dictation; fields the settings do not
    /// hold (latch and cancel keys, post-roll, retention) keep their defaults.
    pub fn from_settings(settings: &Settings, model_name: String) -> Result<Self, SettingsError> {
        let mut config = ServiceConfig::new(model_name);
        config.hotkey = settings.hotkey.clone();
        config.mode = settings.mode;
        config.device = settings.input_device.clone();
        config.output = settings.output_config();
        config.dictation.vocabulary = settings.vocabulary.clone();
        config.dictation.segmenter.threshold = settings.vad_threshold;
        config.dictation.segmenter.min_silence_ms = settings.silence_ms;
        let rules = settings.text_rules()?;
        let language = settings.engine_language();
        config.text_rules = rules.for_language(language.as_deref());
        config.dictation.language = language;
        Ok(config)
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
    let mut config = ServiceConfig::from_settings(settings, models.model_name.clone())?;
    let unsupported_language = models
        .engine
        .info()
        .check_language(config.dictation.language.as_deref())
        .err();
    if unsupported_language.is_some() {
        // Dictate in the model's language rather than not at all.
        config.dictation.language = None;
        config.text_rules = settings.text_rules()?.for_language(None);
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
