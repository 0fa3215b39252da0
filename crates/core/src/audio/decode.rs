//! Streaming decode of audio and video files with symphonia (no ffmpeg):
//! the first audio track is decoded packet by packet, downmixed and
//! resampled, and handed to a sink in 16 kHz mono pieces, so memory stays
//! bounded however long the file is.

use std::fs::File;
use std::path::Path;

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{self, CodecParameters, DecoderOptions, CODEC_TYPE_NULL};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::{FormatOptions, FormatReader, Track};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::{Hint, Probe, ProbeResult};

use super::limits::{self, AudioLimits, BadHeader};
use super::resample::{downmix, StreamResampler};

/// The most samples (frames × channels) one decoded packet may hold: a
/// header can claim any packet size, and the buffer is sized from it.
const MAX_PACKET_SAMPLES: usize = 1 << 22;

/// Why a file could not be decoded. The path is added by the caller.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    #[error("file not found")]
    NotFound,
    #[error("file is empty (0 bytes)")]
    Empty,
    #[error("is a folder, not a file (give the files in it, e.g. `folder/*`)")]
    IsFolder,
    /// A pipe, a device or a socket: its length is unknown, and reading it
    /// could block or never end.
    #[error("is not a regular file (a pipe, device or socket): save the audio to a file first")]
    NotRegular,
    #[error("cannot read file: {0}")]
    Io(std::io::Error),
    #[error("not a recognised audio or video file (unknown container or corrupt header)")]
    UnknownFormat,
    #[error("no audio track that Utter can decode (the file may have no audio, or an unsupported codec such as AC-3 or WMA)")]
    NoAudioTrack,
    #[error("audio codec {0} is not supported (supported: PCM, FLAC, MP1/MP2/MP3, Vorbis, Opus, AAC, ALAC)")]
    UnsupportedCodec(String),
    #[error("corrupt audio data: {0}")]
    Corrupt(String),
    /// The demuxer or decoder (third-party code) panicked on this file.
    #[error("corrupt file: the decoder gave up on it ({0})")]
    DecoderFailed(String),
    #[error(transparent)]
    BadHeader(#[from] BadHeader),
    /// More audio than the limit (`--max-audio-minutes`, Settings → Transcription → Longest file):
    /// declared in the header, or found while decoding.
    #[error("{} more than {limit} of audio, Utter's limit for one file (raise it with --max-audio-minutes or in Settings → Transcription → Longest file)", if *.declared { "its header declares" } else { "it holds" })]
    TooLong { limit: String, declared: bool },
    #[error(
        "file is truncated: only {decoded_secs:.1} s of its {declared_secs:.1} s could be decoded"
    )]
    Truncated {
        decoded_secs: f64,
        declared_secs: f64,
    },
}

/// What was decoded.
#[derive(Debug, Clone, Default)]
pub struct DecodeReport {
    pub source_rate: u32,
    pub channels: usize,
    pub codec: String,
    /// Seconds of audio delivered to the sink.
    pub decoded_secs: f64,
    /// Duration the container declares, when it declares one.
    pub declared_secs: Option<f64>,
    /// Packets that failed to decode and were skipped.
    pub skipped_packets: usize,
    /// The sink asked to stop (its caller failed or was cancelled) before the end.
    pub stopped: bool,
}

impl DecodeReport {
    /// `Some(error)` when the file ended well before its declared length.
    pub fn truncation(&self) -> Option<AudioError> {
        if self.stopped {
            return None;
        }
        let declared = self.declared_secs?;
        if self.decoded_secs + 0.25 >= declared * 0.99 {
            return None;
        }
        Some(if self.skipped_packets > 0 {
            AudioError::Corrupt(format!(
                "{} damaged packets; only {:.1} s of its {declared:.1} s could be decoded",
                self.skipped_packets, self.decoded_secs
            ))
        } else {
            AudioError::Truncated {
                decoded_secs: self.decoded_secs,
                declared_secs: declared,
            }
        })
    }
}

/// Symphonia's codecs plus Opus (libopus, through its symphonia adapter).
fn codecs_registry() -> &'static codecs::CodecRegistry {
    static REGISTRY: std::sync::OnceLock<codecs::CodecRegistry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = codecs::CodecRegistry::new();
        symphonia::default::register_enabled_codecs(&mut registry);
        registry.register_all::<symphonia_adapter_libopus::OpusDecoder>();
        registry
    })
}

