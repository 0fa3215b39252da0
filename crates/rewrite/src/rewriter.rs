//! The entry points: rewrite a dictation in a mode, carry out a spoken
//! command, try a provider, list its models. Each returns the words that
//! were said when anything goes wrong, with a notice saying what.

use std::time::Duration;

use crate::check::{self, Rules};
use crate::client::{ClientError, Http};
use crate::keys::ApiKey;
use crate::modes::{self, Prompt};
use crate::provider::{KeyUse, ProviderConfig};
use crate::{Notice, Outcome, RewriteConfig};

/// What the Settings page's test button (and `utter doctor`) sends.
pub const TEST_SENTENCE: &str = "um so this is is a quick test of the the rewrite";

/// Holds the HTTP client (and its connections) from one call to the next.
/// Blocking: call it from a plain thread, not from inside an async runtime.
#[derive(Clone)]
pub struct Rewriter {
    http: Http,
}

impl Rewriter {
    pub fn new() -> Result<Self, ClientError> {
        Ok(Self { http: Http::new()? })
    }

    /// `text` (a dictation) rewritten in the mode `mode`, with the user's
    /// vocabulary; or `text` unchanged with a notice.
    pub fn rewrite(
        &self,
        config: &RewriteConfig,
        key: Option<&ApiKey>,
        mode: &str,
        text: &str,
        vocabulary: &[String],
    ) -> Outcome {
        if text.trim().is_empty() {
            return Outcome::kept(text, Notice::NothingSaid);
        }
        if !config.enabled {
            return not_configured(text, "it is turned off");
        }
        let mode = match config.find_mode(mode) {
            Ok(mode) => mode,
            Err(e) => return not_configured(text, &e.to_string()),
        };
        let input = text.trim();
        let rules = Rules {
            input,
            max_chars: check::length_limit(input.chars().count()),
            unwrap: true,
        };
        let prompt = Prompt::dictation(&mode, vocabulary, text);
        self.run(&config.provider, key, &prompt, &rules, text, &mode.id)
    }

    /// A spoken `instruction` carried out on `selection` (the result is to
    /// replace it) or, without one, answered (the result is to be inserted).
    /// When kept, the text is the instruction, and the selection is to be
    /// left as it is.
    pub fn command(
        &self,
        config: &RewriteConfig,
        key: Option<&ApiKey>,
        instruction: &str,
        selection: Option<&str>,
        vocabulary: &[String],
    ) -> Outcome {
        if instruction.trim().is_empty() {
            return Outcome::kept(instruction, Notice::NothingSaid);
        }
        if !config.enabled {
            return not_configured(instruction, "it is turned off");
        }
        let selection = selection.filter(|s| !s.trim().is_empty());
        let input = match selection {
            Some(text) => format!("{} {text}", instruction.trim()),
            None => instruction.trim().to_string(),
        };
        let rules = Rules {
            input: &input,
            max_chars: match selection {
                Some(_) => check::length_limit(input.chars().count()),
                None => check::COMMAND_ANSWER_MAX,
            },
            unwrap: false,
        };
        let prompt = Prompt::command(config.command_prompt(), vocabulary, instruction, selection);
        self.run(
            &config.provider,
            key,
            &prompt,
            &rules,
            instruction,
            "command",
        )
    }

    /// Tries `provider` with the clean-up mode on [`TEST_SENTENCE`], whether
    /// or not rewriting is on yet: the user asked for this one call.
    pub fn test(&self, provider: &ProviderConfig, key: Option<&ApiKey>) -> Outcome {
        let config = RewriteConfig {
            enabled: true,
            provider: provider.clone(),
            ..RewriteConfig::default()
        };
        self.rewrite(&config, key, modes::CLEAN_UP, TEST_SENTENCE, &[])
    }

    /// The models the server offers (`GET {base}/models`), sorted.
    pub fn models(
        &self,
        provider: &ProviderConfig,
        key: Option<&ApiKey>,
        timeout: Duration,
    ) -> Result<Vec<String>, Notice> {
        let key = key_to_send(provider, key)?;
        let url = provider
            .endpoint("models")
            .map_err(|e| Notice::NotConfigured {
                reason: e.to_string(),
            })?;
        self.http.models(url, key, timeout)
    }

    fn run(
        &self,
        provider: &ProviderConfig,
        key: Option<&ApiKey>,
        prompt: &Prompt,
        rules: &Rules,
        said: &str,
        mode: &str,
    ) -> Outcome {
        let result = provider
            .validate()
            .map_err(|e| Notice::NotConfigured {
                reason: e.to_string(),
            })
            .and_then(|()| key_to_send(provider, key))
            .and_then(|key| {
                let url =
                    provider
                        .endpoint("chat/completions")
                        .map_err(|e| Notice::NotConfigured {
                            reason: e.to_string(),
                        })?;
                let body = request_body(provider, prompt, check::token_cap(rules.max_chars));
                self.http
                    .stream_chat(url, key, body, provider.time_budget(), rules)
            })
            .and_then(|answer| {
                match answer.finish.as_deref() {
                    Some("length") => return Err(Notice::Truncated),
                    Some("content_filter") => return Err(Notice::Refusal),
                    _ => {}
                }
                check::accept(&answer.text, rules).map(|text| (text, answer))
            });
        match result {
            Ok((text, answer)) => {
                let first_token = answer.first_token.unwrap_or(answer.total);
                tracing::info!(
                    mode,
                    provider = provider.kind.id(),
                    first_token_ms = first_token.as_millis() as u64,
                    total_ms = answer.total.as_millis() as u64,
                    chars_in = rules.input.chars().count(),
                    chars_out = text.chars().count(),
                    "rewritten"
                );
                Outcome::Rewritten {
                    text,
                    model: answer.model.unwrap_or_else(|| provider.model.clone()),
                    first_token,
                    total: answer.total,
                }
            }
            Err(notice) => {
                tracing::warn!(mode, provider = provider.kind.id(), %notice, "kept the text as said");
                Outcome::kept(said, notice)
            }
        }
    }
}

fn not_configured(said: &str, reason: &str) -> Outcome {
    Outcome::kept(
        said,
        Notice::NotConfigured {
            reason: reason.into(),
        },
    )
}

/// The key that goes with a request: never one to a local server, and no
/// request to a hosted one without it.
fn key_to_send<'a>(
    provider: &ProviderConfig,
    key: Option<&'a ApiKey>,
) -> Result<Option<&'a ApiKey>, Notice> {
    match provider.kind.key_use() {
        KeyUse::Never => Ok(None),
        KeyUse::Optional => Ok(key),
        KeyUse::Required => key.map(Some).ok_or_else(|| Notice::KeyMissing {
            provider: provider.kind.label().into(),
        }),
    }
}

/// The chat request, with a token cap so that the server stops by itself
/// (also when Utter has closed the connection at its deadline and a server
/// does not notice until it next writes).
fn request_body(provider: &ProviderConfig, prompt: &Prompt, max_tokens: usize) -> Vec<u8> {
    let mut body = serde_json::json!({
        "model": provider.model.trim(),
        "stream": true,
        "messages": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ],
    });
    body[provider.kind.token_cap_field()] = max_tokens.into();
    serde_json::to_vec(&body).expect("a JSON value serializes")
}
