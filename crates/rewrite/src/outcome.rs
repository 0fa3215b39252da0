//! What a rewrite gives back: the model's text, or the dictated text kept as
//! it was with a notice that says why in words a user understands. There is
//! no error case: whatever fails, the words that were said come back.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The model's text, checked.
    Rewritten {
        text: String,
        /// As the server named it (else as configured).
        model: String,
        /// From the request to the first piece of text.
        first_token: Duration,
        /// From the request to the end of the answer.
        total: Duration,
    },
    /// What was said, unchanged (for a command: the spoken instruction; the
    /// selection is to be left as it is).
    Kept { text: String, notice: Notice },
}

impl Outcome {
    pub fn kept(text: &str, notice: Notice) -> Self {
        Self::Kept {
            text: text.to_string(),
            notice,
        }
    }

    /// The text to deliver.
    pub fn text(&self) -> &str {
        match self {
            Self::Rewritten { text, .. } | Self::Kept { text, .. } => text,
        }
    }

    /// Why the text was kept, if it was.
    pub fn notice(&self) -> Option<&Notice> {
        match self {
            Self::Rewritten { .. } => None,
            Self::Kept { notice, .. } => Some(notice),
        }
    }
}

/// Why the model's answer was not used. `Display` is a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, thiserror::Error)]
#[serde(
    tag = "kind",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
#[ts(export)]
pub enum Notice {
    #[error("AI rewriting is not set up: {reason}.")]
    NotConfigured { reason: String },
    #[error("No API key for {provider} is saved; add one in Settings → AI.")]
    KeyMissing { provider: String },
    #[error("The API key could not be read: {detail}.")]
    KeychainFailed { detail: String },
    #[error("There was no text to rewrite.")]
    NothingSaid,
    #[error("The model did not finish within {} s.", seconds(*after_ms))]
    TimedOut { after_ms: u64 },
    #[error("Could not reach the server at {url}: {detail}.")]
    Unreachable { url: String, detail: String },
    #[error("{}", server_error(*status, detail.as_deref()))]
    ServerError { status: u16, detail: Option<String> },
    #[error("The server reported an error: {message}.")]
    StreamError { message: String },
    #[error("The connection closed before the answer was complete.")]
    ConnectionClosed,
    #[error("The server's answer could not be read ({detail}); check the server address.")]
    Unreadable { detail: String },
    #[error("The model's answer was empty.")]
    EmptyAnswer,
    #[error("The model's answer ran past the length allowed for this text and was cut off.")]
    Truncated,
    #[error("The model's answer was far longer than what you said ({answer_chars} characters for {input_chars}).")]
    TooLong { answer_chars: u64, input_chars: u64 },
    #[error("The model answered with a refusal instead of the text.")]
    Refusal,
    /// The rewrite stopped without an answer (a fault in Utter, not the server).
    #[error("The rewrite stopped unexpectedly: {detail}.")]
    Failed { detail: String },
}

/// `2`, `1.5`: a budget as a person reads it.
fn seconds(ms: u64) -> String {
    let text = format!("{:.1}", ms as f64 / 1000.0);
    text.trim_end_matches(".0").to_string()
}

fn server_error(status: u16, detail: Option<&str>) -> String {
    let what = match status {
        401 | 403 => format!("The server refused the API key (error {status})"),
        404 => format!("The server does not know this model or address (error {status})"),
        429 => format!("The server is rate-limiting requests (error {status})"),
        300..=399 => format!(
            "The server redirected the request elsewhere (status {status}); set its final address"
        ),
        _ => format!("The server answered with error {status}"),
    };
    match detail {
        Some(detail) => format!("{what}: {detail}."),
        None => format!("{what}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_as_sentences() {
        assert_eq!(
            Notice::TimedOut { after_ms: 2000 }.to_string(),
            "The model did not finish within 2 s."
        );
        assert_eq!(
            Notice::TimedOut { after_ms: 1500 }.to_string(),
            "The model did not finish within 1.5 s."
        );
        assert_eq!(
            Notice::ServerError {
                status: 500,
                detail: Some("model crashed".into())
            }
            .to_string(),
            "The server answered with error 500: model crashed."
        );
        assert_eq!(
            Notice::ServerError {
                status: 401,
                detail: None
            }
            .to_string(),
            "The server refused the API key (error 401)."
        );
    }

    #[test]
    fn notices_serialize_tagged_in_kebab_case_with_camel_case_fields() {
        let json = serde_json::to_value(Notice::TooLong {
            answer_chars: 900,
            input_chars: 20,
        })
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "too-long", "answerChars": 900, "inputChars": 20})
        );
    }

    #[test]
    fn kept_text_is_the_text_that_was_said() {
        let kept = Outcome::kept("as said", Notice::EmptyAnswer);
        assert_eq!(kept.text(), "as said");
        assert_eq!(kept.notice(), Some(&Notice::EmptyAnswer));
    }
}
