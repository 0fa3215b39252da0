//! The file queue: files dropped on the window (or picked) are transcribed
//! one after another on a worker thread, each with progress, cancel and a
//! history entry when done.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{lock, AppError, AppEvent, Shared};
use crate::history::{EntryKind, EntryRecord, Segment};
use utter_core::transcribe::{
    diarize_file, speaker_spans, transcribe_file, FileOptions, Segmentation,
};
use utter_core::transcript::FileTranscript;
use utter_engine::{Engine, EngineNotice};
use utter_models::diarize::{DiarizeOptions, SpeakerTurn};
use utter_models::load::{load_models, EngineOptions, LoadError, LoadedModels};
use utter_models::ModelUse;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct FileJob {
    pub id: u64,
    pub path: String,
    pub name: String,
    pub state: JobState,
    pub fraction: f32,
    pub error: Option<String>,
    pub duration_ms: Option<i64>,
    pub segments: Vec<Segment>,
    pub history_id: Option<i64>,
    /// Who speaks each segment is told apart (the speaker models): the
    /// segments then carry their speaker.
    pub speakers: bool,
}

struct Slot {
    job: FileJob,
    transcript: Option<FileTranscript>,
}

#[derive(Default)]
struct Inner {
    slots: Vec<Slot>,
    next_id: u64,
    worker_running: bool,
    /// The engine of the job in progress, so a cancel can interrupt it.
    engine: Option<Arc<Engine>>,
}

#[derive(Default)]
pub(super) struct FileQueue {
    inner: Mutex<Inner>,
}

impl FileQueue {
    pub fn jobs(&self) -> Vec<FileJob> {
        lock(&self.inner)
            .slots
            .iter()
            .map(|s| s.job.clone())
            .collect()
    }

    pub fn busy(&self) -> bool {
        lock(&self.inner)
            .slots
            .iter()
            .any(|s| matches!(s.job.state, JobState::Queued | JobState::Running))
    }

    pub fn transcript(&self, id: u64) -> Option<FileTranscript> {
        lock(&self.inner)
            .slots
            .iter()
            .find(|s| s.job.id == id)
            .and_then(|s| s.transcript.clone())
    }

    pub fn clear_finished(&self) {
        lock(&self.inner)
            .slots
            .retain(|s| matches!(s.job.state, JobState::Queued | JobState::Running));
    }

    pub fn cancel_all(&self) {
        let mut inner = lock(&self.inner);
        for s in &mut inner.slots {
            if matches!(s.job.state, JobState::Queued | JobState::Running) {
                s.job.state = JobState::Cancelled;
            }
        }
        if let Some(e) = &inner.engine {
            e.cancel_submitted();
        }
    }

    /// Applies `change` to job `id` and returns the job as it now is.
    fn update(&self, id: u64, change: impl FnOnce(&mut Slot)) -> Option<FileJob> {
        let mut inner = lock(&self.inner);
        let slot = inner.slots.iter_mut().find(|s| s.job.id == id)?;
        change(slot);
        Some(slot.job.clone())
    }

    fn is_cancelled(&self, id: u64) -> bool {
        lock(&self.inner)
            .slots
            .iter()
            .any(|s| s.job.id == id && s.job.state == JobState::Cancelled)
    }
}

pub(super) fn enqueue(shared: &Arc<Shared>, paths: &[PathBuf], speakers: bool) -> Vec<FileJob> {
    let (jobs, start_worker) = {
        let mut inner = lock(&shared.files.inner);
        let mut jobs = vec![];
        for path in paths {
            inner.next_id += 1;
            let job = FileJob {
                id: inner.next_id,
                path: path.display().to_string(),
                name: path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                ),
                state: JobState::Queued,
                fraction: 0.0,
                error: None,
                duration_ms: None,
                segments: vec![],
                history_id: None,
                speakers,
            };
            inner.slots.push(Slot {
                job: job.clone(),
                transcript: None,
            });
            jobs.push(job);
        }
        let start = !inner.worker_running && !jobs.is_empty();
        inner.worker_running |= start;
        (jobs, start)
    };
    for job in &jobs {
        shared.emit(AppEvent::FileJob(job.clone()));
    }
    shared.update_status(|_| {});
    if start_worker {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("utter-files".into())
            .spawn(move || worker(&shared))
            .expect("spawn the file worker");
    }
    jobs
}

