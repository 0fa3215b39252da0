//! Errors as the OpenAI API writes them: `{"error": {message, type, param, code}}`
//! with the matching status, so the SDKs raise their usual exceptions.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// One failed request, ready to send.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub kind: &'static str,
    pub param: Option<&'static str>,
    pub code: Option<&'static str>,
    /// Seconds for a `Retry-After` header (a full queue).
    pub retry_after: Option<u32>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    param: Option<&'a str>,
    code: Option<&'a str>,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            kind,
            param: None,
            code: None,
            retry_after: None,
        }
    }

    /// 400: the request itself is wrong; `param` names the field.
    pub fn invalid(param: &'static str, message: impl Into<String>) -> Self {
        Self {
            param: Some(param),
            ..Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
        }
    }

    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub fn model_not_found(requested: &str, installed: &[String]) -> Self {
        Self {
            param: Some("model"),
            code: Some("model_not_found"),
            ..Self::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                format!(
                    "The model `{requested}` is not installed. Installed speech models: {}. \
                     Use one of these, or `whisper-1` for the default model.",
                    list_or_none(installed)
                ),
            )
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "invalid_request_error", message).with_code("not_found")
    }

    /// 403: who sent it may not use the server (a web page not let in).
    pub fn forbidden(message: impl Into<String>, code: &'static str) -> Self {
        Self::new(StatusCode::FORBIDDEN, "invalid_request_error", message).with_code(code)
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "Incorrect API key provided. Send the server's key as `Authorization: Bearer KEY`.",
        )
        .with_code("invalid_api_key")
    }

    /// `/mcp` without an API key asks for the per-user token.
    pub fn mcp_token_missing() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "/mcp needs this user's token: send the contents of the file `utter serve` names at start (~/.local/share/utter/mcp-token) as `Authorization: Bearer TOKEN`.",
        )
        .with_code("invalid_mcp_token")
    }

    pub fn too_large(limit: u64) -> Self {
        Self {
            param: Some("file"),
            code: Some("file_too_large"),
            ..Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request_error",
                format!(
                    "The upload is larger than this server's limit of {} MB. \
                     Send a shorter or more compressed file, or start the server with a higher upload limit.",
                    limit / 1_000_000
                ),
            )
        }
    }

    pub fn busy(retry_after: u32) -> Self {
        Self {
            retry_after: Some(retry_after),
            code: Some("server_busy"),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "Every engine worker is busy and the queue is full. Retry after the time in the \
                 Retry-After header, or start the server with more workers.",
            )
        }
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request_error",
            message,
        )
        .with_code("timeout")
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "server_error", message)
    }
}

pub fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Inner {
                message: &self.message,
                kind: self.kind,
                param: self.param,
                code: self.code,
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
