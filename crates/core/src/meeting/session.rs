//! A meeting from start to transcript, the same for every front end: the
//! recorder and the live transcript started together, stopped together, and
//! the final pass with the models a user has.

use std::path::{Path, PathBuf};

use crossbeam_channel::{never, Receiver};
use utter_models::diarize::{DiarizeOptions, SpeakerModels};

use super::live::{LiveConfig, LiveLine, LiveTranscriber};
use super::recorder::{MeetingLevels, MeetingNotice, MeetingRecorder, MeetingSources};
use super::transcribe::{transcribe_meeting, MeetingTranscription};
use super::{new_meeting_dir, MeetingError, MeetingRecord};
use crate::audio::capture::CaptureInfo;
use crate::engine::Engine;
use crate::transcribe::FileOptions;
use crate::transcript::FileTranscript;
use crate::vad::SpeechDetector;

/// What a meeting is transcribed with.
pub struct MeetingModels {
    pub engine: Engine,
    pub model_name: String,
    /// The voice detector's model; `None`: no live transcript, fixed windows at the end.
    pub vad: Option<PathBuf>,
    /// `None`: the others are one voice, "Others".
    pub speakers: Option<SpeakerModels>,
    pub options: FileOptions,
}

/// Whether the meeting is transcribed while it goes on.
enum Live {
    On(LiveTranscriber),
    /// No live transcript: the engine waits for the end.
    Off(Box<Engine>),
}

/// A meeting being recorded.
pub struct MeetingSession {
    recorder: MeetingRecorder,
    live: Live,
    lines: Receiver<LiveLine>,
    model_name: String,
    vad: Option<PathBuf>,
    speakers: Option<SpeakerModels>,
    options: FileOptions,
}

/// Why there is no live transcript (the meeting is recorded all the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoLiveTranscript(pub String);

