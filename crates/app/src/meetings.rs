//! The Meetings page: one meeting at a time, recorded with its live
//! transcript while the app runs (utter-capture's `MeetingSession`, as `utter
//! meeting`), its transcript made when it stops; past meetings are the
//! folders of the meetings directory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use utter_capture::{MeetingNotice, MeetingSession, MeetingSources};
use utter_core::export::{self, Format};
use utter_core::meeting::{self, Channel, MeetingModels, MeetingPhase, MeetingRecord};
use utter_core::transcript::FileTranscript;
use utter_engine::{Engine, EngineConfig, Priority};
use utter_models::diarize::DiarizeOptions;
use utter_models::ModelUse;

use super::history::{EntryKind, EntryRecord};
use super::{lock, AppError, AppEvent, Shared};

/// The microphone's speaker in the app's transcripts.
const YOU: &str = "You";
/// The transcript kept beside a meeting's audio, read back by the page.
const TRANSCRIPT_JSON: &str = "transcript.json";

/// Where the meeting stands.
enum Phase {
    Idle,
    /// The model loads and the devices open (seconds); a second start waits
    /// for none of it and is refused.
    Starting,
    Recording {
        session: Box<MeetingSession>,
        paused: bool,
    },
    /// Stopped; its transcript is being made.
    Transcribing {
        dir: PathBuf,
    },
}

pub(super) struct MeetingHost {
    phase: Mutex<Phase>,
    /// Why there is no live transcript, a device lost, or why the last
    /// meeting failed: shown until the next start.
    notice: Mutex<Option<String>>,
}

impl Default for MeetingHost {
    fn default() -> Self {
        Self {
            phase: Mutex::new(Phase::Idle),
            notice: Mutex::new(None),
        }
    }
}

/// What the Meetings page shows of the meeting in progress.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MeetingStatus {
    pub state: MeetingState,
    /// The meeting's folder while one records or is transcribed.
    pub dir: Option<String>,
    pub microphone: Option<String>,
    pub system_audio: Option<String>,
    /// Something the user should know (no live transcript and why, a device
    /// that went, why the last meeting could not be transcribed).
    pub notice: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub enum MeetingState {
    Idle,
    Starting,
    Recording,
    Paused,
    Transcribing,
}

/// How loud each side of the meeting in progress is now (the RMS of its
/// last audio, 0.0–1.0): the Meetings page's two meters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MeetingLevels {
    pub you: f32,
    pub others: f32,
}

/// How often the levels go to the page while a meeting records.
const LEVELS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// A turn of a transcript, live or final.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MeetingTurn {
    pub speaker: String,
    #[ts(type = "number")]
    pub start_ms: u64,
    pub text: String,
}

/// A meeting in the meetings folder.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct MeetingSummary {
    pub dir: String,
    #[ts(type = "number")]
    pub started_unix_ms: u64,
    /// How long it recorded (the longer channel).
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Recorded, but never transcribed (cut off by a crash, or its
    /// transcription failed): [`finish`] makes the transcript.
    pub unfinished: bool,
    /// Its transcript's turns, once it has one.
    pub turns: Vec<MeetingTurn>,
    pub notices: Vec<String>,
}

impl MeetingHost {
    pub fn status(&self) -> MeetingStatus {
        let notice = lock(&self.notice).clone();
        match &*lock(&self.phase) {
            Phase::Idle => MeetingStatus {
                state: MeetingState::Idle,
                dir: None,
                microphone: None,
                system_audio: None,
                notice,
            },
            Phase::Starting => MeetingStatus {
                state: MeetingState::Starting,
                dir: None,
                microphone: None,
                system_audio: None,
                notice,
            },
            Phase::Recording { session, paused } => MeetingStatus {
                state: if *paused {
                    MeetingState::Paused
                } else {
                    MeetingState::Recording
                },
                dir: Some(session.dir().display().to_string()),
                microphone: Some(session.microphone().device.clone()),
                system_audio: Some(session.system_audio().device.clone()),
                notice,
            },
            Phase::Transcribing { dir } => MeetingStatus {
                state: MeetingState::Transcribing,
                dir: Some(dir.display().to_string()),
                microphone: None,
                system_audio: None,
                notice,
            },
        }
    }

    fn set_notice(&self, notice: Option<String>) {
        *lock(&self.notice) = notice;
    }
}

fn emit_status(shared: &Shared) {
    shared.emit(AppEvent::Meeting(shared.meetings.status()));
}

