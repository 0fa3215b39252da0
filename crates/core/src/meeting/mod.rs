//! Meetings: the microphone ("You") and the system audio ("the others": the
//! other side of a call) recorded together, each to its own WAV as it is
//! captured, then transcribed with who said what.
//!
//! A meeting is a folder: `you.wav`, `others.wav` (16 kHz mono, the same
//! timeline: sample n of one is sample n of the other) and `meeting.json`
//! (its [`MeetingRecord`]). The WAVs' headers are rewritten twice a second
//! ([`crate::audio::wav::WavRecorder`]), so a crash or `kill -9` loses at most
//! the last half second, and a folder whose record still says
//! [`MeetingPhase::Recording`] is a meeting to finish ([`unfinished`]).
//!
//! utter-capture records; [`transcribe`] aligns the two channels, drops
//! what the microphone only heard from the loudspeaker, diarizes the others
//! and merges both into one transcript.

pub mod finish;
pub mod live;
pub mod playback;
pub mod transcribe;

use std::path::{Path, PathBuf};

pub use finish::{
    finish_meeting, name_the_others, FinalPass, MeetingModels, NoLiveTranscript, StoppedMeeting,
};
pub use live::{LiveConfig, LiveLine, LiveTranscriber};
pub use transcribe::{transcribe_meeting, MeetingTranscription};

/// The microphone's channel.
pub const YOU_WAV: &str = "you.wav";
/// The system audio's channel.
pub const OTHERS_WAV: &str = "others.wav";
/// The meeting's [`MeetingRecord`].
pub const RECORD_JSON: &str = "meeting.json";

/// One side of the meeting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    You,
    Others,
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Channel::You => "the microphone",
            Channel::Others => "the system audio",
        })
    }
}

/// Why a meeting could not be recorded or transcribed. Worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum MeetingError {
    #[error("the microphone: {0}")]
    Microphone(utter_ports::microphone::CaptureError),
    #[error("{0}")]
    SystemAudio(utter_ports::microphone::CaptureError),
    #[error("{}: {source}", path.display())]
    Disk {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a meeting Utter recorded ({reason})", path.display())]
    NotAMeeting { path: PathBuf, reason: String },
    #[error(transparent)]
    Transcribe(#[from] crate::transcribe::FileError),
    #[error(transparent)]
    Engine(utter_engine::EngineError),
    /// The live transcript's thread ended abnormally, with the model.
    #[error("{}: the live transcript stopped abnormally; the recording is whole: transcribe it again", .0.display())]
    LiveTranscriptFailed(PathBuf),
    #[error("speaker diarization failed: {0}")]
    Speakers(Box<utter_models::diarize::DiarizeError>),
    #[error("this meeting is {minutes} minutes long, too long to play here; its two recordings are in {}", dir.display())]
    TooLongToPlay { minutes: u64, dir: PathBuf },
}

impl MeetingError {
    pub fn disk(path: &Path, source: std::io::Error) -> Self {
        Self::Disk {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where a meeting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MeetingPhase {
    /// Being recorded, or cut off by a crash: the audio so far is on disk.
    Recording,
    /// Stopped; not transcribed yet.
    Recorded,
    /// Its transcript was written.
    Transcribed,
}

/// What `meeting.json` says about a meeting.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeetingRecord {
    pub started_unix_ms: u64,
    pub phase: MeetingPhase,
    /// The microphone's name; `None` when the meeting had none.
    pub microphone: Option<String>,
    /// The system-audio device's name; `None` when the meeting had none.
    pub system_audio: Option<String>,
    /// How much was recorded (pauses left out), per channel.
    pub you_ms: u64,
    pub others_ms: u64,
    /// How far the system audio's clock ran from the microphone's, in parts
    /// per million (measured while both ran); `None` until the meeting stops.
    pub drift_ppm: Option<f64>,
    /// What went wrong along the way (a device lost), for the user.
    pub notices: Vec<String>,
}

impl MeetingRecord {
    /// Reads `dir`'s record.
    pub fn read(dir: &Path) -> Result<Self, MeetingError> {
        let path = dir.join(RECORD_JSON);
        let text = std::fs::read(&path).map_err(|e| MeetingError::disk(&path, e))?;
        serde_json::from_slice(&text).map_err(|e| MeetingError::NotAMeeting {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })
    }

    /// Writes it to `dir` (a new file renamed over the old: never half written).
    pub fn write(&self, dir: &Path) -> Result<(), MeetingError> {
        let tmp = dir.join(format!("{RECORD_JSON}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec_pretty(self).expect("serialisable"))
            .and_then(|()| std::fs::rename(&tmp, dir.join(RECORD_JSON)))
            .map_err(|e| MeetingError::disk(dir, e))
    }
}

/// A new meeting's folder under `root`, named by its start time (UTC,
/// `2026-12-04T18-30-05`; a second meeting in the same second gets `-2`).
pub fn new_meeting_dir(root: &Path) -> Result<PathBuf, MeetingError> {
    std::fs::create_dir_all(root).map_err(|e| MeetingError::disk(root, e))?;
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%S").to_string();
    for n in 1.. {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = root.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(MeetingError::disk(&dir, e)),
        }
    }
    unreachable!("some name is free")
}

/// Meetings under `root` that were never transcribed (cut off by a crash, or
/// stopped and not finished), oldest first.
pub fn unfinished(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|dir| MeetingRecord::read(dir).is_ok_and(|r| r.phase != MeetingPhase::Transcribed))
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(phase: MeetingPhase) -> MeetingRecord {
        MeetingRecord {
            started_unix_ms: 1,
            phase,
            microphone: Some("mic".into()),
            system_audio: None,
            you_ms: 0,
            others_ms: 0,
            drift_ppm: None,
            notices: Vec::new(),
        }
    }

    #[test]
    fn unfinished_meetings_are_the_ones_not_transcribed() {
        let root = tempfile::tempdir().unwrap();
        let a = new_meeting_dir(root.path()).unwrap();
        let b = new_meeting_dir(root.path()).unwrap();
        let c = new_meeting_dir(root.path()).unwrap();
        assert_ne!(a, b, "two meetings in one second get two folders");
        record(MeetingPhase::Recording).write(&a).unwrap();
        record(MeetingPhase::Transcribed).write(&b).unwrap();
        record(MeetingPhase::Recorded).write(&c).unwrap();
        std::fs::create_dir(root.path().join("not-a-meeting")).unwrap();
        assert_eq!(unfinished(root.path()), vec![a.clone(), c]);
        assert_eq!(
            MeetingRecord::read(&a).unwrap(),
            record(MeetingPhase::Recording)
        );
    }

    #[test]
    fn a_folder_without_a_record_is_not_a_meeting() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(RECORD_JSON), "{").unwrap();
        let err = MeetingRecord::read(root.path()).unwrap_err();
        assert!(err.to_string().contains("not a meeting"), "{err}");
    }
}
