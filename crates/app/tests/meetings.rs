//! The Meetings page's core (`utter_app_core`): a meeting started and stopped
//! as the page does, with a real PulseAudio server (its default output's
//! monitor is the system audio), real voices taking turns, the real files
//! model and speaker models; the transcript kept and listed with who said
//! what. Its own test binary: the sound server is chosen through
//! `XDG_RUNTIME_DIR`, which the whole process shares. Linux only.
#![cfg(target_os = "linux")]

#[path = "../../core/tests/common/mod.rs"]
mod common;
#[path = "support/meeting_events.rs"]
mod meeting_events;
#[path = "support/app_dirs.rs"]
mod support;

use std::time::Duration;

use crossbeam_channel::unbounded;
use meeting_events::wait_meeting;
use support::app_dirs;
use utter_app_core::meetings::MeetingState;
use utter_app_core::{App, AppEvent};
use utter_core::export::Format;
use utter_platform::MainThread;
use utter_test_support::call::{two_sided_call, words};
use utter_test_support::desktop::SoundServer;

/// How long a meeting event may take here.
const WITHIN: Duration = Duration::from_secs(180);

#[test]
fn a_meeting_started_and_stopped_from_the_page_is_listed_with_who_said_what_and_renamed() {
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
    // The live transcript and both sides' levels reached the page while the
    // meeting went on.
    let (mut live, mut loudest) = (Vec::new(), (0f32, 0f32));
    for event in rx.try_iter() {
        match event {
            AppEvent::MeetingLine(turn) => live.push(turn),
            AppEvent::MeetingLevels(l) => loudest = (loudest.0.max(l.you), loudest.1.max(l.others)),
            _ => {}
        }
    }
    assert!(
        loudest.0 > 0.01 && loudest.1 > 0.01,
        "both voices showed on the meters: {loudest:?}"
    );
    assert!(
        live.iter().any(|t| t.speaker == "You") && live.iter().any(|t| t.speaker == "Others"),
        "{live:?}"
    );

    assert_eq!(
        app.stop_meeting().unwrap().state,
        MeetingState::Transcribing
    );
    let done = wait_meeting(&rx, WITHIN, |s| s.state == MeetingState::Idle);
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

    // Listed in History too, with who said what, and found by its words;
    // played there as on the Meetings page.
    let find = |app: &App, word: &str| {
        app.history(Some(word), 10, 0)
            .unwrap()
            .into_iter()
            .filter(|e| e.record.kind == utter_app_core::history::EntryKind::Meeting)
            .collect::<Vec<_>>()
    };
    // The longest word heard from the others: a search for it finds the meeting.
    let heard_word = theirs.iter().max_by_key(|w| w.len()).unwrap().clone();
    let listed = find(&app, &heard_word);
    assert_eq!(listed.len(), 1, "{listed:?}");
    let entry = &listed[0];
    assert!(
        entry.record.text.contains("You: ") && entry.record.text.contains("Speaker 1: "),
        "{}",
        entry.record.text
    );
    assert_eq!(entry.record.duration_ms, m.duration_ms as i64);
    assert_eq!(
        app.history_audio(entry.id).unwrap(),
        app.meeting_audio(&m.dir).unwrap()
    );
    assert!(
        app.retry_history(entry.id, None).is_err(),
        "retried on its page"
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

    // Played on the page: both sides mixed into one WAV as long as the
    // meeting, with sound in it; only the app's meetings.
    let wav = app.meeting_audio(&m.dir).unwrap();
    let reader = hound::WavReader::new(std::io::Cursor::new(&wav)).unwrap();
    let seconds = f64::from(reader.duration()) / f64::from(reader.spec().sample_rate);
    assert!(
        (seconds * 1000.0 - m.duration_ms as f64).abs() < 500.0,
        "{seconds} s for a meeting of {} ms",
        m.duration_ms
    );
    let loud = reader
        .into_samples::<i16>()
        .map_while(Result::ok)
        .filter(|s| s.unsigned_abs() > 1_000)
        .count();
    assert!(loud > 16_000, "{loud} loud samples");
    assert!(app.meeting_audio("/etc").is_err());

    // A speaker renamed after the fact: the turns and every export after say
    // the new name; a name nobody has, or an empty one, is refused.
    let renamed = app
        .rename_meeting_speaker(&m.dir, "Speaker 1", "Ann")
        .unwrap();
    assert!(
        renamed.turns.iter().any(|t| t.speaker == "Ann"),
        "{renamed:?}"
    );
    assert!(renamed.turns.iter().all(|t| t.speaker != "Speaker 1"));
    assert_eq!(app.meetings()[0].turns, renamed.turns, "kept on disk");
    let md = dir.path().join("call.md");
    app.export_meeting(&m.dir, Format::Md, &md).unwrap();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("**Ann**") && !text.contains("Speaker 1"),
        "{text}"
    );
    let in_history = app.history_entry(entry.id).unwrap().record.text;
    assert!(
        in_history.contains("Ann: ") && !in_history.contains("Speaker 1"),
        "History says the new name: {in_history}"
    );
    assert!(app.rename_meeting_speaker(&m.dir, "Nobody", "X").is_err());
    assert!(app.rename_meeting_speaker(&m.dir, "Ann", "  ").is_err());
    // Two names made one: everything Ann said is now the user's.
    let merged = app.rename_meeting_speaker(&m.dir, "Ann", "You").unwrap();
    assert!(
        merged.turns.iter().all(|t| t.speaker == "You"),
        "{merged:?}"
    );
    assert_eq!(find(&app, &heard_word).len(), 1, "still one entry");

    // Deleted from History, the meeting stays on its page, and out of
    // History: a restart (which adds meetings held before History listed
    // them) does not bring it back.
    app.delete_history(entry.id).unwrap();
    assert!(find(&app, &heard_word).is_empty());
    assert_eq!(app.meetings().len(), 1);
    app.shutdown();
    let app = App::start(paths.clone(), MainThread::dedicated(), |_| {}).unwrap();
    std::thread::sleep(Duration::from_secs(2)); // the start's pass over past meetings
    assert!(find(&app, &heard_word).is_empty(), "stays deleted");
    assert_eq!(app.meetings().len(), 1);
    app.shutdown();
}