/// The models a meeting is transcribed with, as the settings want files done.
fn models(shared: &Shared) -> Result<MeetingModels, AppError> {
    let settings = shared.settings();
    let (model_name, model_path) = shared
        .store
        .resolve_speech_for(settings.model.as_deref(), ModelUse::Files)?;
    // Below the user's own work: a push-to-talk dictation during the
    // meeting (its own engine) goes first.
    let engine = Engine::start(EngineConfig {
        priority: Priority::Background,
        ..EngineConfig::new(model_path)
    })
    .map_err(|e| AppError::Meeting(e.to_string()))?;
    let speakers = match utter_models::speakers::load(&shared.store) {
        Ok(models) => Some(models),
        Err(e) => {
            tracing::info!("meetings: the others are one voice: {e}");
            None
        }
    };
    let vad = shared.store.vad()?.map(|v| shared.store.path_of(&v));
    Ok(MeetingModels {
        engine,
        model_name,
        vad,
        speakers,
        options: super::files::file_options(&settings),
    })
}

/// Moves an idle meeting host to `next`; one meeting at a time.
fn claim(shared: &Shared, next: Phase) -> Result<(), AppError> {
    let mut phase = lock(&shared.meetings.phase);
    if !matches!(*phase, Phase::Idle) {
        return Err(AppError::Meeting(
            "a meeting is already being recorded or transcribed; try again after it".into(),
        ));
    }
    *phase = next;
    Ok(())
}

/// Starts a meeting: both devices, the live transcript.
pub(super) fn start(shared: &Arc<Shared>) -> Result<MeetingStatus, AppError> {
    claim(shared, Phase::Starting)?;
    shared.meetings.set_notice(None);
    emit_status(shared);
    let started = models(shared).and_then(|models| {
        MeetingSession::start(
            &shared.paths.meetings,
            &MeetingSources::default(),
            models,
            true,
        )
        .map_err(|e| AppError::Meeting(e.to_string()))
    });
    let (session, why_not_live) = match started {
        Ok(started) => started,
        Err(e) => {
            *lock(&shared.meetings.phase) = Phase::Idle;
            emit_status(shared);
            return Err(e);
        }
    };
    shared.meetings.set_notice(why_not_live.map(|why| {
        format!(
            "No live transcript ({}); the meeting is still recorded.",
            why.0
        )
    }));
    let (lines, notices) = (session.lines().clone(), session.notices().clone());
    *lock(&shared.meetings.phase) = Phase::Recording {
        session: Box::new(session),
        paused: false,
    };
    // The live transcript and the notices reach the page as they come; the
    // thread ends when the session's channels close (at stop).
    let forward = shared.clone();
    std::thread::Builder::new()
        .name("utter-meeting-forward".into())
        .spawn(move || forward_live(&forward, &lines, &notices))
        .map_err(AppError::Thread)?;
    emit_status(shared);
    Ok(shared.meetings.status())
}

/// The meeting shortcut: starts a meeting when none runs, stops the one
/// being recorded (or paused); while one starts or is transcribed it does
/// nothing. What goes wrong is the meeting's notice, since no page asked.
pub(super) fn toggle(shared: &Arc<Shared>) {
    let result = match shared.meetings.status().state {
        MeetingState::Idle => start(shared),
        MeetingState::Recording | MeetingState::Paused => stop(shared),
        MeetingState::Starting | MeetingState::Transcribing => return,
    };
    if let Err(e) = result {
        tracing::warn!("the meeting shortcut: {e}");
        shared.meetings.set_notice(Some(e.to_string()));
        emit_status(shared);
    }
}

