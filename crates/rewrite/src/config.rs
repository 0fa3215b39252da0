//! The AI rewrite settings: off unless the user turns it on, the provider,
//! the mode used after dictation, the user's edited and added modes, and
//! command mode's prompt. API keys are not here: they live in the keychain
//! ([`crate::KeyStore`]).

use serde::{Deserialize, Serialize};

use crate::modes::{self, Mode};
use crate::provider::ProviderConfig;

/// A prompt longer than this is refused (it is sent with every dictation).
pub const PROMPT_MAX_CHARS: usize = 4_000;
/// The longest name of a mode.
pub const MODE_NAME_MAX_CHARS: usize = 60;
/// The longest id of a mode (what a command line names).
pub const MODE_ID_MAX_CHARS: usize = 40;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(export)]
pub struct RewriteConfig {
    /// Off by default: nothing is sent anywhere until the user turns it on.
    pub enabled: bool,
    pub provider: ProviderConfig,
    /// The mode applied after each dictation; `off` for none (AI command
    /// mode alone).
    pub mode: String,
    /// The user's modes: one with a built-in's id replaces that mode (an
    /// edited prompt; removing it restores ours), the others are added.
    pub modes: Vec<Mode>,
    /// Replaces command mode's built-in prompt when set.
    pub command_prompt: Option<String>,
}

impl Default for RewriteConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            provider: ProviderConfig::default(),
            mode: modes::CLEAN_UP.into(),
            modes: Vec::new(),
            command_prompt: None,
        }
    }
}

/// A setting that cannot be used, said so that the user can fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("no server address is set")]
    NoBaseUrl,
    #[error("the server address `{url}` is not usable: {why}")]
    BadBaseUrl { url: String, why: String },
    #[error("no model is chosen")]
    NoModel,
    #[error("the time budget must be between 0.2 and 60 seconds (it is {0} ms)")]
    BadBudget(u32),
    #[error("there is no rewrite mode named `{0}`")]
    UnknownMode(String),
    #[error("the mode id `{0}` must be lower-case letters, digits and `-`")]
    BadModeId(String),
    #[error("`off` is not a mode's id: a profile uses it to turn rewriting off")]
    ReservedModeId,
    #[error("the mode `{0}` appears twice")]
    DuplicateMode(String),
    #[error("the mode `{0}` needs a name of at most 60 characters")]
    BadModeName(String),
    #[error("the prompt of `{0}` must be between 1 and 4000 characters")]
    BadPrompt(String),
}

impl RewriteConfig {
    /// Every mode as used: the built-ins (or the user's edit of each), then
    /// the user's own, in their order.
    pub fn all_modes(&self) -> Vec<Mode> {
        let mut all: Vec<Mode> = modes::built_in_modes()
            .into_iter()
            .map(|built_in| {
                self.modes
                    .iter()
                    .find(|m| m.id == built_in.id)
                    .cloned()
                    .unwrap_or(built_in)
            })
            .collect();
        all.extend(
            self.modes
                .iter()
                .filter(|m| !modes::is_built_in(&m.id))
                .cloned(),
        );
        all
    }

    /// The mode of that id, as used.
    pub fn find_mode(&self, id: &str) -> Result<Mode, ConfigError> {
        self.all_modes()
            .into_iter()
            .find(|m| m.id == id)
            .ok_or_else(|| ConfigError::UnknownMode(id.into()))
    }

    /// Command mode's prompt: the user's, or the built-in one.
    pub fn command_prompt(&self) -> &str {
        match self.command_prompt.as_deref() {
            Some(prompt) if !prompt.trim().is_empty() => prompt,
            _ => modes::COMMAND_PROMPT,
        }
    }

