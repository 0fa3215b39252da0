//! What goes wrong: a failed delivery, a lost or broken microphone, a
//! session that ends mid-dictation, an engine that crashes.

use super::*;

#[test]
fn a_failed_delivery_is_reported_and_the_recording_stays_recoverable() {
    let mut r = rig(Options {
        sink_fails: true,
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(800));
    r.key(TriggerKey::Main, false);
    r.settle();
    let events = r.events.lock().unwrap().clone();
    assert!(events
        .iter()
        .any(|e| matches!(e, DictationEvent::Error { message } if message.contains("went away"))));
    assert!(r.record_status().is_empty(), "no sidecar: not finished");
    assert_eq!(
        record_log::unfinished(r.dir.path()).len(),
        1,
        "recovered at the next start"
    );
}

#[test]
fn a_lost_microphone_ends_the_recording_and_keeps_what_was_heard() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Main, true);
    r.hear(tone(800));
    r.service.on_audio(CaptureEvent::Lost(CaptureError::Lost {
        device: "USB mic".into(),
        message: "unplugged".into(),
    }));
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
    assert!(r.kinds().contains(&"error".to_string()));
    assert!(!r.service.io.mic.is_open());
}

#[test]
fn a_microphone_that_cannot_open_starts_nothing_and_says_why() {
    let mut r = rig(Options {
        mic_broken: true,
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    assert!(matches!(r.service.phase, Phase::Idle));
    assert!(
        r.grabs.lock().unwrap().is_empty(),
        "no keys grabbed for nothing"
    );
    let events = r.events.lock().unwrap().clone();
    assert!(events
        .iter()
        .any(|e| matches!(e, DictationEvent::Error { message } if message.contains("USB mic"))));
}

#[test]
fn a_session_that_ends_mid_dictation_leaves_its_recording_for_the_next_start() {
    let mut r = rig(Options {
        engine_delay: Duration::from_millis(50),
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.service.on_control(Control::SessionEnded);
    assert!(r.service.finished(), "no waiting for the engine");
    assert!(
        r.delivered().is_empty(),
        "nothing goes to a desktop that is gone"
    );
    let files: Vec<_> = std::fs::read_dir(r.dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let wav = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "wav"))
        .expect("the recording is on disk");
    assert!(
        hound::WavReader::open(wav).unwrap().duration() > 0,
        "its audio is in it"
    );
    assert!(
        !wav.with_extension("json").exists(),
        "no sidecar: the next start transcribes it"
    );
}

fn delivered_error(r: &Rig) -> Option<String> {
    r.events
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find_map(|e| match e {
            DictationEvent::TextDelivered { error, .. } => Some(error.clone()),
            _ => None,
        })?
}

#[test]
fn an_engine_crash_while_recording_is_reported_and_the_recording_is_kept_for_recovery() {
    let mut r = rig(Options {
        crashing_runs: vec![1],
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.hear(silence(900)); // the first run, at the pause: it crashes
                          // Its answer comes before the user goes on (else the release would
                          // replace that run, and its crash, by one over everything).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !r.kinds().contains(&"error".to_string()) {
        assert!(Instant::now() < deadline, "no error: {:?}", r.kinds());
        r.service.tick();
        std::thread::sleep(Duration::from_millis(2));
    }
    r.hear(tone(700));
    r.hear(silence(400));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(
        r.delivered(),
        vec!["one two".to_string()],
        "the next run covers the whole window again"
    );
    assert!(delivered_error(&r).is_some_and(|e| e.contains("crashed")));
    assert!(r.record_status().is_empty(), "not marked finished");
    assert_eq!(record_log::unfinished(r.dir.path()).len(), 1);
}

#[test]
fn an_engine_crash_after_the_release_is_reported_and_the_recording_is_kept_for_recovery() {
    let mut r = rig(Options {
        crashing_runs: vec![1],
        ..Default::default()
    });
    speak(&mut r, 700); // the only run starts at the release
    r.settle();
    assert!(r.delivered().is_empty());
    assert!(delivered_error(&r).is_some_and(|e| e.contains("crashed")));
    assert!(r.kinds().contains(&"error".to_string()));
    assert_eq!(record_log::unfinished(r.dir.path()).len(), 1);
    // The service carries on.
    speak(&mut r, 700);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
}
