//! Wyoming, Home Assistant's voice protocol (`utter serve --wyoming`, TCP
//! 10300): `describe` → `info`; `transcribe` → `audio-start` →
//! `audio-chunk`… → `audio-stop` → `transcript-start`, one
//! `transcript-chunk` per settled segment, `transcript-stop`, and the final
//! `transcript`. The audio goes to a temporary WAV file and through the same
//! jobs (queue, workers, cancel on disconnect) as the HTTP API.
//!
//! Framing (the `wyoming` package's `event.py`): a JSON header line
//! `{type, data?, data_length?, payload_length?}`, then `data_length` bytes of
//! more JSON data, then `payload_length` bytes of payload.

use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use utter_core::transcribe::FileOptions;

use crate::jobs::Job;
use crate::routes::AppState;

/// Longest header line or data block accepted.
const MAX_JSON_BYTES: usize = 1 << 20;

struct Event {
    kind: String,
    data: Map<String, Value>,
    payload: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
enum WyomingError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("bad event header: {0}")]
    Json(#[from] serde_json::Error),
    #[error("an event larger than this server accepts")]
    TooLarge,
}

pub async fn serve(listener: TcpListener, state: Arc<AppState>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let state = state.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection(stream, state).await {
                        tracing::debug!("wyoming connection ended: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::warn!("wyoming accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

async fn read_event(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    max_payload: u64,
) -> Result<Option<Event>, WyomingError> {
    let mut line = Vec::new();
    let n = (&mut *reader)
        .take(MAX_JSON_BYTES as u64)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if !line.ends_with(b"\n") {
        return Err(WyomingError::TooLarge);
    }
    let header: Value = serde_json::from_slice(&line)?;
    let kind = header["type"].as_str().unwrap_or_default().to_string();
    let mut data = header["data"].as_object().cloned().unwrap_or_default();
    let data_length = header["data_length"].as_u64().unwrap_or(0);
    let payload_length = header["payload_length"].as_u64().unwrap_or(0);
    if data_length > MAX_JSON_BYTES as u64 || payload_length > max_payload {
        return Err(WyomingError::TooLarge);
    }
    if data_length > 0 {
        let mut extra = vec![0; data_length as usize];
        reader.read_exact(&mut extra).await?;
        if let Value::Object(more) = serde_json::from_slice(&extra)? {
            data.extend(more);
        }
    }
    let mut payload = vec![0; payload_length as usize];
    reader.read_exact(&mut payload).await?;
    Ok(Some(Event {
        kind,
        data,
        payload,
    }))
}

async fn write_event(
    out: &mut tokio::net::tcp::OwnedWriteHalf,
    kind: &str,
    data: Value,
) -> std::io::Result<()> {
    let mut line = json!({"type": kind, "data": data, "version": "1.10.2"}).to_string();
    line.push('\n');
    out.write_all(line.as_bytes()).await
}

/// A connection's state between events.
enum Phase {
    Idle,
    /// After `transcribe`: the model and language asked for.
    Asked {
        model: Option<String>,
        language: Option<String>,
    },
    /// Between `audio-start` and `audio-stop`.
    Recording {
        model: Option<String>,
        language: Option<String>,
        wav: WavFile,
    },
}

async fn connection(stream: TcpStream, state: Arc<AppState>) -> Result<(), WyomingError> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut phase = Phase::Idle;
    while let Some(event) = read_event(&mut reader, state.limits.max_bytes).await? {
        phase = match (event.kind.as_str(), phase) {
            ("describe", phase) => {
                write_event(&mut write, "info", info(&state)).await?;
                phase
            }
            ("transcribe", _) => Phase::Asked {
                model: event
                    .data
                    .get("name")
                    .and_then(Value::as_str)
                    .map(String::from),
                language: event
                    .data
                    .get("language")
                    .and_then(Value::as_str)
                    .map(String::from),
            },
            ("audio-start", phase) => {
                let (model, language) = match phase {
                    Phase::Asked { model, language } => (model, language),
                    _ => (None, None),
                };
                Phase::Recording {
                    model,
                    language,
                    wav: WavFile::create(&event.data)?,
                }
            }
            (
                "audio-chunk",
                Phase::Recording {
                    model,
                    language,
                    mut wav,
                },
            ) => {
                if wav.bytes + event.payload.len() as u64 > state.limits.max_bytes {
                    write_error(&mut write, "the audio is longer than this server accepts").await?;
                    Phase::Idle
                } else {
                    wav.append(&event.payload)?;
                    Phase::Recording {
                        model,
                        language,
                        wav,
                    }
                }
            }
            (
                "audio-stop",
                Phase::Recording {
                    model,
                    language,
                    wav,
                },
            ) => {
                transcribe(&state, &mut reader, &mut write, model, language, wav).await?;
                Phase::Idle
            }
            (_, phase) => phase, // events for other services, or out of order: ignored
        };
    }
    Ok(())
}

async fn write_error(out: &mut tokio::net::tcp::OwnedWriteHalf, text: &str) -> std::io::Result<()> {
    write_event(out, "error", json!({"text": text, "code": "utter-error"})).await
}

fn info(state: &AppState) -> Value {
    let attribution = json!({"name": "Utter", "url": "https://github.com/utter-app/utter"});
    let version = env!("CARGO_PKG_VERSION");
    let models: Vec<Value> = state
        .catalog
        .speech()
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            json!({
                "name": m.name,
                "languages": m.capabilities.map(|c| c.languages).unwrap_or_default(),
                "attribution": attribution,
                "installed": true,
                "description": format!("{} ({})", m.variant, m.arch),
                "version": version,
            })
        })
        .collect();
    json!({
        "asr": [{
            "name": "utter",
            "attribution": attribution,
            "installed": true,
            "description": "Utter's local speech engine",
            "version": version,
            "models": models,
            "supports_transcript_streaming": true,
        }]
    })
}

