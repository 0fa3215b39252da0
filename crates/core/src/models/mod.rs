//! Speech and VAD models: converting other tools' formats, importing into the
//! models directory with a manifest, provisioning the defaults, and resolving
//! what a command asked for (`--model NAME|PATH`) into a file.

pub mod convert;
pub mod defaults;
pub mod import;
pub mod store;

pub use defaults::{install_default, DefaultInstall};
pub use import::{import, ImportSource};
pub use store::{ModelEntry, ModelKind, ModelStore};

use std::path::PathBuf;

/// Errors about models, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Convert(#[from] convert::ConvertError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the engine could not load it: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Provision(String),
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// What to tell a user who has no speech model yet.
pub const INSTALL_HINT: &str =
    "run `utter models install-default` to install the default model, or `utter models import PATH`";
