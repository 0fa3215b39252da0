//! A meeting being recorded, the same for every front end: the recorder
//! (the microphone and the system audio) and the live transcript started
//! together and stopped together; the final pass is utter-core's
//! (`meeting::finish`).

use std::path::Path;

use crossbeam_channel::{never, Receiver};
use utter_core::meeting::finish::{
    live_transcriber, FinalPass, MeetingModels, NoLiveTranscript, StoppedMeeting,
};
use utter_core::meeting::{new_meeting_dir, LiveLine, LiveTranscriber, MeetingError};
use utter_engine::Engine;

use crate::meeting_recorder::{MeetingLevels, MeetingNotice, MeetingRecorder, MeetingSources};
use crate::microphone::CaptureInfo;

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
    pass: FinalPass,
}

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
        let (engine, pass) = models.split();
        let (live, why_not) = match (&pass.vad, live) {
            (_, false) => (Live::Off(Box::new(engine)), None),
            (None, true) => (
                Live::Off(Box::new(engine)),
                Some(NoLiveTranscript("no voice detector is installed".into())),
            ),
            (Some(vad), true) => match live_transcriber(engine, vad, &pass.options) {
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
                pass,
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
        Ok((StoppedMeeting::new(dir, record, engine, self.pass), last))
    }
}