pub(super) fn cancel(shared: &Shared, id: u64) {
    let job = shared.files.update(id, |s| {
        if matches!(s.job.state, JobState::Queued | JobState::Running) {
            s.job.state = JobState::Cancelled;
        }
    });
    if let Some(job) = job {
        if let Some(e) = &lock(&shared.files.inner).engine {
            e.cancel_submitted();
        }
        shared.emit(AppEvent::FileJob(job));
    }
    shared.update_status(|_| {});
}

/// The models a batch of file jobs runs on.
struct BatchModels {
    /// The settings' choice they were loaded for (`None`: the default).
    requested: Option<String>,
    engine: Arc<Engine>,
    vad: utter_engine::vad::SpeechDetector,
    model_name: String,
}

/// Takes queued jobs one by one until none is left. The model stays loaded
/// between jobs of one batch and is dropped when the queue runs dry.
fn worker(shared: &Arc<Shared>) {
    let mut loaded: Option<BatchModels> = None;
    loop {
        let next = {
            let mut inner = lock(&shared.files.inner);
            let next = inner
                .slots
                .iter_mut()
                .find(|s| s.job.state == JobState::Queued)
                .map(|s| {
                    s.job.state = JobState::Running;
                    s.job.clone()
                });
            if next.is_none() {
                inner.worker_running = false;
                inner.engine = None;
            }
            next
        };
        let Some(job) = next else {
            break;
        };
        shared.emit(AppEvent::FileJob(job.clone()));
        shared.update_status(|_| {});

        let settings = shared.settings();
        if loaded
            .as_ref()
            .is_none_or(|l| l.requested != settings.model)
        {
            loaded = None; // free the old model before loading the new one
            match load_file_models(shared, settings.model.as_deref()) {
                Ok(LoadedModels {
                    model_name,
                    engine,
                    vad,
                }) => {
                    loaded = Some(BatchModels {
                        requested: settings.model.clone(),
                        engine: Arc::new(engine),
                        vad,
                        model_name,
                    })
                }
                Err(failure) => {
                    finish(shared, job.id, Err(failure.into()));
                    continue;
                }
            }
        }
        let BatchModels {
            engine,
            vad,
            model_name,
            ..
        } = loaded.as_mut().expect("loaded above");
        lock(&shared.files.inner).engine = Some(engine.clone());
        let result = run_job(
            shared,
            &job,
            engine,
            vad,
            model_name,
            file_options(&settings),
        );
        lock(&shared.files.inner).engine = None;
        tell_engine_notices(shared, engine);
        finish(shared, job.id, result);
    }
    shared.update_status(|_| {});
}

/// How the settings want files transcribed: language, vocabulary, text rules.
pub(super) fn file_options(settings: &utter_core::settings::Settings) -> FileOptions {
    FileOptions {
        language: settings.engine_language(),
        vocabulary: settings.vocabulary.clone(),
        rules: utter_desktop::setup::text_rules(settings).unwrap_or_default(),
        limits: utter_core::audio::AudioLimits::minutes(settings.max_audio_minutes),
        ..FileOptions::default()
    }
}

fn run_job(
    shared: &Shared,
    job: &FileJob,
    engine: &Arc<Engine>,
    vad: &mut utter_engine::vad::SpeechDetector,
    model_name: &str,
    options: FileOptions,
) -> Result<FileTranscript, AppError> {
    let path = Path::new(&job.path);
    let duration_ms =
        utter_core::audio::decode::probe_duration_secs(path).map(|s| (s * 1000.0) as i64);
    let report = |fraction: f32| {
        if let Some(job) = shared.files.update(job.id, |s| {
            s.job.fraction = fraction;
            s.job.duration_ms = duration_ms;
        }) {
            shared.emit(AppEvent::FileJob(job));
        }
    };
    // With speakers: who spoke when first (the first half of the progress
    // bar), then each speaker's spans transcribed on their own.
    let spans = if job.speakers {
        let mut last_report = Instant::now();
        Some(speakers_of(shared, path, &mut |done| {
            if last_report.elapsed() >= Duration::from_millis(100) {
                last_report = Instant::now();
                report(done * 0.5);
            }
            !shared.files.is_cancelled(job.id)
        })?)
    } else {
        None
    };
    let (segmentation, share) = match &spans {
        Some(spans) => (Segmentation::Turns(spans), (0.5, 0.5)),
        None => (Segmentation::Vad(vad), (0.0, 1.0)),
    };
    let mut last_report = Instant::now();
    let result = transcribe_file(
        std::slice::from_ref(engine.as_ref()),
        segmentation,
        path,
        model_name,
        &options,
        |p| {
            if shared.files.is_cancelled(job.id) {
                engine.cancel_submitted(); // every further batch stops at once
                return;
            }
            if last_report.elapsed() < Duration::from_millis(100) {
                return;
            }
            last_report = Instant::now();
            let done = duration_ms.filter(|d| *d > 0).map_or(0.0, |d| {
                (p.transcribed_ms as f32 / d as f32).clamp(0.0, 0.99)
            });
            report(share.0 + done * share.1);
        },
    );
    // A file cut off part-way is a transcript with a warning, not an error.
    Ok(result?)
}

