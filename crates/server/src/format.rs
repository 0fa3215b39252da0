//! A transcript in each of OpenAI's `response_format`s.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utter_core::export::{self, Format};
use utter_core::transcript::FileTranscript;

use crate::error::ApiError;
use crate::languages;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    Json,
    Text,
    Srt,
    Vtt,
    VerboseJson,
}

impl ResponseFormat {
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        Ok(match s {
            "json" => Self::Json,
            "text" => Self::Text,
            "srt" => Self::Srt,
            "vtt" => Self::Vtt,
            "verbose_json" => Self::VerboseJson,
            other => {
                return Err(ApiError::invalid(
                    "response_format",
                    format!(
                        "Unsupported response_format `{other}`: use json, text, srt, verbose_json or vtt."
                    ),
                ))
            }
        })
    }
}

/// Whether the whole transcription or a translation into English.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Transcribe,
    Translate,
}

#[derive(Serialize)]
struct Json {
    text: String,
    usage: Usage,
}

#[derive(Serialize)]
struct Usage {
    #[serde(rename = "type")]
    kind: &'static str,
    seconds: f64,
}

#[derive(Serialize)]
struct Verbose {
    task: &'static str,
    language: String,
    duration: f64,
    text: String,
    segments: Vec<Segment>,
}

/// The fields of OpenAI's segment that the engine gives. It gives no
/// token ids or probabilities, so those are left out rather than made up;
/// decoding is greedy, so the temperature used is 0.
#[derive(Serialize)]
struct Segment {
    id: usize,
    seek: i64,
    start: f64,
    end: f64,
    text: String,
    tokens: Vec<u32>,
    temperature: f64,
}

fn secs(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

pub fn render(t: &FileTranscript, format: ResponseFormat, task: Task) -> Response {
    match format {
        ResponseFormat::Json => axum::Json(Json {
            text: t.text(),
            usage: Usage {
                kind: "duration",
                seconds: secs(t.duration_ms).ceil(),
            },
        })
        .into_response(),
        ResponseFormat::Text => plain(export::render(t, Format::Txt), "text/plain; charset=utf-8"),
        ResponseFormat::Srt => plain(export::render(t, Format::Srt), "text/plain; charset=utf-8"),
        ResponseFormat::Vtt => plain(export::render(t, Format::Vtt), "text/vtt; charset=utf-8"),
        ResponseFormat::VerboseJson => axum::Json(Verbose {
            task: match task {
                Task::Transcribe => "transcribe",
                Task::Translate => "translate",
            },
            language: match task {
                Task::Translate => "english".into(),
                Task::Transcribe => languages::english_name(t.language.as_deref().unwrap_or("en")),
            },
            duration: secs(t.duration_ms),
            text: t.text(),
            segments: t
                .segments
                .iter()
                .enumerate()
                .map(|(id, s)| Segment {
                    id,
                    // Whisper's seek is in 10 ms frames.
                    seek: s.start_ms / 10,
                    start: secs(s.start_ms),
                    end: secs(s.end_ms),
                    text: s.text.clone(),
                    tokens: Vec::new(),
                    temperature: 0.0,
                })
                .collect(),
        })
        .into_response(),
    }
}

fn plain(body: String, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}