fn forward_live(
    shared: &Arc<Shared>,
    lines: &crossbeam_channel::Receiver<meeting::LiveLine>,
    notices: &crossbeam_channel::Receiver<MeetingNotice>,
) {
    let (mut lines, mut notices) = (lines.clone(), notices.clone());
    let mut open = 2;
    while open > 0 {
        crossbeam_channel::select! {
            recv(lines) -> line => match line {
                Ok(line) => shared.emit(AppEvent::MeetingLine(live_turn(&line))),
                Err(_) => {
                    lines = crossbeam_channel::never();
                    open -= 1;
                }
            },
            recv(notices) -> notice => match notice {
                Ok(MeetingNotice::Lost { channel, message }) => {
                    shared.meetings.set_notice(Some(format!(
                        "{} stopped ({message}); the meeting goes on without it.",
                        capitalised(&channel.to_string())
                    )));
                    emit_status(shared);
                }
                Ok(MeetingNotice::Ended) => {
                    shared
                        .meetings
                        .set_notice(Some("Both devices are gone: the meeting stopped.".into()));
                    let _ = stop(shared);
                }
                Err(_) => {
                    notices = crossbeam_channel::never();
                    open -= 1;
                }
            },
            default(LEVELS_EVERY) => {
                let levels = match &*lock(&shared.meetings.phase) {
                    Phase::Recording { session, paused: false } => Some(session.levels()),
                    _ => None,
                };
                if let Some(l) = levels {
                    shared.emit(AppEvent::MeetingLevels(MeetingLevels {
                        you: l.you,
                        others: l.others,
                    }));
                }
            },
        }
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn live_turn(line: &meeting::LiveLine) -> MeetingTurn {
    MeetingTurn {
        speaker: match line.channel {
            Channel::You => YOU.into(),
            Channel::Others => "Others".into(),
        },
        start_ms: line.start_ms,
        text: line.text.clone(),
    }
}

pub(super) fn pause(shared: &Shared, pause: bool) -> MeetingStatus {
    if let Phase::Recording { session, paused } = &mut *lock(&shared.meetings.phase) {
        if pause {
            session.pause();
        } else {
            session.resume();
        }
        *paused = pause;
    }
    emit_status(shared);
    shared.meetings.status()
}

/// Stops the meeting and makes its transcript on a thread; the page hears
/// `meeting` events (transcribing, then idle) and the list changes.
pub(super) fn stop(shared: &Arc<Shared>) -> Result<MeetingStatus, AppError> {
    let session = {
        let mut phase = lock(&shared.meetings.phase);
        match std::mem::replace(&mut *phase, Phase::Idle) {
            Phase::Recording { session, .. } => {
                *phase = Phase::Transcribing {
                    dir: session.dir().to_path_buf(),
                };
                session
            }
            other => {
                *phase = other;
                return Ok(shared.meetings.status());
            }
        }
    };
    emit_status(shared);
    let dir = session.dir().to_path_buf();
    let worker = shared.clone();
    transcribe_in_background(
        shared,
        dir,
        "The meeting was recorded but not transcribed",
        move || {
            let (stopped, last) = session.stop()?;
            for line in &last {
                worker.emit(AppEvent::MeetingLine(live_turn(line)));
            }
            Ok(stopped.transcribe(YOU, DiarizeOptions::default(), &[], &mut |_| {})?)
        },
    )?;
    Ok(shared.meetings.status())
}

/// Why a meeting's transcript was not made (its audio is kept either way).
#[derive(Debug, thiserror::Error)]
enum TranscriptFailed {
    #[error(transparent)]
    Meeting(#[from] meeting::MeetingError),
    /// The models it needs (boxed: the app's error is large).
    #[error(transparent)]
    Models(#[from] Box<AppError>),
    #[error("the transcript could not be written: {0}")]
    Keep(#[from] std::io::Error),
}

/// Makes the transcript of the meeting in `dir` on a thread (`work`), keeps
/// it beside the audio, and says why not on the page (`failed`, the reason,
/// and that the audio is kept); the meeting is idle again either way.
fn transcribe_in_background(
    shared: &Arc<Shared>,
    dir: PathBuf,
    failed: &'static str,
    work: impl FnOnce() -> Result<FileTranscript, TranscriptFailed> + Send + 'static,
) -> Result<(), AppError> {
    let worker = shared.clone();
    std::thread::Builder::new()
        .name("utter-meeting-transcript".into())
        .spawn(move || {
            let done = work().and_then(|t| {
                keep_transcript(&dir, &t)?;
                keep_in_history(&worker, &dir, &t);
                Ok(())
            });
            if let Err(e) = done {
                tracing::warn!("meeting {}: {e}", dir.display());
                worker.meetings.set_notice(Some(format!(
                    "{failed}: {e}. Its audio is kept; Transcribe it tries again."
                )));
            }
            *lock(&worker.meetings.phase) = Phase::Idle;
            emit_status(&worker);
        })
        .map_err(AppError::Thread)?;
    Ok(())
}

/// The app is quitting: a meeting being recorded is stopped with its audio
/// whole (listed as unfinished; Finish transcribes it at the next start).
pub(super) fn shutdown(shared: &Shared) {
    let phase = std::mem::replace(&mut *lock(&shared.meetings.phase), Phase::Idle);
    if let Phase::Recording { session, .. } = phase {
        if let Err(e) = session.stop() {
            tracing::warn!("the meeting could not be stopped cleanly: {e}");
        }
    }
}

/// Writes the transcript beside the audio (JSON: what the page reads back).
fn keep_transcript(
    dir: &Path,
    transcript: &utter_core::transcript::FileTranscript,
) -> std::io::Result<()> {
    let tmp = dir.join(format!("{TRANSCRIPT_JSON}.tmp"));
    std::fs::write(&tmp, export::render(transcript, Format::Json))?;
    std::fs::rename(tmp, dir.join(TRANSCRIPT_JSON))
}

/// A meeting's transcript in History too, where it is searched with
/// everything else said: one entry per meeting (its folder), each line
/// `Speaker: words`, brought up to date when it is transcribed again or a
/// speaker is renamed. History failing never loses the transcript (it is
/// kept beside the audio first); it is said in the app's status.
fn keep_in_history(shared: &Shared, dir: &Path, transcript: &FileTranscript) {
    let record = match MeetingRecord::read(dir) {
        Ok(record) => record,
        Err(e) => {
            tracing::error!("meeting {} not kept in History: {e}", dir.display());
            shared.update_status(|s| {
                s.error = Some(format!("a meeting was not kept in History: {e}"))
            });
            return;
        }
    };
    let segments = super::files::segments_of(transcript);
    let entry = EntryRecord {
        kind: EntryKind::Meeting,
        text: transcript.text_by_speaker(),
        created_ms: record.started_unix_ms as i64,
        duration_ms: record.you_ms.max(record.others_ms) as i64,
        model: transcript.model.clone(),
        language: transcript.language.clone(),
        audio_path: Some(dir.to_path_buf()),
        source_name: None,
        error: None,
        raw_text: None,
        rewrite: None,
        warning: (!transcript.warnings.is_empty()).then(|| transcript.warnings.join("; ")),
    };
    let kept = lock(&shared.history).keep_meeting(&entry, &segments);
    match kept {
        Ok(Some(_)) => shared.emit(AppEvent::HistoryChanged),
        Ok(None) => {} // deleted from History by the user: it stays out
        Err(e) => {
            tracing::error!("meeting {} not kept in History: {e}", dir.display());
            shared.update_status(|s| s.error = Some(e.to_string()));
        }
    }
}

/// At start, on a thread of its own (start is not held up): every transcribed
/// meeting that History does not list yet (held before History listed
/// meetings, or History was started anew) is added — not one the user
/// deleted from History.
pub(super) fn keep_all_in_history(shared: &Arc<Shared>) {
    let shared = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("utter-meetings-history".into())
        .spawn(move || {
            let entries = match std::fs::read_dir(&shared.paths.meetings) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
                Err(e) => {
                    tracing::warn!("past meetings not added to History: {e}");
                    return;
                }
            };
            for dir in entries.filter_map(|e| e.ok().map(|e| e.path())) {
                let transcribed = MeetingRecord::read(&dir)
                    .is_ok_and(|record| record.phase == MeetingPhase::Transcribed);
                let listed = {
                    let history = lock(&shared.history);
                    matches!(history.meeting_in(&dir), Ok(Some(_)))
                        || history.meeting_dismissed(&dir).unwrap_or(true)
                };
                if !transcribed || listed {
                    continue;
                }
                let transcript = std::fs::read(dir.join(TRANSCRIPT_JSON))
                    .ok()
                    .and_then(|bytes| transcript_from_json(&bytes));
                match transcript {
                    Some(transcript) => keep_in_history(&shared, &dir, &transcript),
                    None => tracing::warn!(
                        "meeting {}: its transcript cannot be read; not added to History",
                        dir.display()
                    ),
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("past meetings not added to History: {e}");
    }
}

/// The meetings folder's meetings, newest first.
pub(super) fn list(shared: &Shared) -> Vec<MeetingSummary> {
    let Ok(entries) = std::fs::read_dir(&shared.paths.meetings) else {
        return Vec::new();
    };
    let mut all: Vec<MeetingSummary> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|dir| {
            let record = MeetingRecord::read(&dir).ok()?;
            Some(summary(&dir, &record))
        })
        .collect();
    all.sort_by_key(|m| std::cmp::Reverse(m.started_unix_ms));
    all
}

fn summary(dir: &Path, record: &MeetingRecord) -> MeetingSummary {
    MeetingSummary {
        dir: dir.display().to_string(),
        started_unix_ms: record.started_unix_ms,
        duration_ms: record.you_ms.max(record.others_ms),
        unfinished: record.phase != MeetingPhase::Transcribed,
        turns: read_turns(dir).unwrap_or_default(),
        notices: record.notices.clone(),
    }
}

/// The turns of the transcript kept in `dir`, consecutive segments of one
/// speaker joined.
fn read_turns(dir: &Path) -> Option<Vec<MeetingTurn>> {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(TRANSCRIPT_JSON)).ok()?).ok()?;
    let mut turns: Vec<MeetingTurn> = Vec::new();
    for s in json["segments"].as_array()? {
        let speaker = s["speaker"].as_str().unwrap_or("").to_string();
        let text = s["text"].as_str().unwrap_or("").trim().to_string();
        match turns.last_mut() {
            Some(last) if last.speaker == speaker => {
                last.text.push(' ');
                last.text.push_str(&text);
            }
            _ => turns.push(MeetingTurn {
                speaker,
                start_ms: s["start_ms"].as_u64().unwrap_or(0),
                text,
            }),
        }
    }
    Some(turns)
}

/// A meeting of the list, by folder (only folders inside the meetings
/// directory: the page passes back what it was given).
fn meeting_dir(shared: &Shared, dir: &str) -> Result<PathBuf, AppError> {
    let dir = PathBuf::from(dir);
    if dir.parent() != Some(shared.paths.meetings.as_path()) {
        return Err(AppError::Meeting(format!(
            "{} is not a meeting of this app",
            dir.display()
        )));
    }
    MeetingRecord::read(&dir).map_err(|e| AppError::Meeting(e.to_string()))?;
    Ok(dir)
}

/// Transcribes a meeting that was cut off (or whose transcription failed),
/// on a thread, as a stop does.
pub(super) fn finish(shared: &Arc<Shared>, dir: &str) -> Result<MeetingStatus, AppError> {
    let dir = meeting_dir(shared, dir)?;
    claim(shared, Phase::Transcribing { dir: dir.clone() })?;
    shared.meetings.set_notice(None);
    emit_status(shared);
    let worker = shared.clone();
    let meeting = dir.clone();
    transcribe_in_background(
        shared,
        dir,
        "The meeting could not be transcribed",
        move || {
            let models = models(&worker).map_err(Box::new)?;
            Ok(meeting::finish_meeting(
                &meeting,
                models,
                YOU,
                DiarizeOptions::default(),
                &[],
                &mut |_| {},
            )?)
        },
    )?;
    Ok(shared.meetings.status())
}

/// A past meeting's two sides mixed, as WAV bytes for the page's player.
pub(super) fn audio(shared: &Shared, dir: &str) -> Result<Vec<u8>, AppError> {
    let dir = meeting_dir(shared, dir)?;
    meeting::playback::mixed_wav(&dir).map_err(|e| AppError::Meeting(e.to_string()))
}

/// Writes a meeting's transcript as `format` to `path`.
pub(super) fn export(
    shared: &Shared,
    dir: &str,
    format: Format,
    path: &Path,
) -> Result<(), AppError> {
    let dir = meeting_dir(shared, dir)?;
    let text = std::fs::read(dir.join(TRANSCRIPT_JSON))
        .map_err(AppError::read(&dir.join(TRANSCRIPT_JSON)))?;
    let transcript = transcript_from_json(&text).ok_or_else(|| {
        AppError::Meeting(format!("{}: its transcript cannot be read", dir.display()))
    })?;
    std::fs::write(path, export::render(&transcript, format)).map_err(AppError::write(path))
}

/// Renames the speaker `from` of a meeting's kept transcript to `to` (its
/// turns, and every export after); giving two speakers one name merges
/// them, as when the diarization split one person in two. Returns the
/// meeting as the page lists it.
pub(super) fn rename_speaker(
    shared: &Shared,
    dir: &str,
    from: &str,
    to: &str,
) -> Result<MeetingSummary, AppError> {
    let dir = meeting_dir(shared, dir)?;
    let to = to.trim();
    if to.is_empty() {
        return Err(AppError::Meeting("a speaker's name cannot be empty".into()));
    }
    let kept = dir.join(TRANSCRIPT_JSON);
    let text = std::fs::read(&kept).map_err(AppError::read(&kept))?;
    let mut transcript = transcript_from_json(&text).ok_or_else(|| {
        AppError::Meeting(format!("{}: its transcript cannot be read", dir.display()))
    })?;
    let labels = transcript
        .speakers
        .as_mut()
        .ok_or_else(|| AppError::Meeting("this transcript says nobody's name".into()))?;
    let Some(renamed) = labels.names.iter().position(|name| name == from) else {
        return Err(AppError::Meeting(format!(
            "nobody is called {from} in this meeting"
        )));
    };
    match labels.names.iter().position(|name| name == to) {
        Some(kept) if kept != renamed => merge_speakers(labels, renamed, kept),
        _ => labels.names[renamed] = to.to_string(),
    }
    keep_transcript(&dir, &transcript).map_err(AppError::write(&kept))?;
    keep_in_history(shared, &dir, &transcript);
    let record = MeetingRecord::read(&dir).map_err(|e| AppError::Meeting(e.to_string()))?;
    Ok(summary(&dir, &record))
}

/// Gives speaker `gone`'s segments to speaker `kept` and drops `gone`'s name.
fn merge_speakers(labels: &mut utter_core::transcript::SpeakerLabels, gone: usize, kept: usize) {
    for who in labels.of_segment.iter_mut().flatten() {
        if *who == gone {
            *who = kept;
        }
        if *who > gone {
            *who -= 1;
        }
    }
    labels.names.remove(gone);
}

/// A transcript back from its JSON export (segments with speakers).
fn transcript_from_json(bytes: &[u8]) -> Option<utter_core::transcript::FileTranscript> {
    let json: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let names: Vec<String> = json["speakers"]
        .as_array()?
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    let mut t = utter_core::transcript::FileTranscript {
        model: json["model"].as_str().unwrap_or_default().into(),
        duration_ms: json["duration_ms"].as_i64().unwrap_or(0),
        language: json["language"].as_str().map(str::to_string),
        ..Default::default()
    };
    let mut of_segment = Vec::new();
    for s in json["segments"].as_array()? {
        t.segments.push(utter_engine::TimedText {
            start_ms: s["start_ms"].as_i64()?,
            end_ms: s["end_ms"].as_i64()?,
            text: s["text"].as_str()?.to_string(),
        });
        of_segment.push(
            s["speaker"]
                .as_str()
                .and_then(|n| names.iter().position(|x| x == n)),
        );
    }
    t.speakers = Some(utter_core::transcript::SpeakerLabels { names, of_segment });
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_two_speakers_gives_the_second_one_s_segments_to_the_first() {
        let mut labels = utter_core::transcript::SpeakerLabels {
            names: vec!["Speaker 1".into(), "You".into(), "Speaker 2".into()],
            of_segment: vec![Some(0), Some(2), Some(1), None, Some(2)],
        };
        merge_speakers(&mut labels, 2, 0);
        assert_eq!(labels.names, ["Speaker 1", "You"]);
        assert_eq!(
            labels.of_segment,
            [Some(0), Some(0), Some(1), None, Some(0)]
        );
        merge_speakers(&mut labels, 0, 1);
        assert_eq!(labels.names, ["You"]);
        assert_eq!(
            labels.of_segment,
            [Some(0), Some(0), Some(0), None, Some(0)]
        );
    }

    #[test]
    fn a_kept_transcript_reads_back_the_same() {
        let mut t = utter_core::transcript::FileTranscript {
            model: "m".into(),
            duration_ms: 3_000,
            ..Default::default()
        };
        for (i, text) in ["Hello?", "Hi.", "Yes."].iter().enumerate() {
            t.segments.push(utter_engine::TimedText {
                start_ms: i as i64 * 1_000,
                end_ms: i as i64 * 1_000 + 900,
                text: text.to_string(),
            });
        }
        t.speakers = Some(utter_core::transcript::SpeakerLabels {
            names: vec!["Speaker 1".into(), "You".into()],
            of_segment: vec![Some(0), Some(1), Some(1)],
        });
        let back = transcript_from_json(export::render(&t, Format::Json).as_bytes()).unwrap();
        for format in [Format::Md, Format::Srt, Format::Vtt, Format::Json] {
            assert_eq!(
                export::render(&back, format),
                export::render(&t, format),
                "{format:?}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        keep_transcript(dir.path(), &t).unwrap();
        let turns = read_turns(dir.path()).unwrap();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[1].text, "Hi. Yes.");
        assert_eq!(
            (turns[1].speaker.as_str(), turns[1].start_ms),
            ("You", 1_000)
        );
    }
}