fn codec_name(codec: codecs::CodecType) -> String {
    if let Some(d) = codecs_registry().get_codec(codec) {
        return d.short_name.to_string();
    }
    let known = [
        (codecs::CODEC_TYPE_SPEEX, "Speex"),
        (codecs::CODEC_TYPE_WMA, "WMA"),
        (codecs::CODEC_TYPE_EAC3, "E-AC-3"),
        (codecs::CODEC_TYPE_DCA, "DTS"),
        (codecs::CODEC_TYPE_ATRAC3, "ATRAC3"),
        (codecs::CODEC_TYPE_MP1, "MPEG-1 Layer I"),
        (codecs::CODEC_TYPE_MP2, "MPEG-1 Layer II"),
    ];
    known
        .iter()
        .find(|(c, _)| *c == codec)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("{codec}"))
}

/// symphonia's formats, with FLAC behind [`super::flac_guard`] (registered
/// first, so its `fLaC` marker wins).
fn probe() -> &'static Probe {
    static PROBE: std::sync::OnceLock<Probe> = std::sync::OnceLock::new();
    PROBE.get_or_init(|| {
        let mut probe = Probe::default();
        probe.register(&super::flac_guard::descriptor());
        symphonia::default::register_enabled_formats(&mut probe);
        probe
    })
}

/// Probes the container, with the file extension as a hint.
fn probe_format(path: &Path, file: File) -> symphonia::core::errors::Result<ProbeResult> {
    let mut hint = Hint::new();
    if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(ext);
    }
    let mss = MediaSourceStream::new(Box::new(file), Default::default());
    probe().format(
        &hint,
        mss,
        &FormatOptions::default(),
        &MetadataOptions::default(),
    )
}

/// The first track with a codec symphonia recognises.
fn first_audio_track(format: &dyn FormatReader) -> Option<&Track> {
    format
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
}

/// The duration the container declares for a track, when it declares one.
fn declared_secs(params: &CodecParameters) -> Option<f64> {
    match (params.n_frames, params.sample_rate) {
        (Some(n), Some(rate)) if rate > 0 && n > 0 => Some(n as f64 / rate as f64),
        _ => None,
    }
}

/// Decodes `path` within the default [`AudioLimits`] and calls `sink` with
/// consecutive 16 kHz mono pieces.
pub fn decode_file(path: &Path, mut sink: impl FnMut(&[f32])) -> Result<DecodeReport, AudioError> {
    decode_file_within(path, &AudioLimits::default(), |pcm| {
        sink(pcm);
        true
    })
}

/// Decodes `path` and calls `sink` with consecutive 16 kHz mono pieces until
/// it returns `false` (the report then says `stopped`). The header is
/// checked against what audio can be and `limits` before anything is sized
/// from it, and the decoded length is counted as it goes. A panic inside
/// symphonia (seen on corrupt MKV/WebM) is this file's error; what reached
/// `sink` before it stays delivered.
pub fn decode_file_within(
    path: &Path,
    limits: &AudioLimits,
    sink: impl FnMut(&[f32]) -> bool,
) -> Result<DecodeReport, AudioError> {
    utter_base::panics::contain(|| decode_contained(path, limits, sink))
        .unwrap_or_else(|panic| Err(AudioError::DecoderFailed(panic.message)))
}

/// The codec parameters a track declares, checked before a decoder or a
/// resampler is made from them.
fn check_params(params: &CodecParameters, limits: &AudioLimits) -> Result<(), AudioError> {
    if let Some(rate) = params.sample_rate {
        limits::check_rate(rate)?;
    }
    if let Some(channels) = params.channels {
        limits::check_channels(channels.count())?;
    }
    if let Some(bits) = params.bits_per_sample {
        limits::check_bits(bits)?;
    }
    let channels = params.channels.map_or(1, |c| c.count().max(1));
    if let Some(frames) = params.max_frames_per_packet {
        if frames.saturating_mul(channels as u64) > MAX_PACKET_SAMPLES as u64 {
            return Err(AudioError::Corrupt(format!(
                "its header declares packets of {frames} frames"
            )));
        }
    }
    if declared_secs(params).is_some_and(|secs| secs > limits.max_secs()) {
        return Err(AudioError::TooLong {
            limit: limits.describe(),
            declared: true,
        });
    }
    Ok(())
}

