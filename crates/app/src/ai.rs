//! Settings → AI: the providers to choose from, the models a server offers,
//! a test call with its round-trip time, and the API keys in the system
//! keychain. Keys are write-only from the UI: it can save, replace or
//! delete one and ask whether one is saved, never read it back.

use std::time::Duration;

use serde::Serialize;
use utter_rewrite::{
    modes, providers, ApiKey, KeyStore, Mode, Notice, Outcome, ProviderConfig, ProviderInfo,
    ProviderKind, Rewriter,
};

use super::{service_host, App, AppError};
use utter_core::dictation::rewrite_step::test_provider;

/// How long listing a server's models may take.
const MODELS_TIMEOUT: Duration = Duration::from_secs(5);

/// The test button's answer.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(
    tag = "result",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
#[ts(export)]
pub enum RewriteTest {
    /// The model rewrote the test sentence.
    Answered {
        text: String,
        model: String,
        first_token_ms: u64,
        total_ms: u64,
    },
    /// It did not; a dictation would be delivered as dictated, for this reason.
    Failed { notice: Notice },
}

impl App {
    /// Every provider, local ones first.
    pub fn rewrite_providers(&self) -> Vec<ProviderInfo> {
        providers()
    }

    /// The built-in modes with their prompts (the user's edits are in the settings).
    pub fn rewrite_built_in_modes(&self) -> Vec<Mode> {
        modes::built_in_modes()
    }

    /// Where dictated text would go with `provider`, in words (shown before
    /// the user turns rewriting on).
    pub fn rewrite_destination(&self, provider: &ProviderConfig) -> String {
        provider.destination()
    }

    /// One call with the test sentence, whether or not rewriting is on.
    pub fn rewrite_test(&self, provider: &ProviderConfig) -> Result<RewriteTest, AppError> {
        Ok(match test_provider(provider) {
            Outcome::Rewritten {
                text,
                model,
                first_token,
                total,
            } => RewriteTest::Answered {
                text,
                model,
                first_token_ms: first_token.as_millis() as u64,
                total_ms: total.as_millis() as u64,
            },
            Outcome::Kept { notice, .. } => RewriteTest::Failed { notice },
        })
    }

    /// The models the server lists (`GET /models`), sorted.
    pub fn rewrite_models(&self, provider: &ProviderConfig) -> Result<Vec<String>, AppError> {
        let key = KeyStore::default()
            .key_for(provider)
            .map_err(rewrite_error)?;
        let rewriter = Rewriter::new().map_err(rewrite_error)?;
        rewriter
            .models(provider, key.as_ref(), MODELS_TIMEOUT)
            .map_err(rewrite_error)
    }

    /// Whether a key for `kind` is in the keychain.
    pub fn api_key_saved(&self, kind: ProviderKind) -> Result<bool, AppError> {
        KeyStore::default()
            .get(kind)
            .map(|key| key.is_some())
            .map_err(rewrite_error)
    }

    /// Saves (or replaces) the key for `kind`; dictation picks it up at once.
    pub fn save_api_key(&self, kind: ProviderKind, key: &str) -> Result<(), AppError> {
        let key = ApiKey::new(key).map_err(rewrite_error)?;
        KeyStore::default().set(kind, &key).map_err(rewrite_error)?;
        service_host::restart(&self.shared);
        Ok(())
    }

    /// Removes the key for `kind`; `false` when there was none.
    pub fn delete_api_key(&self, kind: ProviderKind) -> Result<bool, AppError> {
        let deleted = KeyStore::default().delete(kind).map_err(rewrite_error)?;
        service_host::restart(&self.shared);
        Ok(deleted)
    }
}

/// A keychain, key or HTTP-client error, as the UI shows it.
fn rewrite_error(e: impl std::fmt::Display) -> AppError {
    AppError::Rewrite(e.to_string())
}
