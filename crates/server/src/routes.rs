//! The OpenAI audio API's routes: transcriptions, translations, models,
//! and a health check.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use utter_core::transcribe::FileOptions;

use crate::browsers::{self, BrowserPolicy};
use crate::error::{list_or_none, ApiError};
use crate::format::{self, ResponseFormat, Task};
use crate::jobs::{Job, Jobs};
use crate::models::Catalog;
use crate::upload::{self, Limits, Upload};
use crate::{auth, languages, stream};

pub struct AppState {
    pub catalog: Catalog,
    pub jobs: Arc<Jobs>,
    pub limits: Limits,
    /// How much audio one request may hold.
    pub audio_limits: utter_core::audio::AudioLimits,
    pub api_key: Option<String>,
    /// Asked of `/mcp` callers when there is no API key (see `access`).
    pub mcp_token: Option<String>,
    /// Where MCP's `transcribe_file` may read over HTTP.
    pub mcp_folders: crate::access::AllowedFolders,
    /// The default model has loaded (until then `/health` answers 503).
    pub ready: AtomicBool,
    /// MCP over HTTP (`/mcp`): one session for all its clients.
    pub mcp: Arc<std::sync::Mutex<crate::mcp::Session>>,
}

pub fn router(
    state: Arc<AppState>,
    browsers: BrowserPolicy,
    recent: Arc<crate::clients::RecentClients>,
) -> Router {
    // The multipart reader's own limit, a little above the file's, so the
    // file's limit is the one that answers (with its clearer message).
    let body_limit = (state.limits.max_bytes as usize).saturating_add(1 << 20);
    Router::new()
        .route("/v1/audio/transcriptions", post(transcriptions))
        .route("/v1/audio/translations", post(translations))
        .route("/v1/models", get(list_models))
        .route("/v1/models/{id}", get(get_model))
        .route("/health", get(health))
        // Its body is read in the handler, within its own small limit.
        .route("/mcp", post(mcp))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_key,
        ))
        // Outside the key check: a listed page's preflight carries no key.
        .layer(browsers.cors())
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(browsers),
            browsers::guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            recent,
            crate::clients::record,
        ))
        .with_state(state)
}

/// The largest `/mcp` request body: a JSON-RPC message naming a file.
const MCP_MAX_BODY_BYTES: usize = 256 * 1024;

/// MCP's `transcribe_file` through the job queue every request shares: a
/// full queue is the tool's error (retry later), a warm engine is reused.
/// Over HTTP the file must lie under the folders the user named, and is
/// opened (checked) here; the job reads that open file.
async fn mcp_transcribe(
    state: &AppState,
    id: serde_json::Value,
    call: crate::mcp::FileCall,
) -> serde_json::Value {
    let opened = match crate::mcp::open_for_http(&state.mcp_folders, &call.path) {
        Ok(file) => file,
        Err(refusal) => return crate::mcp::tool_error_reply(id, &refusal),
    };
    let model = state.catalog.named_or_default(call.model.as_deref());
    let result = async {
        let model = model?;
        let admission = state.jobs.admit()?;
        let job = Job {
            model_name: model.name,
            model_path: model.path,
            audio: crate::access::path_of_open(&opened, &call.path),
            options: FileOptions {
                language: call.language,
                limits: state.audio_limits,
                ..FileOptions::default()
            },
            on_segment: None,
        };
        state.jobs.run(admission, job).await
    }
    .await;
    drop(opened);
    crate::mcp::file_call_reply(id, call.format, result)
}

/// `/mcp` without an API key: the caller must show the per-user token
/// (loopback is any local account, not only this user).
fn mcp_token_ok(state: &AppState, headers: &HeaderMap) -> bool {
    if state.api_key.is_some() {
        return true; // checked by `auth::require_key`
    }
    let Some(token) = &state.mcp_token else {
        return false;
    };
    let sent = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    crate::auth::key_matches(token, sent)
}

