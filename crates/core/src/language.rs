//! The spoken language as the settings and profiles spell it: a leaf, so
//! that both can name it without importing each other.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The spoken language: detected, or an ISO 639 code (`en`, `de`, `yue`).
/// In the file: `"auto"` or the code; anything else does not load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Language {
    Auto,
    Code(String),
}

impl Language {
    /// What the engine takes: `None` detects.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Auto => None,
            Self::Code(code) => Some(code),
        }
    }
}

/// Neither `auto` nor a language code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not `auto` or a language code")]
pub struct BadLanguage(pub String);

impl std::str::FromStr for Language {
    type Err = BadLanguage;
    fn from_str(s: &str) -> Result<Self, BadLanguage> {
        if s == "auto" {
            return Ok(Self::Auto);
        }
        if (2..=3).contains(&s.len()) && s.chars().all(|c| c.is_ascii_lowercase()) {
            return Ok(Self::Code(s.to_string()));
        }
        Err(BadLanguage(s.to_string()))
    }
}

impl Serialize for Language {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code().unwrap_or("auto"))
    }
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}