async fn transcribe(
    state: &Arc<AppState>,
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    out: &mut tokio::net::tcp::OwnedWriteHalf,
    model: Option<String>,
    language: Option<String>,
    wav: WavFile,
) -> Result<(), WyomingError> {
    let resolved = state.catalog.named_or_default(model.as_deref());
    let (resolved, temp) = match (resolved, wav.finish()) {
        (Ok(r), Ok(temp)) => (r, temp),
        (Err(e), _) => return Ok(write_error(out, &e.message).await?),
        (_, Err(e)) => {
            return Ok(write_error(out, &format!("the audio could not be stored: {e}")).await?)
        }
    };
    let admission = match state.jobs.admit() {
        Ok(a) => a,
        Err(e) => return Ok(write_error(out, &e.message).await?),
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let job = Job {
        model_name: resolved.name,
        model_path: resolved.path,
        audio: temp.path().to_path_buf(),
        options: FileOptions {
            language: language.map(|l| crate::languages::code_for(&l)),
            ..FileOptions::default()
        },
        on_segment: Some(Box::new(move |segment| {
            let _ = tx.send(segment.text.clone());
        })),
    };
    write_event(out, "transcript-start", json!({})).await?;
    let run = state.jobs.run(admission, job);
    tokio::pin!(run);
    // Chunks as segments settle, until the job ends. A client that closes
    // the connection meanwhile cancels the job (dropping `run` does).
    let mut watching = true;
    let result = loop {
        tokio::select! {
            Some(text) = rx.recv() => {
                write_event(out, "transcript-chunk", json!({"text": text})).await?;
            }
            result = &mut run => break result,
            filled = reader.fill_buf(), if watching => match filled {
                Ok([]) | Err(_) => {
                    tracing::info!("wyoming client disconnected: cancelling its transcription");
                    return Ok(());
                }
                // A next event already: it waits its turn in the buffer.
                Ok(_) => watching = false,
            },
        }
    };
    while let Ok(text) = rx.try_recv() {
        write_event(out, "transcript-chunk", json!({"text": text})).await?;
    }
    write_event(out, "transcript-stop", json!({})).await?;
    drop(temp);
    match result {
        Ok(t) => {
            let mut data = json!({"text": t.text()});
            if let Some(lang) = t.language {
                data["language"] = json!(lang);
            }
            write_event(out, "transcript", data).await?;
        }
        Err(e) => write_error(out, &e.message).await?,
    }
    Ok(())
}

/// PCM as it arrives, in a temporary WAV file whose sizes are written at the end.
struct WavFile {
    temp: tempfile::NamedTempFile,
    bytes: u64,
}

impl WavFile {
    fn create(format: &Map<String, Value>) -> std::io::Result<Self> {
        let get = |k: &str, default: u64| format.get(k).and_then(Value::as_u64).unwrap_or(default);
        let (rate, width, channels) = (
            get("rate", 16_000) as u32,
            get("width", 2) as u16,
            get("channels", 1) as u16,
        );
        let mut temp = tempfile::Builder::new()
            .prefix("utter-upload-")
            .suffix(".wav")
            .tempfile()?;
        let f = temp.as_file_mut();
        f.write_all(b"RIFF\0\0\0\0WAVEfmt ")?;
        f.write_all(&16u32.to_le_bytes())?;
        f.write_all(&1u16.to_le_bytes())?; // PCM
        f.write_all(&channels.to_le_bytes())?;
        f.write_all(&rate.to_le_bytes())?;
        f.write_all(&(rate * u32::from(width) * u32::from(channels)).to_le_bytes())?;
        f.write_all(&(width * channels).to_le_bytes())?;
        f.write_all(&(width * 8).to_le_bytes())?;
        f.write_all(b"data\0\0\0\0")?;
        Ok(Self { temp, bytes: 0 })
    }

    fn append(&mut self, pcm: &[u8]) -> std::io::Result<()> {
        self.temp.as_file_mut().write_all(pcm)?;
        self.bytes += pcm.len() as u64;
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<tempfile::NamedTempFile> {
        let data = u32::try_from(self.bytes).unwrap_or(u32::MAX);
        let f = self.temp.as_file_mut();
        f.seek(SeekFrom::Start(4))?;
        f.write_all(&(data.saturating_add(36)).to_le_bytes())?;
        f.seek(SeekFrom::Start(40))?;
        f.write_all(&data.to_le_bytes())?;
        f.flush()?;
        Ok(self.temp)
    }
}
