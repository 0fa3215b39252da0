//! Replies of an OpenAI-compatible chat-completions server, for the loopback
//! [`Server`](crate::http::Server): a streamed answer as server-sent events,
//! an error body, and the model list of `/v1/models`. The requests a client
//! sent are in [`Server::received`](crate::http::Server::received).
//!
//! ```no_run
//! use std::time::Duration;
//! use utter_test_support::{chat, http::{Reply, Server}};
//!
//! let server = Server::start(|path| match path {
//!     "/v1/chat/completions" => chat::streamed(&["Send the ", "report."], Duration::from_millis(20)),
//!     "/v1/models" => chat::models(&["tiny"]),
//!     _ => Reply::status(404),
//! });
//! ```

use std::time::Duration;

use crate::http::Reply;

/// The model name every chunk carries.
pub const MODEL: &str = "loopback-model";

/// A streamed answer: one `data:` event per piece of text (with `pause` after
/// each), then a chunk with `finish_reason: "stop"` and `data: [DONE]`.
pub fn streamed(pieces: &[&str], pause: Duration) -> Reply {
    Reply::stream(events(pieces), pause).header("Content-Type", "text/event-stream")
}

/// The events of [`streamed`], to send differently (a part dropped, or the
/// stream cut before `[DONE]` by [`Reply::close_halfway`]).
pub fn events(pieces: &[&str]) -> Vec<String> {
    let mut events = vec![event(r#"{"role":"assistant","content":""}"#, "null")];
    for piece in pieces {
        events.push(event(
            &format!(r#"{{"content":"{}"}}"#, escape(piece)),
            "null",
        ));
    }
    events.push(event("{}", r#""stop""#));
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// One chunk event: a choice with this `delta` object and finish reason.
pub fn event(delta: &str, finish_reason: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"{MODEL}\",\
         \"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish_reason}}}]}}\n\n"
    )
}

/// An error status with the API's JSON error body.
pub fn error(status: u16, message: &str) -> Reply {
    let body = format!(
        r#"{{"error":{{"message":"{}","type":"server_error"}}}}"#,
        escape(message)
    );
    Reply::status(status)
        .with_body(body.into_bytes())
        .header("Content-Type", "application/json")
}

/// `GET /v1/models`: these model ids.
pub fn models(ids: &[&str]) -> Reply {
    let data: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"id":"{}","object":"model","owned_by":"test"}}"#,
                escape(id)
            )
        })
        .collect();
    let body = format!(r#"{{"object":"list","data":[{}]}}"#, data.join(","));
    Reply::bytes(body.into_bytes()).header("Content-Type", "application/json")
}

/// A JSON string's contents (the test-support crate has no dependencies).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}
