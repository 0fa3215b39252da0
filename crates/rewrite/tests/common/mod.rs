//! A chat-completions server on loopback and settings that point at it.

#![allow(dead_code)] // each test binary uses its own part

use std::time::Duration;

use utter_rewrite::{ProviderConfig, ProviderKind, RewriteConfig};
use utter_test_support::chat;
use utter_test_support::http::{Reply, Server};

/// What the user said, as the rule-based text steps left it.
pub const SAID: &str = "um so send the the report to ana by friday";
pub const CHAT: &str = "/v1/chat/completions";

/// Answers chat requests with `reply()` and lists two models.
pub fn server(reply: impl Fn() -> Reply + Send + Sync + 'static) -> Server {
    Server::start(move |path| match path {
        CHAT => reply(),
        "/v1/models" => chat::models(&["tiny-b", "tiny-a"]),
        _ => Reply::status(404),
    })
}

/// Rewriting on, through `kind` at `server`'s `/v1`, with this budget.
pub fn config(server: &Server, kind: ProviderKind, budget_ms: u32) -> RewriteConfig {
    RewriteConfig {
        enabled: true,
        provider: ProviderConfig {
            kind,
            base_url: Some(server.url("/v1")),
            model: "tiny".into(),
            time_budget_ms: budget_ms,
        },
        ..RewriteConfig::default()
    }
}

/// The answer streamed in a few pieces, quickly.
pub fn good_answer() -> Reply {
    chat::streamed(
        &["Send the ", "report to ", "Ana by ", "Friday."],
        Duration::from_millis(10),
    )
}

/// The JSON body of the `n`th request.
pub fn body(server: &Server, n: usize) -> serde_json::Value {
    serde_json::from_slice(&server.received()[n].body).expect("a JSON request body")
}