fn decode_contained(
    path: &Path,
    limits: &AudioLimits,
    mut sink: impl FnMut(&[f32]) -> bool,
) -> Result<DecodeReport, AudioError> {
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => AudioError::NotFound,
        _ => AudioError::Io(e),
    })?;
    let meta = file.metadata().map_err(AudioError::Io)?;
    if meta.is_dir() {
        return Err(AudioError::IsFolder);
    }
    if !meta.is_file() {
        return Err(AudioError::NotRegular);
    }
    if meta.len() == 0 {
        return Err(AudioError::Empty);
    }
    let probed = probe_format(path, file).map_err(|e| match e {
        SymError::IoError(io) if io.kind() != std::io::ErrorKind::UnexpectedEof => {
            AudioError::Io(io)
        }
        SymError::DecodeError(why) if why == super::flac_guard::CLAIMS_TOO_MUCH => {
            AudioError::Corrupt(why.into())
        }
        _ => AudioError::UnknownFormat,
    })?;
    let mut format = probed.format;
    let track = first_audio_track(format.as_ref()).ok_or(AudioError::NoAudioTrack)?;
    let params = track.codec_params.clone();
    let track_id = track.id;
    check_params(&params, limits)?;
    let mut decoder = codecs_registry()
        .make(&params, &DecoderOptions::default())
        .map_err(|_| AudioError::UnsupportedCodec(codec_name(params.codec)))?;

    let mut report = DecodeReport {
        source_rate: params.sample_rate.unwrap_or(0),
        channels: params.channels.map_or(0, |c| c.count()),
        codec: codec_name(params.codec),
        declared_secs: declared_secs(&params),
        ..Default::default()
    };
    let mut resampler: Option<StreamResampler> = None;
    // (capacity in frames, channels, buffer), rebuilt when a packet needs more.
    let mut samples: Option<(usize, usize, SampleBuffer<f32>)> = None;
    let (mut mono, mut out) = (Vec::new(), Vec::new());
    let mut decoded_frames = 0u64;
    let mut last_error = None;
    loop {
        let packet = match format.next_packet() {
            Ok(p) => p,
            // End of stream, or a file cut short mid-packet: stop with what we have.
            Err(SymError::IoError(_)) | Err(SymError::ResetRequired) => break,
            Err(e) => {
                last_error = Some(e.to_string());
                report.skipped_packets += 1;
                if report.skipped_packets > 100 {
                    break;
                }
                continue;
            }
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(buf) => buf,
            Err(SymError::DecodeError(e)) => {
                last_error = Some(e.to_string());
                report.skipped_packets += 1;
                continue;
            }
            Err(SymError::IoError(_)) => break,
            Err(e) => return Err(AudioError::Corrupt(e.to_string())),
        };
        let spec = *decoded.spec();
        if decoded.frames() == 0 {
            continue;
        }
        let channels = spec.channels.count();
        let frames_cap = decoded.capacity();
        // What the decoder reports may differ from the header: checked again.
        limits::check_rate(spec.rate)?;
        limits::check_channels(channels)?;
        if frames_cap.saturating_mul(channels) > MAX_PACKET_SAMPLES {
            return Err(AudioError::Corrupt(format!(
                "a packet of {frames_cap} frames"
            )));
        }
        if samples
            .as_ref()
            .is_none_or(|(cap, ch, _)| *cap < frames_cap || *ch != channels)
        {
            samples = Some((
                frames_cap,
                channels,
                SampleBuffer::new(frames_cap as u64, spec),
            ));
        }
        let (_, _, buf) = samples.as_mut().expect("just set");
        buf.copy_interleaved_ref(decoded);
        report.channels = channels;
        report.source_rate = spec.rate;
        decoded_frames += (buf.samples().len() / channels.max(1)) as u64;
        if decoded_frames as f64 / f64::from(spec.rate) > limits.max_secs() {
            return Err(AudioError::TooLong {
                limit: limits.describe(),
                declared: false,
            });
        }
        if resampler.is_none() {
            resampler = Some(StreamResampler::new(spec.rate)?);
        }
        let r = resampler.as_mut().expect("just set");
        mono.clear();
        downmix(buf.samples(), channels, &mut mono);
        out.clear();
        r.push(&mono, &mut out);
        if !out.is_empty() && !sink(&out) {
            report.stopped = true;
            break;
        }
    }
    if let Some(r) = resampler.as_mut().filter(|_| !report.stopped) {
        out.clear();
        r.finish(&mut out);
        if !out.is_empty() {
            sink(&out);
        }
    }
    if decoded_frames == 0 && report.skipped_packets > 0 {
        return Err(AudioError::Corrupt(
            last_error.unwrap_or_else(|| "no packet could be decoded".into()),
        ));
    }
    if report.source_rate > 0 {
        report.decoded_secs = decoded_frames as f64 / report.source_rate as f64;
    }
    Ok(report)
}

/// The duration a file declares in its header, without decoding (for progress bars).
pub fn probe_duration_secs(path: &Path) -> Option<f64> {
    utter_base::panics::contain(|| {
        let probed = probe_format(path, File::open(path).ok()?).ok()?;
        declared_secs(&first_audio_track(probed.format.as_ref())?.codec_params)
    })
    .ok()
    .flatten()
}
