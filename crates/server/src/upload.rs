//! The multipart form of an upload: the audio is streamed into a temporary
//! file (never held whole in memory, deleted when the request ends) and the
//! other fields are kept as text. Each read must make progress within the
//! body timeout, so a slow client cannot hold the server.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::multipart::{Field, MultipartError};
use axum::extract::Multipart;
use axum::http::StatusCode;
use tempfile::NamedTempFile;
use tokio::io::AsyncWriteExt;

use crate::error::ApiError;

/// Longest text field accepted (a prompt, a language...).
const MAX_FIELD_BYTES: usize = 64 * 1024;
/// The most text fields one form may carry: the API has about ten.
const MAX_FIELDS: usize = 32;
/// All text fields together (20 connections of endless 64 KiB fields
/// held 1.9 GB).
const MAX_FIELDS_TOTAL_BYTES: usize = 128 * 1024;

pub struct Upload {
    /// The `file` part, if the request had one.
    pub file: Option<UploadedFile>,
    fields: HashMap<String, Vec<String>>,
}

pub struct UploadedFile {
    /// Deleted on drop.
    pub temp: NamedTempFile,
    pub bytes: u64,
}

impl Upload {
    /// A single-valued field.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.fields
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// A list field, sent as repeated `name[]` or `name` parts.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.fields.get(name).cloned().unwrap_or_default()
    }
}

pub struct Limits {
    pub max_bytes: u64,
    /// Each read must make progress within it.
    pub read_timeout: Duration,
    /// The whole body must have arrived within it.
    pub body_deadline: Duration,
}

/// [`read`] within the whole-body deadline: a body trickled a byte at a
/// time, each within the read timeout, still ends.
pub async fn read_within_deadline(form: Multipart, limits: &Limits) -> Result<Upload, ApiError> {
    match tokio::time::timeout(limits.body_deadline, read(form, limits)).await {
        Ok(read) => read,
        Err(_) => Err(ApiError::timeout(format!(
            "The request body took more than {} s to arrive; send it faster, or a smaller file.",
            limits.body_deadline.as_secs()
        ))),
    }
}

pub async fn read(mut form: Multipart, limits: &Limits) -> Result<Upload, ApiError> {
    let mut upload = Upload {
        file: None,
        fields: HashMap::new(),
    };
    let (mut fields, mut text_bytes) = (0usize, 0usize);
    while let Some(mut field) = timed(limits, form.next_field()).await? {
        let name = field.name().unwrap_or_default();
        let name = name.strip_suffix("[]").unwrap_or(name).to_string();
        if name == "file" {
            if upload.file.is_some() {
                return Err(ApiError::invalid(
                    "file",
                    "The form has more than one `file` part: send one file per request.",
                ));
            }
            upload.file = Some(save_file(&mut field, limits).await?);
        } else {
            fields += 1;
            if fields > MAX_FIELDS {
                return Err(ApiError::invalid(
                    "form",
                    format!("The form has more than {MAX_FIELDS} fields."),
                ));
            }
            let mut value = Vec::new();
            while let Some(chunk) = timed(limits, field.chunk()).await? {
                value.extend_from_slice(&chunk);
                text_bytes += chunk.len();
                if value.len() > MAX_FIELD_BYTES {
                    return Err(ApiError::invalid(
                        "form",
                        format!("The form field `{name}` is longer than {MAX_FIELD_BYTES} bytes."),
                    ));
                }
                if text_bytes > MAX_FIELDS_TOTAL_BYTES {
                    return Err(ApiError::invalid(
                        "form",
                        format!(
                            "The form's text fields hold more than {MAX_FIELDS_TOTAL_BYTES} bytes."
                        ),
                    ));
                }
            }
            let value = String::from_utf8(value).map_err(|_| {
                ApiError::invalid(
                    "form",
                    format!("The form field `{name}` is not UTF-8 text."),
                )
            })?;
            upload.fields.entry(name).or_default().push(value);
        }
    }
    Ok(upload)
}

/// The extension of the client's file name, as a hint for the decoder
/// (letters and digits only: the name never becomes a path).
fn extension_hint(file_name: Option<&str>) -> String {
    file_name
        .and_then(|n| n.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .filter(|ext| {
            (1..=8).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric())
        })
        .map(|ext| format!(".{ext}"))
        .unwrap_or_default()
}

async fn save_file(field: &mut Field<'_>, limits: &Limits) -> Result<UploadedFile, ApiError> {
    let temp = crate::jobs::upload_temp_file(&extension_hint(field.file_name()))
        .map_err(|e| ApiError::internal(format!("No temporary file for the upload: {e}")))?;
    let mut out = tokio::fs::File::from_std(
        temp.reopen()
            .map_err(|e| ApiError::internal(format!("The upload's temporary file: {e}")))?,
    );
    let mut bytes = 0u64;
    while let Some(chunk) = timed(limits, field.chunk()).await? {
        bytes += chunk.len() as u64;
        if bytes > limits.max_bytes {
            return Err(ApiError::too_large(limits.max_bytes));
        }
        out.write_all(&chunk)
            .await
            .map_err(|e| ApiError::internal(format!("The upload could not be stored: {e}")))?;
    }
    out.flush()
        .await
        .map_err(|e| ApiError::internal(format!("The upload could not be stored: {e}")))?;
    Ok(UploadedFile { temp, bytes })
}

async fn timed<T>(
    limits: &Limits,
    read: impl std::future::Future<Output = Result<T, MultipartError>>,
) -> Result<T, ApiError> {
    match tokio::time::timeout(limits.read_timeout, read).await {
        Err(_) => Err(ApiError::timeout(format!(
            "The request body stalled for more than {} s; send it without pauses.",
            limits.read_timeout.as_secs()
        ))),
        Ok(Err(e)) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            Err(ApiError::too_large(limits.max_bytes))
        }
        Ok(Err(e)) => Err(ApiError::invalid(
            "file",
            format!("The multipart form could not be read: {}. Send multipart/form-data with a `file` part.", e.body_text()),
        )),
        Ok(Ok(v)) => Ok(v),
    }
}