    /// Checks the modes always, and the provider once rewriting is on (a
    /// half-set-up provider may be saved while it is off).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut seen = std::collections::HashSet::new();
        for mode in &self.modes {
            if !valid_mode_id(&mode.id) {
                return Err(ConfigError::BadModeId(mode.id.clone()));
            }
            if mode.id == modes::OFF {
                return Err(ConfigError::ReservedModeId);
            }
            if !seen.insert(mode.id.as_str()) {
                return Err(ConfigError::DuplicateMode(mode.id.clone()));
            }
            let name = mode.name.trim().chars().count();
            if name == 0 || name > MODE_NAME_MAX_CHARS {
                return Err(ConfigError::BadModeName(mode.id.clone()));
            }
            check_prompt(&mode.id, &mode.prompt)?;
        }
        if let Some(prompt) = &self.command_prompt {
            check_prompt("command", prompt)?;
        }
        if self.mode != modes::OFF {
            self.find_mode(&self.mode)?;
        }
        if self.enabled {
            self.provider.validate()?;
        }
        Ok(())
    }
}

fn check_prompt(id: &str, prompt: &str) -> Result<(), ConfigError> {
    let len = prompt.trim().chars().count();
    if len == 0 || len > PROMPT_MAX_CHARS {
        return Err(ConfigError::BadPrompt(id.into()));
    }
    Ok(())
}

/// `clean-up`, `my-mode-2`: what a command line can name.
pub(crate) fn valid_mode_id(id: &str) -> bool {
    (1..=MODE_ID_MAX_CHARS).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !id.starts_with('-')
        && !id.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ProviderKind;

    fn mode(id: &str, prompt: &str) -> Mode {
        Mode {
            id: id.into(),
            name: id.into(),
            prompt: prompt.into(),
        }
    }

    #[test]
    fn off_by_default_and_valid_as_it_is() {
        let config = RewriteConfig::default();
        assert!(!config.enabled);
        assert_eq!(config.mode, "clean-up");
        assert_eq!(config.validate(), Ok(()));
        // On, it needs a model first.
        let on = RewriteConfig {
            enabled: true,
            ..Default::default()
        };
        assert_eq!(on.validate(), Err(ConfigError::NoModel));
    }

    #[test]
    fn the_settings_file_spells_fields_in_camel_case_and_fills_gaps_with_defaults() {
        let config: RewriteConfig = serde_json::from_str(
            r#"{"enabled":true,"provider":{"kind":"lm-studio","model":"qwen"},"commandPrompt":"Do it."}"#,
        )
        .unwrap();
        assert_eq!(config.provider.kind, ProviderKind::LmStudio);
        assert_eq!(config.provider.time_budget_ms, 2000);
        assert_eq!(config.mode, "clean-up");
        assert_eq!(config.command_prompt(), "Do it.");
        let json = serde_json::to_value(&config).unwrap();
        assert!(
            json.get("commandPrompt").is_some() && json["provider"].get("timeBudgetMs").is_some()
        );
    }

    #[test]
    fn a_user_mode_edits_a_built_in_or_adds_one() {
        let config = RewriteConfig {
            modes: vec![
                mode("formal", "Very formal."),
                mode("pirate", "Talk like a pirate."),
            ],
            mode: "pirate".into(),
            ..Default::default()
        };
        assert_eq!(config.validate(), Ok(()));
        let all = config.all_modes();
        assert_eq!(all.len(), 6);
        assert_eq!(all[1].prompt, "Very formal.");
        assert_eq!(all[5].id, "pirate");
        assert_eq!(config.find_mode("email").unwrap().name, "Email");
        assert_eq!(
            config.find_mode("nope"),
            Err(ConfigError::UnknownMode("nope".into()))
        );
    }

    #[test]
    fn bad_modes_are_refused_by_name() {
        let check = |modes: Vec<Mode>| {
            RewriteConfig {
                modes,
                ..Default::default()
            }
            .validate()
        };
        assert_eq!(
            check(vec![mode("My Mode", "x")]),
            Err(ConfigError::BadModeId("My Mode".into()))
        );
        assert_eq!(
            check(vec![mode("a", "x"), mode("a", "y")]),
            Err(ConfigError::DuplicateMode("a".into()))
        );
        assert_eq!(
            check(vec![mode("a", "  ")]),
            Err(ConfigError::BadPrompt("a".into()))
        );
        let unknown = RewriteConfig {
            mode: "gone".into(),
            ..Default::default()
        };
        assert_eq!(
            unknown.validate(),
            Err(ConfigError::UnknownMode("gone".into()))
        );
    }
}
