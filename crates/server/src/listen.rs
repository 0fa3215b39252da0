//! The MCP `listen` tool's recording: the default microphone until the user
//! has spoken and paused, written to disk as it comes (what was said is kept
//! even if the transcription fails), for an agent that asks the user by voice.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use utter_capture::microphone::{Capture, CaptureError, CaptureEvent};
use utter_core::audio::wav::WavRecorder;
use utter_engine::vad::{Segmenter, SegmenterConfig, SpeechDetector};

/// When a recording stops.
#[derive(Debug, Clone, Copy)]
pub struct ListenLimits {
    /// No speech this long after the start: nothing was said.
    pub wait: Duration,
    /// A pause this long after speech ends the answer.
    pub pause: Duration,
    /// The longest answer.
    pub max: Duration,
}

/// What was heard.
#[derive(Debug)]
pub enum Heard {
    /// Speech, in this WAV.
    Speech(PathBuf),
    /// No speech within [`ListenLimits::wait`] (the WAV is deleted).
    Nothing,
}

#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("the microphone: {0}")]
    Microphone(#[from] CaptureError),
    #[error("cannot keep the recording in {}: {source}", path.display())]
    Disk {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the voice detector: {0}")]
    Detector(#[from] utter_engine::EngineError),
}

/// Where the recording stands.
enum Phase {
    Waiting,
    Speaking,
}

/// Records into a new WAV in `dir` until the user has spoken and paused.
pub fn record_answer(
    detector: &mut SpeechDetector,
    dir: &Path,
    limits: ListenLimits,
) -> Result<Heard, ListenError> {
    let path = dir.join(format!(
        "listen-{}.wav",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    ));
    let disk = |source| ListenError::Disk {
        path: path.clone(),
        source,
    };
    let mut wav = WavRecorder::create(&path).map_err(disk)?;
    let microphone = Capture::open(None)?;
    detector.flush()?; // a fresh stream
    let mut segmenter = Segmenter::new(SegmenterConfig {
        min_silence_ms: limits.pause.as_millis() as u32,
        ..SegmenterConfig::for_files()
    });
    let started = Instant::now();
    let mut phase = Phase::Waiting;
    loop {
        let event = microphone.events.recv_timeout(Duration::from_millis(500));
        let pcm = match event {
            Ok(CaptureEvent::Audio(pcm)) => pcm,
            Ok(CaptureEvent::Lost(e)) => return Err(e.into()),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Vec::new(),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(CaptureError::NoDevice.into())
            }
        };
        wav.write(&pcm).map_err(disk)?;
        let ended = !segmenter.push_all(detector.feed(&pcm)?).is_empty();
        phase = match phase {
            Phase::Waiting if segmenter.in_speech() || ended => Phase::Speaking,
            Phase::Waiting if started.elapsed() >= limits.wait => {
                drop(wav);
                let _ = std::fs::remove_file(&path);
                return Ok(Heard::Nothing);
            }
            other => other,
        };
        let done = matches!(phase, Phase::Speaking) && (ended || started.elapsed() >= limits.max);
        if done {
            microphone.close();
            wav.finish().map_err(disk)?;
            return Ok(Heard::Speech(path));
        }
    }
}