/// MCP's streamable-HTTP transport, answered with plain JSON (see `mcp`).
async fn mcp(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    if !mcp_token_ok(&state, &headers) {
        return ApiError::mcp_token_missing().into_response();
    }
    // The whole body within the read timeout: a client that sends headers
    // and then nothing holds no connection for long.
    let body = match tokio::time::timeout(
        state.limits.read_timeout,
        axum::body::to_bytes(body, MCP_MAX_BODY_BYTES),
    )
    .await
    {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return ApiError {
                status: StatusCode::PAYLOAD_TOO_LARGE,
                ..ApiError::invalid(
                    "body",
                    format!("An MCP message is at most {MCP_MAX_BODY_BYTES} bytes."),
                )
            }
            .into_response()
        }
        Err(_) => {
            return ApiError::timeout(format!(
                "The request body did not arrive within {} s.",
                state.limits.read_timeout.as_secs()
            ))
            .into_response()
        }
    };
    let message: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => {
            let reply = json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32700, "message": format!("not JSON: {e}")}});
            return (StatusCode::BAD_REQUEST, Json(reply)).into_response();
        }
    };
    if message.is_array() {
        let reply = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32600, "message": "send one JSON-RPC message per request (no batches)"}});
        return (StatusCode::BAD_REQUEST, Json(reply)).into_response();
    }
    // Notifications and the client's replies need no answer.
    if message.get("method").is_none() || message.get("id").is_none() {
        return StatusCode::ACCEPTED.into_response();
    }
    if let Some((id, call)) = crate::mcp::as_file_call(&message) {
        let reply = match call {
            Ok(call) => mcp_transcribe(&state, id, call).await,
            Err(reply) => reply,
        };
        return Json(reply).into_response();
    }
    let session = state.mcp.clone();
    // A transcription takes seconds of engine time: off the request threads.
    let reply = tokio::task::spawn_blocking(move || {
        session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .handle(&message)
    })
    .await;
    match reply {
        Ok(Some(reply)) => Json(reply).into_response(),
        Ok(None) => StatusCode::ACCEPTED.into_response(),
        Err(e) => ApiError::internal(format!("the MCP call failed: {e}")).into_response(),
    }
}

async fn health(State(state): State<Arc<AppState>>) -> Response {
    if state.ready.load(Ordering::SeqCst) {
        Json(json!({"status": "ok"})).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "loading"})),
        )
            .into_response()
    }
}

async fn list_models(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let data: Vec<_> = state
        .catalog
        .speech()?
        .iter()
        .map(|m| state.catalog.api_model(m))
        .collect();
    Ok(Json(json!({"object": "list", "data": data})).into_response())
}

async fn get_model(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let models = state.catalog.speech()?;
    match models.iter().find(|m| m.name == id) {
        Some(m) => Ok(Json(state.catalog.api_model(m)).into_response()),
        None => Err(ApiError::model_not_found(&id, &state.catalog.names()?)),
    }
}

async fn not_found() -> ApiError {
    ApiError::not_found(
        "No such endpoint. This server offers POST /v1/audio/transcriptions, \
         POST /v1/audio/translations, GET /v1/models and GET /health.",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        ..ApiError::invalid("method", "This endpoint does not take that HTTP method.")
    }
}