/// Who speaks when in `path`, as spans to transcribe one by one
/// (`progress` is told the share done; `false` stops it).
fn speakers_of(
    shared: &Shared,
    path: &Path,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<SpeakerTurn>, AppError> {
    let models = utter_models::speakers::load(&shared.store)?;
    let turns = diarize_file(&models, path, &DiarizeOptions::default(), progress)?;
    Ok(speaker_spans(&turns))
}

fn finish(shared: &Shared, id: u64, result: Result<FileTranscript, AppError>) {
    if shared.files.is_cancelled(id) {
        shared.update_status(|_| {});
        return;
    }
    let job = match result {
        Ok(t) => {
            let segments = segments_of(&t);
            let record = EntryRecord {
                kind: EntryKind::File,
                // A line per speaker turn, where the speakers were told apart.
                text: t.text_by_speaker(),
                created_ms: utter_core::dictation::record_log::unix_ms() as i64,
                duration_ms: t.duration_ms,
                model: t.model.clone(),
                language: t.language.clone(),
                audio_path: Some(t.file.clone()),
                source_name: t.file.file_name().map(|n| n.to_string_lossy().into_owned()),
                error: None,
                raw_text: t.raw_text(),
                rewrite: None,
                // Speech left out, a file cut short: listed with the entry.
                warning: (!t.warnings.is_empty()).then(|| t.warnings.join("; ")),
            };
            let entry = shared.add_history(&record, &segments);
            shared.files.update(id, |s| {
                s.job.state = JobState::Done;
                s.job.fraction = 1.0;
                s.job.duration_ms = Some(t.duration_ms);
                s.job.segments = segments;
                s.job.history_id = entry.map(|e| e.id);
                s.job.error = (!t.warnings.is_empty()).then(|| t.warnings.join("; "));
                s.transcript = Some(t);
            })
        }
        Err(e) => shared.files.update(id, |s| {
            s.job.state = JobState::Failed;
            s.job.error = Some(e.to_string());
        }),
    };
    if let Some(job) = job {
        shared.emit(AppEvent::FileJob(job));
    }
    shared.update_status(|_| {});
}

pub(super) fn segments_of(t: &FileTranscript) -> Vec<Segment> {
    t.segments
        .iter()
        .enumerate()
        .map(|(i, s)| Segment {
            start_ms: s.start_ms,
            end_ms: s.end_ms,
            text: s.text.trim().to_string(),
            speaker: t.speaker_of(i).map(str::to_string),
        })
        .collect()
}

/// Restarts are logged; landing on the CPU is shown once, until dismissed.
fn tell_engine_notices(shared: &Shared, engine: &Engine) {
    for notice in engine.notices() {
        tracing::warn!("file transcription: {notice}");
        if matches!(
            notice,
            EngineNotice::FellBackToCpu { .. } | EngineNotice::LoadedOnCpu { .. }
        ) {
            shared.update_status(|s| s.notice = Some(notice.to_string()));
        }
    }
}

/// A file job's engine lives only as long as its queue: no idle unload.
fn load_file_models(shared: &Shared, model: Option<&str>) -> Result<LoadedModels, LoadError> {
    load_models(
        &shared.store,
        model,
        ModelUse::Files,
        EngineOptions::default(),
    )
}

/// One transcription outside the queue (history retry), with its own
/// engine; with `speakers`, each segment labelled with who speaks it.
pub(super) fn transcribe_once(
    shared: &Shared,
    path: &Path,
    model: Option<&str>,
    speakers: bool,
) -> Result<FileTranscript, AppError> {
    let LoadedModels {
        model_name,
        engine,
        mut vad,
    } = load_file_models(shared, model)?;
    let options = file_options(&shared.settings());
    let spans = if speakers {
        Some(speakers_of(shared, path, &mut |_| true)?)
    } else {
        None
    };
    let segmentation = match &spans {
        Some(spans) => Segmentation::Turns(spans),
        None => Segmentation::Vad(&mut vad),
    };
    Ok(transcribe_file(
        std::slice::from_ref(&engine),
        segmentation,
        path,
        &model_name,
        &options,
        |_| {},
    )?)
}
