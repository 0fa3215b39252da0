//! Makes a model pair ready to run: the speech model resolved from the store
//! and started in the engine, with the VAD that segments for it. Dictation
//! (CLI and app) and file jobs all start their engine here.

use std::time::Duration;

use super::{ModelError, ModelStore, ModelUse};
use utter_engine::vad::SpeechDetector;
use utter_engine::{Compute, Engine, EngineConfig, EngineError, EngineHost};

/// Why no model pair could be made ready.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Nothing to load yet: the front end offers to install the default.
    #[error("no speech model is installed")]
    NoSpeechModel,
    #[error("no VAD model is installed (dictation and long files need one)")]
    NoVadModel,
    #[error(transparent)]
    Store(#[from] ModelError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl LoadError {
    /// Whether installing the default model would fix this.
    pub fn is_missing_model(&self) -> bool {
        matches!(self, Self::NoSpeechModel | Self::NoVadModel)
    }
}

/// How the engine runs: where, on how many CPU threads (0 = as many of
/// this process's cores as other programs leave free),
/// and when an idle engine gives its memory back.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    pub compute: Compute,
    pub threads: usize,
    pub idle_unload: Option<Duration>,
}

/// A started speech engine with the VAD that segments for it.
pub struct LoadedModels {
    pub model_name: String,
    pub engine: Engine,
    pub vad: SpeechDetector,
}

/// Loads `model` (a name or path; `None`: the store's default for `use_`)
/// and the VAD.
pub fn load_models(
    store: &ModelStore,
    model: Option<&str>,
    use_: ModelUse,
    options: EngineOptions,
) -> Result<LoadedModels, LoadError> {
    if model.is_none() && store.default_for(use_)?.is_none() {
        return Err(LoadError::NoSpeechModel);
    }
    let vad_entry = store.vad()?.ok_or(LoadError::NoVadModel)?;
    let (model_name, model_path) = store.resolve_speech_for(model, use_)?;
    let engine = Engine::start(EngineConfig {
        threads: utter_engine::cpu::Threads::from_setting(options.threads),
        compute: options.compute,
        host: EngineHost::for_this_process().with_idle_unload(options.idle_unload),
        ..EngineConfig::new(model_path)
    })?;
    let vad = SpeechDetector::load(&store.path_of(&vad_entry))?;
    Ok(LoadedModels {
        model_name,
        engine,
        vad,
    })
}
