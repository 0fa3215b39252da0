//! The engine's compute backends. A static build has them compiled in; the
//! portable build (`dynamic-backends`: one CPU module per x86-64 level, the
//! best one picked at start, so any x86-64 CPU runs it) loads them as modules
//! from the folder libtranscribe was loaded from. transcribe.cpp requires
//! that to happen once, before any device is listed or model loaded
//! (`transcribe_cpp::init_backends`), so every such call goes through here.

use std::sync::{Arc, OnceLock};

/// Why the backend modules could not be loaded. Clone (the first answer is
/// kept and given to every caller), so the source is shared.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum BackendLoadError {
    #[error(
        "the speech engine's compute modules (libggml-cpu-*) were not found next \
         to its library ({0}); reinstall Utter"
    )]
    ModulesMissing(#[source] Arc<transcribe_cpp::Error>),
}

/// Loads the backend modules (a no-op in a static build); the same answer
/// every time after the first call.
pub(crate) fn ensure_loaded() -> Result<(), BackendLoadError> {
    static LOADED: OnceLock<Result<(), BackendLoadError>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            transcribe_cpp::init_backends_default()
                .map_err(|e| BackendLoadError::ModulesMissing(Arc::new(e)))
        })
        .clone()
}
