//! Which chat-completions server gets the text: the kinds Utter knows (local
//! servers first, then hosted ones that take the user's key), their default
//! addresses, and a plain sentence saying where the text will go.

use std::time::Duration;

use reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// The default time budget: a dictation waits at most this long for the model.
pub const DEFAULT_TIME_BUDGET_MS: u32 = 2_000;
/// The budget's bounds (a setting outside them does not load).
pub const TIME_BUDGET_MS_RANGE: std::ops::RangeInclusive<u32> = 200..=60_000;

/// An OpenAI-compatible chat-completions server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
#[ts(export)]
pub enum ProviderKind {
    Ollama,
    LmStudio,
    LlamaCpp,
    Vllm,
    #[serde(rename = "openai")]
    OpenAi,
    #[serde(rename = "openrouter")]
    OpenRouter,
    Groq,
    Anthropic,
    /// Any other endpoint at the user's URL; a key is sent if one is saved.
    Custom,
}

/// Whether requests to a provider carry an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
#[ts(export)]
pub enum KeyUse {
    /// A local server: no key is ever read or sent.
    Never,
    /// A hosted service: nothing is sent without one.
    Required,
    /// A custom URL: the key is sent when one is saved.
    Optional,
}

impl ProviderKind {
    pub const ALL: [Self; 9] = [
        Self::Ollama,
        Self::LmStudio,
        Self::LlamaCpp,
        Self::Vllm,
        Self::OpenAi,
        Self::OpenRouter,
        Self::Groq,
        Self::Anthropic,
        Self::Custom,
    ];

    /// The name as the settings file spells it (`lm-studio`), also the
    /// keychain entry's account.
    pub fn id(self) -> &'static str {
        match self {
            Self::Ollama => "ollama",
            Self::LmStudio => "lm-studio",
            Self::LlamaCpp => "llama-cpp",
            Self::Vllm => "vllm",
            Self::OpenAi => "openai",
            Self::OpenRouter => "openrouter",
            Self::Groq => "groq",
            Self::Anthropic => "anthropic",
            Self::Custom => "custom",
        }
    }

    /// The name a user knows.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama",
            Self::LmStudio => "LM Studio",
            Self::LlamaCpp => "llama.cpp server",
            Self::Vllm => "vLLM",
            Self::OpenAi => "OpenAI",
            Self::OpenRouter => "OpenRouter",
            Self::Groq => "Groq",
            Self::Anthropic => "Anthropic",
            Self::Custom => "Custom server",
        }
    }

    /// Where the server listens unless the user says otherwise (the part
    /// before `/chat/completions`); empty for [`ProviderKind::Custom`].
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Ollama => "http://localhost:11434/v1",
            Self::LmStudio => "http://localhost:1234/v1",
            Self::LlamaCpp => "http://localhost:8080/v1",
            Self::Vllm => "http://localhost:8000/v1",
            Self::OpenAi => "https://api.openai.com/v1",
            Self::OpenRouter => "https://openrouter.ai/api/v1",
            Self::Groq => "https://api.groq.com/openai/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
            Self::Custom => "",
        }
    }

    pub fn key_use(self) -> KeyUse {
        match self {
            Self::Ollama | Self::LmStudio | Self::LlamaCpp | Self::Vllm => KeyUse::Never,
            Self::OpenAi | Self::OpenRouter | Self::Groq | Self::Anthropic => KeyUse::Required,
            Self::Custom => KeyUse::Optional,
        }
    }

    /// A server the user runs themselves (by default on this computer).
    pub fn is_local(self) -> bool {
        self.key_use() == KeyUse::Never
    }

    /// The request field that caps the answer's tokens. OpenAI refuses
    /// `max_tokens` for its reasoning models ("use max_completion_tokens
    /// instead"), and Groq documents it as deprecated; the local servers,
    /// OpenRouter and Anthropic's compatibility layer read `max_tokens`, as
    /// does most of what a custom URL can point at.
    pub fn token_cap_field(self) -> &'static str {
        match self {
            Self::OpenAi | Self::Groq => "max_completion_tokens",
            _ => "max_tokens",
        }
    }
}

/// One provider as the Settings page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ProviderInfo {
    pub kind: ProviderKind,
    pub label: String,
    pub default_base_url: String,
    pub local: bool,
    pub key_use: KeyUse,
}

/// Every provider, local ones first, for the Settings page.
pub fn providers() -> Vec<ProviderInfo> {
    ProviderKind::ALL
        .iter()
        .map(|&kind| ProviderInfo {
            kind,
            label: kind.label().into(),
            default_base_url: kind.default_base_url().into(),
            local: kind.is_local(),
            key_use: kind.key_use(),
        })
        .collect()
}

/// The server, the model and how long a dictation may wait for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(export)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// `None`: the kind's default address.
    pub base_url: Option<String>,
    /// The model name the server knows (`llama3.2:3b`, `gpt-4o-mini`).
    pub model: String,
    /// The whole call (connect, answer, last token) must fit in this.
    pub time_budget_ms: u32,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            kind: ProviderKind::Ollama,
            base_url: None,
            model: String::new(),
            time_budget_ms: DEFAULT_TIME_BUDGET_MS,
        }
    }
}

impl ProviderConfig {
    /// The address in use, without a trailing slash: the user's, or the
    /// kind's default.
    pub fn effective_base_url(&self) -> String {
        let url = match self.base_url.as_deref().map(str::trim) {
            Some(url) if !url.is_empty() => url,
            _ => self.kind.default_base_url(),
        };
        url.trim_end_matches('/').to_string()
    }