async fn transcriptions(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Response, ApiError> {
    handle(state, headers, form, Task::Transcribe).await
}

async fn translations(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Response, ApiError> {
    handle(state, headers, form, Task::Translate).await
}

async fn handle(
    state: Arc<AppState>,
    headers: HeaderMap,
    form: Result<Multipart, MultipartRejection>,
    task: Task,
) -> Result<Response, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > state.limits.max_bytes + (1 << 20)) {
        return Err(ApiError::too_large(state.limits.max_bytes));
    }
    let form = form.map_err(|e| {
        ApiError::invalid(
            "file",
            format!(
                "{}. Send multipart/form-data with a `file` part.",
                e.body_text()
            ),
        )
    })?;
    let upload = upload::read_within_deadline(form, &state.limits).await?;
    let request = Request::from_upload(&state, &upload, task)?;
    let Some(file) = upload.file else {
        return Err(ApiError::invalid(
            "file",
            "The request has no `file` part: send the audio as multipart/form-data field `file`.",
        ));
    };
    if file.bytes == 0 {
        return Err(ApiError::invalid(
            "file",
            "The uploaded file is empty (0 bytes): send the audio.",
        )
        .with_code("invalid_audio"));
    }
    let admission = state.jobs.admit()?;
    let job = Job {
        model_name: request.model_name,
        model_path: request.model_path,
        audio: file.temp.path().to_path_buf(),
        options: request.options,
        on_segment: None,
    };
    if request.stream {
        // The temporary file moves into the stream, which deletes it at its end.
        return Ok(stream::respond(
            state.jobs.clone(),
            admission,
            job,
            file.temp,
        ));
    }
    let transcript = state.jobs.run(admission, job).await?;
    drop(file);
    let mut response = format::render(&transcript, request.format, task);
    if request.words {
        // Not silently left out: the client is told why there are none.
        tracing::info!("{NO_WORD_TIMES}");
        response.headers_mut().insert(
            header::HeaderName::from_static("x-utter-notice"),
            header::HeaderValue::from_static(NO_WORD_TIMES),
        );
    }
    Ok(response)
}

/// The form's fields, checked.
struct Request {
    model_name: String,
    model_path: std::path::PathBuf,
    format: ResponseFormat,
    stream: bool,
    options: FileOptions,
    /// `timestamp_granularities` asked for words.
    words: bool,
}

/// Said with a response that asked for word timestamps: the engine
/// (transcribe.cpp 0.4.1) times Whisper by segments and Moonshine not at
/// all, so no model here has word times to give.
const NO_WORD_TIMES: &str =
    "word timestamps: this model gives none (segments only); the response has no `words`";

impl Request {
    fn from_upload(state: &AppState, upload: &Upload, task: Task) -> Result<Self, ApiError> {
        let model = state
            .catalog
            .named_or_default(upload.text("model").map(str::trim))?;
        if task == Task::Translate {
            let translators = state.catalog.translators()?;
            if !translators.contains(&model.name) {
                return Err(ApiError::invalid(
                    "model",
                    format!(
                        "`{}` cannot translate (English-only or no translation head). Models here that can: {}.",
                        model.name,
                        list_or_none(&translators)
                    ),
                )
                .with_code("translation_unsupported"));
            }
        }
        let format = ResponseFormat::parse(upload.text("response_format").unwrap_or("json"))?;
        if let Some(t) = upload.text("temperature") {
            match t.trim().parse::<f64>() {
                Ok(v) if (0.0..=1.0).contains(&v) => {}
                _ => {
                    return Err(ApiError::invalid(
                        "temperature",
                        format!("temperature must be a number from 0 to 1, not `{t}`."),
                    ))
                }
            }
        }
        let mut words = false;
        for g in upload.list("timestamp_granularities") {
            words |= g == "word";
            if g != "word" && g != "segment" {
                return Err(ApiError::invalid(
                    "timestamp_granularities",
                    format!("Unknown timestamp granularity `{g}`: use word or segment."),
                ));
            }
        }
        let stream = match upload.text("stream").map(str::trim) {
            None | Some("false") | Some("") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ApiError::invalid(
                    "stream",
                    format!("stream must be true or false, not `{other}`."),
                ))
            }
        };
        if stream && task == Task::Translate {
            return Err(ApiError::invalid(
                "stream",
                "Translations cannot be streamed.",
            ));
        }
        let language = match task {
            // A translation's `language` is the output's: always English.
            Task::Translate => None,
            Task::Transcribe => upload
                .text("language")
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.eq_ignore_ascii_case("auto"))
                .map(languages::code_for),
        };
        let options = FileOptions {
            language,
            translate: task == Task::Translate,
            prompt: upload
                .text("prompt")
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(String::from),
            limits: state.audio_limits,
            ..FileOptions::default()
        };
        Ok(Self {
            model_name: model.name,
            model_path: model.path,
            format,
            stream,
            options,
            words,
        })
    }
}