impl MeetingSession {
    /// Starts recording into a new folder under `root`, with the live
    /// transcript when `live` (and a voice detector) allows; the second value
    /// says why there is none when it was wanted.
    pub fn start(
        root: &Path,
        sources: &MeetingSources,
        models: MeetingModels,
        live: bool,
    ) -> Result<(Self, Option<NoLiveTranscript>), MeetingError> {
        let MeetingModels {
            engine,
            model_name,
            vad,
            speakers,
            options,
        } = models;
        let (live, why_not) = match (&vad, live) {
            (_, false) => (Live::Off(Box::new(engine)), None),
            (None, true) => (
                Live::Off(Box::new(engine)),
                Some(NoLiveTranscript("no voice detector is installed".into())),
            ),
            (Some(vad), true) => match live_transcriber(engine, vad, &options) {
                Ok(live) => (Live::On(live), None),
                Err((engine, why)) => (Live::Off(engine), Some(why)),
            },
        };
        let dir = new_meeting_dir(root)?;
        let tap = match &live {
            Live::On(live) => Some(live.audio()),
            Live::Off(_) => None,
        };
        let recorder = match MeetingRecorder::start(&dir, sources, tap) {
            Ok(r) => r,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let lines = match &live {
            Live::On(live) => live.lines().clone(),
            Live::Off(_) => never(),
        };
        Ok((
            Self {
                recorder,
                live,
                lines,
                model_name,
                vad,
                speakers,
                options,
            },
            why_not,
        ))
    }

    pub fn dir(&self) -> &Path {
        self.recorder.dir()
    }

    pub fn microphone(&self) -> &CaptureInfo {
        &self.recorder.microphone
    }

    pub fn system_audio(&self) -> &CaptureInfo {
        &self.recorder.system_audio
    }

    /// The live transcript's turns as they are transcribed.
    pub fn lines(&self) -> &Receiver<LiveLine> {
        &self.lines
    }

    pub fn notices(&self) -> &Receiver<MeetingNotice> {
        self.recorder.notices()
    }

    /// How loud each side is now (level meters).
    pub fn levels(&self) -> MeetingLevels {
        self.recorder.levels()
    }

    pub fn pause(&self) {
        self.recorder.pause();
    }

    pub fn resume(&self) {
        self.recorder.resume();
    }

    /// Stops recording; the live transcript's last turns come with the
    /// meeting, ready for its final pass.
    pub fn stop(self) -> Result<(StoppedMeeting, Vec<LiveLine>), MeetingError> {
        let dir = self.recorder.dir().to_path_buf();
        let record = self.recorder.stop()?;
        let (last, engine) = match self.live {
            Live::Off(engine) => (Vec::new(), Some(*engine)),
            Live::On(live) => live.finish(),
        };
        Ok((
            StoppedMeeting {
                dir,
                record,
                engine,
                model_name: self.model_name,
                vad: self.vad,
                speakers: self.speakers,
                options: self.options,
            },
            last,
        ))
    }
}

fn live_transcriber(
    engine: Engine,
    vad: &Path,
    options: &FileOptions,
) -> Result<LiveTranscriber, (Box<Engine>, NoLiveTranscript)> {
    let detectors = SpeechDetector::load(vad).and_then(|you| Ok((you, SpeechDetector::load(vad)?)));
    let (you, others) = match detectors {
        Ok(d) => d,
        Err(e) => return Err((Box::new(engine), NoLiveTranscript(e.to_string()))),
    };
    LiveTranscriber::start(LiveConfig {
        engine,
        you,
        others,
        language: options.language.clone(),
        vocabulary: options.vocabulary.clone(),
        rules: options.rules.clone(),
    })
    .map_err(|(e, config)| {
        (
            Box::new(config.engine),
            NoLiveTranscript(format!("cannot start its thread: {e}")),
        )
    })
}

/// A meeting recorded and not transcribed yet.
pub struct StoppedMeeting {
    pub dir: PathBuf,
    pub record: MeetingRecord,
    /// `None` when the live transcript's thread failed: the model must be
    /// loaded again ([`finish_meeting`] with new models).
    engine: Option<Engine>,
    model_name: String,
    vad: Option<PathBuf>,
    speakers: Option<SpeakerModels>,
    options: FileOptions,
}

impl StoppedMeeting {
    /// The final transcript, with who said what. `your_name` labels the
    /// microphone; `others` names the others in the order they first speak.
    pub fn transcribe(
        self,
        your_name: &str,
        diarize: DiarizeOptions,
        others: &[String],
        stage: &mut dyn FnMut(&str),
    ) -> Result<FileTranscript, MeetingError> {
        let Some(engine) = self.engine else {
            return Err(MeetingError::LiveTranscriptFailed(self.dir));
        };
        finish_meeting(
            &self.dir,
            MeetingModels {
                engine,
                model_name: self.model_name,
                vad: self.vad,
                speakers: self.speakers,
                options: self.options,
            },
            your_name,
            diarize,
            others,
            stage,
        )
    }
}

/// The final transcript of the meeting in `dir` (just stopped, or cut off
/// by a crash), its others named in the order they first speak.
pub fn finish_meeting(
    dir: &Path,
    models: MeetingModels,
    your_name: &str,
    diarize: DiarizeOptions,
    others: &[String],
    stage: &mut dyn FnMut(&str),
) -> Result<FileTranscript, MeetingError> {
    let mut detector = match &models.vad {
        Some(vad) => Some(SpeechDetector::load(vad).map_err(MeetingError::Engine)?),
        None => None,
    };
    let engines = [models.engine];
    let how = MeetingTranscription {
        engines: &engines,
        model_name: &models.model_name,
        options: &models.options,
        detector: detector.as_mut(),
        speakers: models.speakers.as_ref(),
        diarize,
        your_name,
    };
    let mut transcript = transcribe_meeting(dir, how, stage)?;
    name_the_others(&mut transcript, your_name, others);
    Ok(transcript)
}

/// Gives the others `names` in the order they first speak; yours stays.
pub fn name_the_others(transcript: &mut FileTranscript, your_name: &str, names: &[String]) {
    let Some(labels) = transcript.speakers.as_mut() else {
        return;
    };
    let mut given = names.iter();
    let names: Vec<String> = labels
        .names
        .iter()
        .map(|label| {
            if label == your_name {
                label.clone()
            } else {
                given.next().cloned().unwrap_or_default()
            }
        })
        .collect();
    labels.rename(&names);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::SpeakerLabels;

    #[test]
    fn the_others_are_named_around_you() {
        let mut t = FileTranscript {
            speakers: Some(SpeakerLabels {
                names: vec!["Speaker 1".into(), "You".into(), "Speaker 2".into()],
                of_segment: vec![],
            }),
            ..Default::default()
        };
        name_the_others(&mut t, "You", &["Anna".into()]);
        assert_eq!(t.speakers.unwrap().names, ["Anna", "You", "Speaker 2"]);
    }
}
