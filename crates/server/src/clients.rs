//! The last requests the server answered, for the desktop app's Settings →
//! Server ("which programs use it"): who (the client's User-Agent), what,
//! when, and the answer's status — refusals included, so a web app that is
//! kept out shows up with its 403.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use serde::Serialize;

/// Requests remembered.
const KEPT: usize = 10;
/// A User-Agent is cut here: enough to tell the program.
const AGENT_CHARS: usize = 80;

/// One answered request (the UI's `ServerClient`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, rename = "ServerClient")]
pub struct ClientSeen {
    /// Unix time, milliseconds.
    pub at_ms: u64,
    /// The client's User-Agent (`OpenAI/Python 1.x`, a browser's), if it sent one.
    pub client: Option<String>,
    /// The web page's origin, for a request from one.
    pub origin: Option<String>,
    pub method: String,
    pub path: String,
    pub status: u16,
}

/// The last [`KEPT`] requests, newest first.
#[derive(Debug, Default)]
pub struct RecentClients(Mutex<VecDeque<ClientSeen>>);

impl RecentClients {
    pub fn list(&self) -> Vec<ClientSeen> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    fn push(&self, seen: ClientSeen) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.push_front(seen);
        kept.truncate(KEPT);
    }
}

pub async fn record(
    State(recent): State<Arc<RecentClients>>,
    request: Request,
    next: Next,
) -> Response {
    // Read before the await: a borrow of the request held across it would
    // make the future not Send (the body is not Sync).
    let (client, origin) = {
        let headers = request.headers();
        let text = |name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let client = text(header::USER_AGENT).map(|a| a.chars().take(AGENT_CHARS).collect());
        (client, text(header::ORIGIN))
    };
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    // The health check is what a client polls while the model loads: noise here.
    if path != "/health" {
        recent.push(ClientSeen {
            at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            client,
            origin,
            method,
            path,
            status: response.status().as_u16(),
        });
    }
    response
}
