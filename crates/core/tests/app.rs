//! The desktop app's core (`utter_core::app`) with the real models, a real
//! SQLite file and real speech: what the UI's commands do, minus the window.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver};
use utter_core::app::{App, AppEvent, AppState, FileJob, JobState, Paths};
use utter_core::export::Format;
use utter_core::platform::MainThread;
use utter_core::settings::Settings;
use utter_core::text::word_error_rate;

struct Fixture {
    _dir: tempfile::TempDir,
    paths: Paths,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        settings: dir.path().join("config/settings.json"),
        history: dir.path().join("data/history.sqlite3"),
        recordings: dir.path().join("data/recordings"),
        models: common::store().dir().to_path_buf(),
        cache: dir.path().join("cache"),
    };
    Fixture { _dir: dir, paths }
}

fn start(paths: &Paths) -> (App, Receiver<AppEvent>) {
    let (tx, rx) = unbounded();
    let app = App::start(paths.clone(), MainThread::dedicated(), move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    (app, rx)
}

/// Waits for the service to get past loading (Idle, or Error where this
/// environment has no X display for global hotkeys).
fn wait_loaded(app: &App) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.status().state == AppState::Loading {
        assert!(
            Instant::now() < deadline,
            "still loading: {:?}",
            app.status()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_job(rx: &Receiver<AppEvent>, id: u64, until: impl Fn(&FileJob) -> bool) -> FileJob {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(AppEvent::FileJob(job)) if job.id == id && until(&job) => return job,
            Ok(_) => {}
            Err(e) => panic!("job {id}: no matching event: {e}"),
        }
    }
}

#[test]
fn dropped_file_is_transcribed_with_progress_kept_in_history_and_exported() {
    let f = fixture();
    let (app, rx) = start(&f.paths);
    wait_loaded(&app);
    assert_eq!(app.status().model.as_deref(), Some("whisper-tiny.en"));

    let clips = common::librivox_clips();
    let (clip, truth) = &clips[0];
    let jobs = app.transcribe_files(std::slice::from_ref(clip));
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].state, JobState::Queued);
    let done = wait_job(&rx, jobs[0].id, |j| {
        matches!(j.state, JobState::Done | JobState::Failed)
    });
    assert_eq!(done.state, JobState::Done, "{:?}", done.error);
    assert_eq!(done.fraction, 1.0);
    let text: Vec<&str> = done.segments.iter().map(|s| s.text.as_str()).collect();
    let wer = word_error_rate(truth, &text.join(" "));
    assert!(wer <= 0.15, "WER {wer}: {text:?}");
    assert!(done
        .segments
        .windows(2)
        .all(|w| w[0].start_ms <= w[1].start_ms));

    // In the history, findable by its file name, with segments for the transcript view.
    let found = app.history(Some(&done.name), 10, 0).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(Some(found[0].id), done.history_id);
    assert_eq!(found[0].audio_path.as_deref(), Some(clip.to_str().unwrap()));

    let out = f.paths.cache.join("out.srt");
    std::fs::create_dir_all(&f.paths.cache).unwrap();
    app.export_transcript(done.id, Format::Srt, &out).unwrap();
    let srt = std::fs::read_to_string(&out).unwrap();
    assert!(srt.starts_with("1\n00:00:"), "{srt}");
    assert!(srt.contains(" --> "));
    let err = app
        .export_transcript(
            done.id,
            Format::Srt,
            &f.paths.cache.join("no/such/dir/x.srt"),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot write"), "{err}");

    // Retry re-transcribes the saved audio and replaces the text.
    let retried = app.retry_history(found[0].id, None).unwrap();
    assert!(
        word_error_rate(truth, &retried.text) <= 0.15,
        "{}",
        retried.text
    );

    // A corrupt file fails alone with a readable error; the queue goes on.
    let bad = f.paths.cache.join("broken.mp3");
    std::fs::write(&bad, b"this is not audio").unwrap();
    let jobs = app.transcribe_files(&[bad, clips[1].0.clone()]);
    let failed = wait_job(&rx, jobs[0].id, |j| j.state == JobState::Failed);
    assert!(
        failed.error.as_deref().unwrap().contains("broken.mp3"),
        "{failed:?}"
    );
    wait_job(&rx, jobs[1].id, |j| j.state == JobState::Done);
    app.shutdown();
}

#[test]
fn queued_file_can_be_cancelled_before_it_runs() {
    let f = fixture();
    let (app, rx) = start(&f.paths);
    wait_loaded(&app);
    let clips: Vec<PathBuf> = common::librivox_clips().into_iter().map(|c| c.0).collect();
    let jobs = app.transcribe_files(&clips[..3]);
    app.cancel_file_job(jobs[2].id);
    wait_job(&rx, jobs[1].id, |j| j.state == JobState::Done);
    let all = app.file_jobs();
    assert_eq!(all[2].state, JobState::Cancelled);
    assert!(all[2].segments.is_empty());
    assert_eq!(app.history(None, 10, 0).unwrap().len(), 2);
    app.clear_file_jobs();
    assert!(app.file_jobs().is_empty());
    app.shutdown();
}

#[test]
fn settings_are_validated_persisted_and_survive_a_restart() {
    let f = fixture();
    let (app, rx) = start(&f.paths);
    wait_loaded(&app);
    let bad = Settings {
        hotkey: "ctrl+".into(),
        ..app.settings()
    };
    let err = app.save_settings(bad).unwrap_err().to_string();
    assert!(err.contains("hotkey"), "{err}");

    let good = Settings {
        hotkey: "alt+shift+d".into(),
        mode: "toggle".into(),
        silence_ms: 900,
        ..app.settings()
    };
    app.save_settings(good.clone()).unwrap();
    assert!(rx
        .try_iter()
        .any(|e| matches!(e, AppEvent::SettingsChanged(ref s) if *s == good)));
    assert_eq!(app.status().hotkey, "alt+shift+d");
    app.shutdown();

    let (again, _rx) = start(&f.paths);
    assert_eq!(again.settings(), good);
    assert!(again.status().notice.is_none());
    again.shutdown();

    // A corrupt file: defaults and a notice, never a failure to start.
    std::fs::write(&f.paths.settings, "{ nope").unwrap();
    let (reset, _rx) = start(&f.paths);
    assert_eq!(reset.settings(), Settings::default());
    let notice = reset.status().notice.expect("a notice");
    assert!(notice.contains("defaults were restored"), "{notice}");
    reset.dismiss_notice();
    assert!(reset.status().notice.is_none());
    reset.shutdown();
}

#[test]
fn no_installed_model_is_reported_as_such() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        models: dir.path().join("empty-models"),
        ..f.paths.clone()
    };
    let (app, _rx) = start(&paths);
    wait_loaded(&app);
    assert_eq!(app.status().state, AppState::NoModel);
    assert!(app.models().unwrap().is_empty());
    let jobs = app.transcribe_files(&[common::librivox_clips()[0].0.clone()]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let job = loop {
        let j = app
            .file_jobs()
            .into_iter()
            .find(|j| j.id == jobs[0].id)
            .unwrap();
        if j.state == JobState::Failed || Instant::now() > deadline {
            break j;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(job.state, JobState::Failed);
    assert!(job.error.unwrap().contains("install the default model"));
    let err = app
        .control(utter_core::dictation::service::Control::Start)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not running"), "{err}");
}