    /// The address, checked: `http` or `https` with a host.
    pub fn base_url(&self) -> Result<Url, ConfigError> {
        let text = self.effective_base_url();
        if text.is_empty() {
            return Err(ConfigError::NoBaseUrl);
        }
        let bad = |why: &str| ConfigError::BadBaseUrl {
            url: text.clone(),
            why: why.into(),
        };
        let url = Url::parse(&text).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("it must start with http:// or https://"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad("it has no host name"));
        }
        // Credentials in the URL would travel outside the keychain.
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("it must not contain a user name or password"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("it must not contain `?` or `#`"));
        }
        Ok(url)
    }

    /// `{base}/{path}`, e.g. `chat/completions`.
    pub fn endpoint(&self, path: &str) -> Result<Url, ConfigError> {
        let base = self.base_url()?;
        Url::parse(&format!("{}/{path}", base.as_str().trim_end_matches('/'))).map_err(|e| {
            ConfigError::BadBaseUrl {
                url: base.to_string(),
                why: e.to_string(),
            }
        })
    }

    pub fn time_budget(&self) -> Duration {
        Duration::from_millis(self.time_budget_ms.into())
    }

    /// Checks what a call needs: a valid address, a model, a budget in range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.base_url()?;
        if self.model.trim().is_empty() {
            return Err(ConfigError::NoModel);
        }
        if !TIME_BUDGET_MS_RANGE.contains(&self.time_budget_ms) {
            return Err(ConfigError::BadBudget(self.time_budget_ms));
        }
        Ok(())
    }

    /// Where the text goes, in words, for the notice shown when the user
    /// first turns rewriting on.
    pub fn destination(&self) -> String {
        let url = self.effective_base_url();
        let parsed = self.base_url().ok();
        let on_this_computer = parsed.as_ref().is_some_and(is_loopback);
        let unencrypted = parsed.as_ref().is_some_and(|u| u.scheme() == "http");
        let label = self.kind.label();
        let mut words = match (self.kind.key_use(), on_this_computer) {
            (_, true) => format!(
                "What you dictate will be sent to {label} at {url}, a server on this computer; it does not leave this computer."
            ),
            (KeyUse::Never, false) => format!(
                "What you dictate will be sent to {label} at {url}, a server on another computer."
            ),
            (KeyUse::Required, false) => format!(
                "What you dictate will be sent over the internet to {label} ({url}) with your API key, and handled under {label}'s terms and privacy policy."
            ),
            (KeyUse::Optional, false) => format!(
                "What you dictate will be sent to the server at {url}, with your API key if you saved one."
            ),
        };
        if unencrypted && !on_this_computer {
            words.push_str(
                " The connection is not encrypted (http), so others on the network could read it.",
            );
        }
        words
    }
}

/// `localhost`, 127.0.0.0/8 or `::1`.
fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let ip = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || ip
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named_in_kebab_case_and_match_their_ids() {
        for kind in ProviderKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.id()));
            assert_eq!(serde_json::from_str::<ProviderKind>(&json).unwrap(), kind);
        }
        assert_eq!(ProviderKind::LmStudio.id(), "lm-studio");
    }

    #[test]
    fn defaults_are_a_local_server_with_a_two_second_budget() {
        let config = ProviderConfig::default();
        assert!(config.kind.is_local());
        assert_eq!(config.time_budget(), Duration::from_secs(2));
        assert_eq!(config.effective_base_url(), "http://localhost:11434/v1");
        assert_eq!(config.validate(), Err(ConfigError::NoModel));
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["timeBudgetMs"], 2000);
        assert_eq!(json["baseUrl"], serde_json::Value::Null);
    }

    #[test]
    fn the_endpoint_is_under_the_base_url_whatever_its_trailing_slash() {
        let mut config = ProviderConfig {
            kind: ProviderKind::Custom,
            base_url: Some("https://llm.example.org/api/v1/".into()),
            model: "m".into(),
            ..Default::default()
        };
        assert_eq!(
            config.endpoint("chat/completions").unwrap().as_str(),
            "https://llm.example.org/api/v1/chat/completions"
        );
        config.base_url = None;
        assert_eq!(config.validate(), Err(ConfigError::NoBaseUrl));
        for bad in [
            "ftp://x/v1",
            "localhost:11434",
            "https://user:pw@x/v1",
            "http://x/v1?key=1",
        ] {
            config.base_url = Some(bad.into());
            assert!(
                matches!(config.validate(), Err(ConfigError::BadBaseUrl { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_destination_says_plainly_whether_text_leaves_the_computer() {
        let local = ProviderConfig::default().destination();
        assert!(
            local.contains("Ollama at http://localhost:11434/v1"),
            "{local}"
        );
        assert!(local.contains("does not leave this computer"), "{local}");
        let hosted = ProviderConfig {
            kind: ProviderKind::OpenAi,
            ..Default::default()
        }
        .destination();
        assert!(hosted.contains("over the internet to OpenAI"), "{hosted}");
        assert!(hosted.contains("API key"), "{hosted}");
        let lan = ProviderConfig {
            kind: ProviderKind::LmStudio,
            base_url: Some("http://192.168.1.20:1234/v1".into()),
            ..Default::default()
        }
        .destination();
        assert!(lan.contains("another computer"), "{lan}");
        assert!(lan.contains("not encrypted"), "{lan}");
    }
}
