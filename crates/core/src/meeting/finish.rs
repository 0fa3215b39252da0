//! A recorded meeting's last steps, the same for every front end: the live
//! transcript's start (or why there is none) and the final pass with the
//! models a user has. The recording itself (the microphone and the system
//! audio) is utter-capture's `MeetingSession`.

use std::path::{Path, PathBuf};

use utter_engine::vad::SpeechDetector;
use utter_engine::Engine;
use utter_models::diarize::{DiarizeOptions, SpeakerModels};

use super::live::{LiveConfig, LiveTranscriber};
use super::transcribe::{transcribe_meeting, MeetingTranscription};
use super::{MeetingError, MeetingRecord};
use crate::transcribe::FileOptions;
use crate::transcript::FileTranscript;

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

/// What a meeting's final pass needs besides the engine (which the live
/// transcript holds while the meeting is recorded).
pub struct FinalPass {
    pub model_name: String,
    pub vad: Option<PathBuf>,
    pub speakers: Option<SpeakerModels>,
    pub options: FileOptions,
}

impl MeetingModels {
    pub fn split(self) -> (Engine, FinalPass) {
        let Self {
            engine,
            model_name,
            vad,
            speakers,
            options,
        } = self;
        let pass = FinalPass {
            model_name,
            vad,
            speakers,
            options,
        };
        (engine, pass)
    }
}

/// Why there is no live transcript (the meeting is recorded all the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoLiveTranscript(pub String);

/// The live transcript of a meeting about to be recorded; on failure the
/// engine comes back with why, and the meeting is recorded without one.
pub fn live_transcriber(
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
    /// A meeting whose recording just stopped. `engine` is `None` when the
    /// live transcript's thread failed with it.
    pub fn new(
        dir: PathBuf,
        record: MeetingRecord,
        engine: Option<Engine>,
        models: FinalPass,
    ) -> Self {
        let FinalPass {
            model_name,
            vad,
            speakers,
            options,
        } = models;
        Self {
            dir,
            record,
            engine,
            model_name,
            vad,
            speakers,
            options,
        }
    }

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
