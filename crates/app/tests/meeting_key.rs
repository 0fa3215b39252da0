//! The meeting shortcut (Settings → meetingKey): pressed in another app on a
//! real X server (Xvfb, the key sent by xdotool as a keyboard would), it
//! starts a meeting with a real PulseAudio server's microphone and system
//! audio; pressed again, it stops it and the transcript is made. Its own
//! test binary:
//! `DISPLAY` and `XDG_RUNTIME_DIR` are the whole process's. Linux only.
#![cfg(target_os = "linux")]

#[path = "../../core/tests/common/mod.rs"]
mod common;
#[path = "support/meeting_events.rs"]
mod meeting_events;
#[path = "support/app_dirs.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use meeting_events::wait_meeting;
use support::app_dirs;
use utter_app_core::meetings::MeetingState;
use utter_app_core::{App, AppState};
use utter_core::settings::Settings;
use utter_platform::MainThread;
use utter_test_support::desktop::{Display, SoundServer};

/// How long a meeting event may take here.
const WITHIN: Duration = Duration::from_secs(120);

fn key(display: &Display, keys: &str) {
    let ok = Command::new("xdotool")
        .args(["key", keys])
        .env("DISPLAY", display.name())
        .status()
        .expect("xdotool is installed")
        .success();
    assert!(ok);
}

#[test]
fn the_meeting_shortcut_starts_and_stops_a_meeting_from_any_app() {
    let dir = tempfile::tempdir().unwrap();
    let display = Display::start();
    let sound = SoundServer::start(&dir.path().join("runtime"));
    std::env::set_var("DISPLAY", display.name());
    std::env::remove_var("WAYLAND_DISPLAY");
    std::env::set_var("XDG_RUNTIME_DIR", sound.runtime_dir());
    let dirs = app_dirs(common::store().dir());
    let settings = Settings {
        meeting_key: Some("ctrl+alt+m".into()),
        ..Settings::default()
    };
    std::fs::create_dir_all(dirs.paths.settings.parent().unwrap()).unwrap();
    std::fs::write(&dirs.paths.settings, serde_json::to_vec(&settings).unwrap()).unwrap();
    let (tx, rx) = unbounded();
    let app = App::start(dirs.paths.clone(), MainThread::dedicated(), move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    // The keys are bound once dictation is ready.
    let deadline = Instant::now() + Duration::from_secs(60);
    while app.status().state != AppState::Idle {
        assert!(Instant::now() < deadline, "{:?}", app.status());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(app.meeting_status().state, MeetingState::Idle);

    key(&display, "ctrl+alt+m");
    let status = wait_meeting(&rx, WITHIN, |s| s.state == MeetingState::Recording);
    assert!(
        status
            .system_audio
            .as_deref()
            .unwrap_or("")
            .contains("Monitor"),
        "{status:?}"
    );
    // Something to transcribe on both sides.
    let clip = &common::librivox_clips()[0].0;
    let (mut mic, mut speakers) = (sound.play(clip), sound.play_to_speakers(clip));
    assert!(mic.wait().unwrap().success() && speakers.wait().unwrap().success());

    key(&display, "ctrl+alt+m");
    wait_meeting(&rx, WITHIN, |s| s.state == MeetingState::Transcribing);
    wait_meeting(&rx, WITHIN, |s| s.state == MeetingState::Idle);
    let meetings = app.meetings();
    assert_eq!(meetings.len(), 1, "{meetings:?}");
    assert!(!meetings[0].unfinished, "{meetings:?}");
    assert!(!meetings[0].turns.is_empty(), "{meetings:?}");
    drop(app);
}
