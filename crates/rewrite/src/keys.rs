//! API keys: held in a type that never prints itself, and stored in the OS
//! keychain (Keychain on macOS, Credential Manager on Windows, the Secret
//! Service on Linux), one entry per provider. Never in the settings file:
//! [`ApiKey`] has no serde, so it cannot end up there by accident.

use std::fmt;

use crate::provider::{KeyUse, ProviderConfig, ProviderKind};

/// The keychain's service name for Utter's entries (the account is the
/// provider's id, `openai`).
pub const KEYCHAIN_SERVICE: &str = "Utter AI provider key";

/// A provider's API key. `Debug` prints no part of it; [`ApiKey::expose`]
/// is the one way to read it (for the `Authorization` header).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key as pasted, without surrounding whitespace.
    pub fn new(key: &str) -> Result<Self, KeyError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(KeyError::Empty);
        }
        // A space or line break would not survive (or would split) the header.
        if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(KeyError::Invalid);
        }
        Ok(Self(key.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("the API key is empty")]
    Empty,
    #[error("the API key contains spaces or line breaks; paste the key alone")]
    Invalid,
    #[error("{kind} does not use an API key")]
    NotUsed { kind: &'static str },
    #[error("the system keychain could not be used: {detail}")]
    Keychain { detail: String },
}

/// The keychain entries of Utter's provider keys.
#[derive(Debug, Clone)]
pub struct KeyStore {
    service: String,
}

impl Default for KeyStore {
    fn default() -> Self {
        Self::new(KEYCHAIN_SERVICE)
    }
}

impl KeyStore {
    /// Entries under another service name (tests keep theirs apart).
    pub fn new(service: &str) -> Self {
        Self {
            service: service.into(),
        }
    }

    pub fn set(&self, kind: ProviderKind, key: &ApiKey) -> Result<(), KeyError> {
        self.entry(kind)?
            .set_password(key.expose())
            .map_err(keychain_error)?;
        tracing::info!(provider = kind.id(), "API key saved in the keychain");
        Ok(())
    }

    /// The saved key, `None` when there is none.
    pub fn get(&self, kind: ProviderKind) -> Result<Option<ApiKey>, KeyError> {
        match self.entry(kind)?.get_password() {
            Ok(key) => ApiKey::new(&key).map(Some),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(e)),
        }
    }

    /// Removes the saved key; `false` when there was none.
    pub fn delete(&self, kind: ProviderKind) -> Result<bool, KeyError> {
        match self.entry(kind)?.delete_credential() {
            Ok(()) => {
                tracing::info!(provider = kind.id(), "API key removed from the keychain");
                Ok(true)
            }
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(keychain_error(e)),
        }
    }

    /// The key a call to this provider sends: none for a local server
    /// (without touching the keychain), the saved one otherwise.
    pub fn key_for(&self, provider: &ProviderConfig) -> Result<Option<ApiKey>, KeyError> {
        match provider.kind.key_use() {
            KeyUse::Never => Ok(None),
            KeyUse::Required | KeyUse::Optional => self.get(provider.kind),
        }
    }

    fn entry(&self, kind: ProviderKind) -> Result<keyring::Entry, KeyError> {
        if kind.key_use() == KeyUse::Never {
            return Err(KeyError::NotUsed { kind: kind.label() });
        }
        keyring::Entry::new(&self.service, kind.id()).map_err(keychain_error)
    }
}

/// The keychain's error in words, never with the secret: `BadEncoding`
/// carries the stored bytes, so it is described, not printed.
fn keychain_error(e: keyring::Error) -> KeyError {
    let detail = match e {
        keyring::Error::BadEncoding(_) => "the saved key is not valid text".to_string(),
        keyring::Error::PlatformFailure(e) | keyring::Error::NoStorageAccess(e) => {
            let hint = if cfg!(target_os = "linux") {
                " (is a Secret Service such as GNOME Keyring or KWallet running and unlocked?)"
            } else {
                ""
            };
            format!("{e}{hint}")
        }
        other => other.to_string(),
    };
    KeyError::Keychain { detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_never_prints_itself() {
        let key = ApiKey::new("  sk-secret-123\n").unwrap();
        assert_eq!(key.expose(), "sk-secret-123");
        let shown = format!("{key:?} {:?}", Some(&key));
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(ApiKey::new(" "), Err(KeyError::Empty));
        assert_eq!(ApiKey::new("sk one"), Err(KeyError::Invalid));
    }

    #[test]
    fn local_servers_have_no_key_and_never_touch_the_keychain() {
        let store = KeyStore::new("utter-test-unused");
        // No Secret Service is needed for this: the keychain is not asked.
        assert_eq!(store.key_for(&ProviderConfig::default()), Ok(None));
        assert!(matches!(
            store.get(ProviderKind::Ollama),
            Err(KeyError::NotUsed { kind: "Ollama" })
        ));
    }
}
