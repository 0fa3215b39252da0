//! The keys and controls: press/release races, latch, toggle and shutdown,
//! cancel in each phase.

use super::*;

#[test]
fn press_and_release_races_start_nothing_twice_and_lose_nothing() {
    let mut r = rig(Options::default());
    // A release with no press (the press went to another app) does nothing.
    r.key(TriggerKey::Main, false);
    assert!(matches!(r.service.phase, Phase::Idle));
    // Key auto-repeat: a second press while holding starts nothing new.
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Main, true);
    assert_eq!(r.opens.load(Ordering::SeqCst), 1);
    // A tap with no speech: nothing pasted, recorded as no speech.
    r.key(TriggerKey::Main, false);
    r.settle();
    assert!(r.delivered().is_empty());
    assert_eq!(r.record_status(), vec!["no_speech"]);
    // The next press right away is a fresh dictation.
    r.key(TriggerKey::Main, true);
    r.hear(tone(800));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
}

#[test]
fn latch_keeps_recording_after_release_until_the_next_press() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Latch, true);
    r.key(TriggerKey::Main, false);
    assert!(r.service.recording(), "latched: the release does not stop");
    r.hear(tone(700));
    r.key(TriggerKey::Main, true);
    assert!(!r.service.recording());
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
    assert!(r.kinds().contains(&"latched".to_string()));
}

#[test]
fn toggle_commands_and_shutdown_finish_the_dictation_in_flight() {
    let mut r = rig(Options {
        mode: Some(TriggerMode::Toggle),
        engine_delay: Duration::from_millis(50),
        ..Default::default()
    });
    r.service.on_control(Control::Toggle);
    r.hear(tone(700));
    r.service.on_control(Control::Shutdown);
    assert!(
        !r.service.finished(),
        "the dictation in flight finishes first"
    );
    r.settle();
    assert!(r.service.finished());
    assert_eq!(r.delivered(), vec!["one".to_string()]);
}

#[test]
fn cancel_during_the_post_roll_discards_the_text_but_keeps_the_audio() {
    let mut r = rig(Options {
        post_roll: Some(Duration::from_secs(30)),
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(900)); // still speaking at release: the post-roll runs
    r.key(TriggerKey::Main, false);
    assert!(
        matches!(r.service.phase, Phase::PostRoll { .. }),
        "in the post-roll"
    );
    r.key(TriggerKey::Cancel, true);
    assert!(matches!(r.service.phase, Phase::Idle));
    r.settle();
    assert!(r.delivered().is_empty());
    assert_eq!(r.record_status(), vec!["cancelled"]);
    assert!(r.kinds().contains(&"cancelled".to_string()));
    assert_eq!(*r.grabs.lock().unwrap(), vec![true, false]);
    // The cancelled request cannot leak into the next dictation.
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.key(TriggerKey::Main, false);
    r.service.config.post_roll = Duration::ZERO;
    r.settle();
    assert_eq!(r.delivered().len(), 1);
}

#[test]
fn cancel_during_a_window_run_sends_nothing_more_to_the_engine() {
    let mut r = rig(Options {
        engine_delay: Duration::from_millis(300),
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(1000));
    r.hear(silence(900)); // the first window run goes to the engine
    r.hear(tone(1000));
    r.hear(silence(900)); // closes while that run is in flight: coalesced
    r.key(TriggerKey::Cancel, true);
    r.settle();
    assert!(r.delivered().is_empty());
    assert_eq!(r.record_status(), vec!["cancelled"]);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        r.runs.load(Ordering::SeqCst),
        1,
        "only the run in flight; the coalesced one was never sent"
    );
    // The next dictation is a fresh one.
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
}

#[test]
fn a_cancel_in_each_phase_delivers_nothing_keeps_the_audio_and_frees_the_service() {
    let mut r = rig(Options {
        post_roll: Some(Duration::from_secs(30)),
        engine_delay: Duration::from_millis(200),
        ..Default::default()
    });
    // Recording.
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    assert!(matches!(r.service.phase, Phase::Recording(_)));
    r.key(TriggerKey::Cancel, true);
    assert!(matches!(r.service.phase, Phase::Idle));
    // Post-roll (still speaking at the release).
    speak(&mut r, 700);
    assert!(matches!(r.service.phase, Phase::PostRoll { .. }));
    r.key(TriggerKey::Cancel, true);
    assert!(matches!(r.service.phase, Phase::Idle));
    // Finishing: the user had stopped speaking, the engine is still at work.
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.hear(silence(400));
    r.key(TriggerKey::Main, false);
    assert!(
        matches!(r.service.phase, Phase::PostRoll { .. }),
        "the audio still in the pipeline is waited for"
    );
    std::thread::sleep(crate::dictation::recording::PIPELINE_TAIL);
    r.service.tick();
    assert!(
        matches!(r.service.phase, Phase::Finishing(_)),
        "a pause at release: no more post-roll to wait for"
    );
    r.key(TriggerKey::Cancel, true);
    assert!(matches!(r.service.phase, Phase::Idle));
    assert!(r.delivered().is_empty());
    assert_eq!(
        r.record_status(),
        vec!["cancelled", "cancelled", "cancelled"]
    );
    assert_eq!(r.kinds().iter().filter(|k| *k == "cancelled").count(), 3);
    assert!(record_log::unfinished(r.dir.path()).is_empty());
    // And the next dictation is whole.
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.hear(silence(400));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
}
