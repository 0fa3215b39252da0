//! The crate's one error type: what went wrong, and with which file.

use std::path::PathBuf;

/// Why the models could not be loaded or a recording not diarized.
#[derive(Debug, thiserror::Error)]
pub enum DiarizeError {
    #[error("cannot read the speaker model {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a PyTorch checkpoint (a zip archive with data.pkl): {reason}")]
    NotACheckpoint { path: PathBuf, reason: String },
    #[error("{path} is damaged or truncated: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    /// Its tensor map (`data.pkl`) cannot be read.
    #[error("{path} is damaged or truncated: data.pkl: {source}")]
    BadTensorMap {
        path: PathBuf,
        #[source]
        source: crate::checkpoint::PickleError,
    },
    #[error("{path} lacks the tensor {name}: is it the right model file?")]
    MissingTensor { path: PathBuf, name: String },
    #[error("{path}: tensor {name} has shape {found:?}, expected {expected:?}: is it the right model file?")]
    WrongShape {
        path: PathBuf,
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("invalid diarization options: {0}")]
    InvalidOptions(String),
    #[error("diarization cancelled")]
    Cancelled,
}
