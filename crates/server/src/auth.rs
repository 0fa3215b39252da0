//! The API key: with one configured, every request but `/health` must send
//! it as `Authorization: Bearer KEY`, compared in constant time. Without
//! one (loopback only) any key is accepted, since the SDKs refuse to send
//! an empty one.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::routes::AppState;

pub async fn require_key(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(key) = &state.api_key else {
        return next.run(request).await;
    };
    if request.uri().path() == "/health" {
        return next.run(request).await;
    }
    let sent = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if key_matches(key, sent) {
        next.run(request).await
    } else {
        ApiError::unauthorized().into_response()
    }
}

/// Constant time over the key's bytes (a length mismatch fails at once,
/// which reveals only the length).
pub(crate) fn key_matches(key: &str, sent: &str) -> bool {
    bool::from(key.as_bytes().ct_eq(sent.as_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_compare_whole() {
        assert!(super::key_matches("secret-key", "secret-key"));
        assert!(!super::key_matches("secret-key", "secret-kez"));
        assert!(!super::key_matches("secret-key", "secret"));
        assert!(!super::key_matches("secret-key", ""));
    }
}
