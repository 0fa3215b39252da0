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
//!
//! Its protocol has no keys: off loopback only the networks the user listed
//! connect (checked at accept). Connections are capped, each event must
//! arrive within the read timeout, an event's payload is small (audio comes
//! in chunks of a few KB), the audio format is checked at `audio-start`,
//! and one recording may last at most [`MAX_RECORDING`].

use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use utter_core::transcribe::FileOptions;

use crate::access::WyomingAllow;
use crate::jobs::Job;
use crate::routes::AppState;

/// Longest header line or data block accepted.
const MAX_JSON_BYTES: usize = 64 * 1024;
/// Largest payload of one event (clients send audio in chunks of ~2 KB).
const MAX_PAYLOAD_BYTES: u64 = 1 << 20;
/// The longest one recording may stream, from `audio-start` to `audio-stop`.
const MAX_RECORDING: Duration = Duration::from_secs(10 * 60);
/// Sample widths (bytes) and channels an `audio-start` may declare.
const MAX_WIDTH: u64 = 4;
const MAX_CHANNELS: u64 = 8;

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
    #[error("no event within {0} s")]
    Idle(u64),
    #[error("an event header that is not a JSON object")]
    NotAnEvent,
}

pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    allow: WyomingAllow,
    max_connections: usize,
    idle: Duration,
) {
    let connections = Arc::new(tokio::sync::Semaphore::new(max_connections.max(1)));
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                if !allow.admits(peer.ip()) {
                    tracing::warn!("wyoming: refused {peer}: not in --wyoming-allow");
                    continue; // dropped: closed at once
                }
                let Ok(permit) = connections.clone().try_acquire_owned() else {
                    tracing::warn!(
                        "wyoming: refused {peer}: {max_connections} connections already"
                    );
                    continue;
                };
                let state = state.clone();
                tokio::spawn(async move {
                    let _permit = permit;
                    if let Err(e) = connection(stream, state, idle).await {
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

/// The next event, which must arrive whole within `idle`.
async fn read_event_within(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    idle: Duration,
) -> Result<Option<Event>, WyomingError> {
    tokio::time::timeout(idle, read_event(reader, MAX_PAYLOAD_BYTES))
        .await
        .map_err(|_| WyomingError::Idle(idle.as_secs()))?
}

async fn read_event(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
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
    if !header.is_object() {
        return Err(WyomingError::NotAnEvent);
    }
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

async fn connection(
    stream: TcpStream,
    state: Arc<AppState>,
    idle: Duration,
) -> Result<(), WyomingError> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut phase = Phase::Idle;
    while let Some(event) = read_event_within(&mut reader, idle).await? {
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
                match AudioFormat::from_event(&event.data) {
                    Ok(format) => Phase::Recording {
                        model,
                        language,
                        wav: WavFile::create(format)?,
                    },
                    Err(why) => {
                        write_error(&mut write, &why).await?;
                        Phase::Idle
                    }
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
                if wav.bytes + event.payload.len() as u64 > state.limits.max_bytes
                    || wav.seconds_of(event.payload.len() as u64) > state.audio_limits.max_secs()
                {
                    write_error(&mut write, "the audio is longer than this server accepts").await?;
                    Phase::Idle
                } else if wav.started.elapsed() > MAX_RECORDING {
                    write_error(
                        &mut write,
                        &format!(
                            "the audio stream lasted more than {} minutes",
                            MAX_RECORDING.as_secs() / 60
                        ),
                    )
                    .await?;
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
            limits: state.audio_limits,
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

/// The PCM format an `audio-start` declares, checked: every product below
/// fits its header field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AudioFormat {
    rate: u32,
    /// Bytes per sample.
    width: u16,
    channels: u16,
}

impl AudioFormat {
    fn from_event(data: &Map<String, Value>) -> Result<Self, String> {
        let get = |k: &str, default: u64| data.get(k).and_then(Value::as_u64).unwrap_or(default);
        let (rate, width, channels) = (get("rate", 16_000), get("width", 2), get("channels", 1));
        let rate = u32::try_from(rate).unwrap_or(u32::MAX);
        utter_core::audio::limits::check_rate(rate).map_err(|e| format!("audio-start: {e}"))?;
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(format!(
                "audio-start: width {width} is not a sample width (1 to {MAX_WIDTH} bytes)"
            ));
        }
        if !(1..=MAX_CHANNELS).contains(&channels) {
            return Err(format!(
                "audio-start: {channels} channels is outside 1 to {MAX_CHANNELS}"
            ));
        }
        Ok(Self {
            rate,
            width: width as u16,
            channels: channels as u16,
        })
    }

    fn bytes_per_second(self) -> u32 {
        self.rate * u32::from(self.width) * u32::from(self.channels)
    }
}

/// PCM as it arrives, in a temporary WAV file whose sizes are written at the end.
struct WavFile {
    temp: tempfile::NamedTempFile,
    bytes: u64,
    format: AudioFormat,
    started: Instant,
}

impl WavFile {
    fn create(format: AudioFormat) -> std::io::Result<Self> {
        let AudioFormat {
            rate,
            width,
            channels,
        } = format;
        let mut temp = crate::jobs::upload_temp_file(".wav")?;
        let f = temp.as_file_mut();
        f.write_all(b"RIFF\0\0\0\0WAVEfmt ")?;
        f.write_all(&16u32.to_le_bytes())?;
        f.write_all(&1u16.to_le_bytes())?; // PCM
        f.write_all(&channels.to_le_bytes())?;
        f.write_all(&rate.to_le_bytes())?;
        f.write_all(&format.bytes_per_second().to_le_bytes())?;
        f.write_all(&(width * channels).to_le_bytes())?;
        f.write_all(&(width * 8).to_le_bytes())?;
        f.write_all(b"data\0\0\0\0")?;
        Ok(Self {
            temp,
            bytes: 0,
            format,
            started: Instant::now(),
        })
    }

    /// Seconds of audio once `more` bytes are added.
    fn seconds_of(&self, more: u64) -> f64 {
        (self.bytes + more) as f64 / f64::from(self.format.bytes_per_second())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audio_start_is_checked_before_any_header_is_written() {
        let format = |v: Value| AudioFormat::from_event(v.as_object().unwrap());
        assert_eq!(
            format(json!({})).unwrap(),
            AudioFormat {
                rate: 16_000,
                width: 2,
                channels: 1
            }
        );
        let widest = format(json!({"rate": 768_000, "width": 4, "channels": 8})).unwrap();
        assert_eq!(widest.bytes_per_second(), 768_000 * 4 * 8);
        for (bad, says) in [
            (json!({"rate": 4_294_967_291u64}), "sample rate"),
            (json!({"rate": 1u64 << 40}), "sample rate"),
            (json!({"width": 0}), "width 0"),
            (json!({"width": 65_535, "channels": 65_535}), "width 65535"),
            (json!({"channels": 0}), "0 channels"),
        ] {
            let err = format(bad.clone()).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    /// Random and mutated frames through the framing reader: each ends in
    /// an event, the end, or an error, never a panic or an allocation sized
    /// by a header (a fixed budget of fuzzing in every `npm test`).
    #[tokio::test]
    async fn mutated_frames_end_in_an_event_or_an_error() {
        let mut seed = 0x57_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let pieces: [&[u8]; 10] = [
            b"{\"type\": \"audio-chunk\", \"payload_length\": ",
            b"{\"type\": \"audio-start\", \"data_length\": ",
            b"18446744073709551615",
            b"1048577",
            b"4",
            b"}\n",
            b"{\"data\": 1}",
            b"[1, 2]\n",
            b"\n",
            b"\xff\x00garbage",
        ];
        for _ in 0..2_000 {
            let mut input = Vec::new();
            for _ in 0..(next() % 8) {
                input.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
                if next() % 4 == 0 {
                    input.push(next() as u8);
                }
            }
            let mut reader = tokio::io::BufReader::new(&input[..]);
            for _ in 0..8 {
                match read_event(&mut reader, MAX_PAYLOAD_BYTES).await {
                    Ok(Some(event)) => assert!(event.payload.len() as u64 <= MAX_PAYLOAD_BYTES),
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }
}
