//! The chat-completions answer: server-sent events, one JSON chunk per
//! `data:` line (the servers Utter targets never split one over several
//! lines), ending with `data: [DONE]`; or, from a server that ignored
//! `stream: true`, one JSON completion.

use serde::Deserialize;

/// What one line (or a whole non-streamed body) says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// Text to append.
    pub text: String,
    pub model: Option<String>,
    /// `stop`, `length`, `content_filter`...: the answer is complete.
    pub finish: Option<String>,
    /// An error the server sent inside the stream.
    pub error: Option<String>,
    /// `[DONE]`.
    pub done: bool,
}

/// A line that is not an event we know how to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreadable(pub String);

/// One line of the stream: `None` for lines without data (blank lines,
/// comments, `event:`/`id:` fields).
pub fn parse_line(line: &str) -> Result<Option<Chunk>, Unreadable> {
    let line = line.trim_end_matches(['\r', '\n']);
    let Some(data) = line.strip_prefix("data:") else {
        return Ok(None);
    };
    let data = data.strip_prefix(' ').unwrap_or(data).trim();
    if data == "[DONE]" {
        return Ok(Some(Chunk {
            done: true,
            ..Chunk::default()
        }));
    }
    parse_json(data).map(Some)
}

/// A chunk or a whole completion (`choices[].delta` or `choices[].message`).
pub fn parse_json(data: &str) -> Result<Chunk, Unreadable> {
    let raw: Raw = serde_json::from_str(data)
        .map_err(|e| Unreadable(format!("not a chat-completions answer: {e}")))?;
    let mut chunk = Chunk {
        model: raw.model.filter(|m| !m.is_empty()),
        error: raw.error.map(error_message),
        ..Chunk::default()
    };
    for choice in raw.choices {
        if let Some(content) = choice.delta.or(choice.message).and_then(|m| m.content) {
            chunk.text.push_str(&content);
        }
        if choice.finish_reason.is_some() {
            chunk.finish = choice.finish_reason;
        }
    }
    Ok(chunk)
}

/// The `error` member: `{"message": ...}` or a plain string.
pub fn error_message(error: serde_json::Value) -> String {
    match error {
        serde_json::Value::String(message) => message,
        serde_json::Value::Object(fields) => match fields.get("message") {
            Some(serde_json::Value::String(message)) => message.clone(),
            _ => serde_json::Value::Object(fields).to_string(),
        },
        other => other.to_string(),
    }
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<RawChoice>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawChoice {
    #[serde(default)]
    delta: Option<RawMessage>,
    #[serde(default)]
    message: Option<RawMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    content: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_give_text_model_and_end() {
        let chunk = parse_line(
            "data: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"Hi \"},\"finish_reason\":null}]}\r\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (chunk.text.as_str(), chunk.model.as_deref()),
            ("Hi ", Some("m"))
        );
        assert_eq!(chunk.finish, None);
        let last = parse_line(r#"data:{"choices":[{"delta":{},"finish_reason":"stop"}]}"#)
            .unwrap()
            .unwrap();
        assert_eq!(last.finish.as_deref(), Some("stop"));
        assert!(parse_line("data: [DONE]").unwrap().unwrap().done);
    }

    #[test]
    fn other_lines_are_skipped_and_garbage_is_unreadable() {
        for line in ["", ": keep-alive", "event: message", "id: 3", "retry: 10"] {
            assert_eq!(parse_line(line), Ok(None), "{line:?}");
        }
        assert!(parse_line("data: <html>").is_err());
    }

    #[test]
    fn a_whole_completion_and_an_error_are_read_too() {
        let whole = parse_json(
            r#"{"model":"m","choices":[{"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert_eq!(
            (whole.text.as_str(), whole.finish.as_deref()),
            ("Done.", Some("stop"))
        );
        let error = parse_line(r#"data: {"error":{"message":"overloaded","code":502}}"#)
            .unwrap()
            .unwrap();
        assert_eq!(error.error.as_deref(), Some("overloaded"));
        let plain = parse_json(r#"{"error":"bad model"}"#).unwrap();
        assert_eq!(plain.error.as_deref(), Some("bad model"));
    }
}
