//! The installed speech models as the API names them. A request names a
//! model by its installed name; OpenAI's own names (`whisper-1`,
//! `gpt-4o-transcribe`...) mean the default model for files. A request never
//! names a path: only the manifest's entries can be loaded.

use std::path::PathBuf;
use std::time::UNIX_EPOCH;

use serde::Serialize;
use utter_models::{ModelEntry, ModelKind, ModelStore, ModelUse};

use crate::error::ApiError;

/// Model ids that OpenAI's clients send by default.
pub fn is_openai_name(id: &str) -> bool {
    id == "whisper-1" || id.starts_with("gpt-4o-") && id.contains("transcribe")
}

/// A model a request resolved to.
pub struct Resolved {
    pub name: String,
    pub path: PathBuf,
}

/// `GET /v1/models` entries.
#[derive(Debug, Serialize)]
pub struct ApiModel {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub owned_by: &'static str,
}

pub struct Catalog {
    store: ModelStore,
}

impl Catalog {
    pub fn new(store: ModelStore) -> Self {
        Self { store }
    }

    pub fn store(&self) -> &ModelStore {
        &self.store
    }

    pub fn speech(&self) -> Result<Vec<ModelEntry>, ApiError> {
        Ok(self
            .store
            .list()
            .map_err(|e| ApiError::internal(format!("The models could not be listed: {e}")))?
            .into_iter()
            .filter(|m| m.kind == ModelKind::Speech)
            .collect())
    }

    pub fn names(&self) -> Result<Vec<String>, ApiError> {
        Ok(self.speech()?.into_iter().map(|m| m.name).collect())
    }

    /// The default model for files (what `whisper-1` means here).
    pub fn default_model(&self) -> Result<Resolved, ApiError> {
        match self.store.default_for(ModelUse::Files) {
            Ok(Some(entry)) => Ok(self.resolved(&entry)),
            Ok(None) => Err(ApiError::unavailable(
                "No speech model is installed on this server. Install one with Utter, then retry.",
            )
            .with_code("no_model")),
            Err(e) => Err(ApiError::internal(format!(
                "The models could not be read: {e}"
            ))),
        }
    }

    /// The model a request names, or the default when it names none (no
    /// field, or an empty one).
    pub fn named_or_default(&self, id: Option<&str>) -> Result<Resolved, ApiError> {
        match id.filter(|id| !id.is_empty()) {
            Some(id) => self.resolve(id),
            None => self.default_model(),
        }
    }

    pub fn resolve(&self, id: &str) -> Result<Resolved, ApiError> {
        if is_openai_name(id) {
            return self.default_model();
        }
        match self.speech()?.into_iter().find(|m| m.name == id) {
            Some(entry) => Ok(self.resolved(&entry)),
            None => Err(ApiError::model_not_found(id, &self.names()?)),
        }
    }

    fn resolved(&self, entry: &ModelEntry) -> Resolved {
        Resolved {
            name: entry.name.clone(),
            path: self.store.path_of(entry),
        }
    }

    /// The installed models that can translate into English.
    pub fn translators(&self) -> Result<Vec<String>, ApiError> {
        Ok(self
            .speech()?
            .into_iter()
            .filter(|m| m.capabilities.as_ref().is_some_and(|c| c.translates))
            .map(|m| m.name)
            .collect())
    }

    pub fn api_model(&self, entry: &ModelEntry) -> ApiModel {
        // The install time, as OpenAI gives a model's creation time.
        let created = std::fs::metadata(self.store.path_of(entry))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        ApiModel {
            id: entry.name.clone(),
            object: "model",
            created,
            owned_by: "utter",
        }
    }
}
