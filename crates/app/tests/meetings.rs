//! The Meetings page's core (`utter_app_core`): a meeting started and stopped
//! as the page does, with a real PulseAudio server (its default output's
//! monitor is the system audio), real voices taking turns, the real files
//! model and speaker models; the transcript kept and listed with who said
//! what. Its own test binary: the sound server is chosen through
//! `XDG_RUNTIME_DIR`, which the whole process shares. Linux only.
#![cfg(target_os = "linux")]

#[path = "../../core/tests/common/mod.rs"]
mod common;
#[path = "support/app_dirs.rs"]
mod support;

use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver};
use support::app_dirs;
use utter_app_core::meetings::{MeetingState, MeetingStatus};
use utter_app_core::{App, AppEvent};
use utter_core::export::Format;
use utter_core::platform::MainThread;
use utter_test_support::call::{two_sided_call, words};
use utter_test_support::desktop::SoundServer;

fn wait_meeting(rx: &Receiver<AppEvent>, until: impl Fn(&MeetingStatus) -> bool) -> MeetingStatus {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(AppEvent::Meeting(s)) if until(&s) => return s,
            Ok(_) => {}
            Err(e) => panic!("no such meeting event: {e}"),
        }
    }
}

#[test]
fn a_meeting_started_and_stopped_from_the_page_is_listed_with_who_said_what() {
    let dir = tempfile::tempdir().unwrap();
    let sound = SoundServer::start(&dir.path().join("runtime"));
    // Only this test runs in this binary: the app's capture finds the server here.
    std::env::set_var("XDG_RUNTIME_DIR", sound.runtime_dir());
    let dirs = app_dirs(common::store().dir());
    let paths = &dirs.paths;
    let (tx, rx) = unbounded();
    let app = App::start(paths.clone(), MainThread::dedicated(), move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    let call = two_sided_call(dir.path(), None);

    let status = app.start_meeting().expect("the meeting starts");
    assert_eq!(status.state, MeetingState::Recording);
    assert!(
        status
            .system_audio
            .as_deref()
            .unwrap_or("")
            .contains("Monitor"),
        "{status:?}"
    );
    let (mut others, mut mic) = (sound.play_to_speakers(&call.others), sound.play(&call.mic));
    assert!(others.wait().unwrap().success() && mic.wait().unwrap().success());
    std::thread::sleep(Duration::from_secs(1));
    // The live transcript reached the page while the meeting went on.
    let live: Vec<_> = rx
        .try_iter()
        .filter_map(|e| match e {
            AppEvent::MeetingLine(turn) => Some(turn),
            _ => None,
        })
        .collect();
    assert!(
        live.iter().any(|t| t.speaker == "You") && live.iter().any(|t| t.speaker == "Others"),
        "{live:?}"
    );

    assert_eq!(
        app.stop_meeting().unwrap().state,
        MeetingState::Transcribing
    );
    let done = wait_meeting(&rx, |s| s.state == MeetingState::Idle);
    assert_eq!(done.notice, None, "{done:?}");

    let meetings = app.meetings();
    assert_eq!(meetings.len(), 1, "{meetings:?}");
    let m = &meetings[0];
    assert!(!m.unfinished);
    assert!(m.duration_ms as f64 >= call.seconds * 1000.0, "{m:?}");
    let said = |who: &str| -> Vec<String> {
        m.turns
            .iter()
            .filter(|t| t.speaker == who)
            .flat_map(|t| words(&t.text))
            .collect()
    };
    let (mine, theirs) = (said("You"), said("Speaker 1"));
    let heard = |got: &[String], reference: &[String]| {
        reference.iter().filter(|w| got.contains(w)).count() as f64 / reference.len() as f64
    };
    assert!(
        heard(&mine, &call.your_words) >= 0.7 && heard(&theirs, &call.others_words) >= 0.7,
        "{:?}",
        m.turns
    );

    // Exported with its speakers, as the page's buttons do.
    let vtt = dir.path().join("call.vtt");
    app.export_meeting(&m.dir, Format::Vtt, &vtt).unwrap();
    let text = std::fs::read_to_string(&vtt).unwrap();
    assert!(
        text.contains("<v You>") && text.contains("<v Speaker 1>"),
        "{text}"
    );
    // Only the app's meetings can be exported.
    assert!(app.export_meeting("/etc", Format::Txt, &vtt).is_err());
    app.shutdown();
}
