//! utter-convert: converters from formats other tools ship into formats the
//! engine loads: CTranslate2 (faster-whisper) Whisper models → whisper.cpp
//! `.bin`, Silero VAD safetensors → whisper.cpp-style Silero `.bin`, and
//! Moonshine's ONNX Runtime `.ort` files → a `moonshine` GGUF.
//!
//! Pure format code over bytes (a converter may read the files of a model
//! folder, nothing else): it knows nothing of the models directory, the
//! engine or the app. `utter-core` imports through it (`models::import`) and
//! re-exports it as `utter_models::convert`; the fuzz targets use it
//! alone.

pub mod ct2;
pub mod ggml;
pub mod gguf;
pub mod mel;
pub mod moonshine;
pub mod ort;
pub mod quant;
pub mod silero;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod vocab;
pub mod whisper_bin;

use std::path::{Path, PathBuf};

/// Why a conversion failed. The messages are meant for the user.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("truncated model file: {0}")]
    Truncated(String),
    #[error("malformed model file: {0}")]
    Format(String),
    #[error("unsupported model: {0}")]
    Unsupported(String),
}

impl ConvertError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
