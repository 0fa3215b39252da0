//! When the engine runs: eagerly at each pause, again when speech goes on,
//! per span or over the growing window, once on release, or as a stream.

use super::*;

#[test]
fn push_to_talk_transcribes_each_pause_eagerly_and_delivers_once_on_release() {
    let mut r = rig(Options::default());
    r.service.announce_ready();
    r.key(TriggerKey::Main, true);
    assert_eq!(*r.grabs.lock().unwrap(), vec![true], "cancel/latch grabbed");
    r.hear(tone(1000));
    r.hear(silence(900)); // a pause: the first segment goes to the engine now
    assert!(
        r.kinds().contains(&"segment_closed".to_string()),
        "{:?}",
        r.kinds()
    );
    r.hear(tone(600));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one two".to_string()]);
    assert_eq!(*r.grabs.lock().unwrap(), vec![true, false]);
    assert!(
        !r.service.io.mic.is_open(),
        "the mic closes after the post-roll"
    );
    assert_eq!(r.record_status(), vec!["delivered"]);
    let kinds = r.kinds();
    assert_eq!(kinds.first().map(String::as_str), Some("ready"));
    assert_eq!(kinds.last().map(String::as_str), Some("text_delivered"));
    assert_eq!(kinds.iter().filter(|k| *k == "text_delivered").count(), 1);
}

#[test]
fn a_pause_starts_the_engine_before_it_is_long_enough_to_end_the_segment() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Main, true);
    r.hear(tone(1000));
    // Past the 300 ms padding, short of the 600 ms that ends a segment.
    r.hear(silence(400));
    assert!(
        !r.kinds().contains(&"segment_closed".to_string()),
        "{:?}",
        r.kinds()
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.runs.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "no run started in the pause");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The pause goes on and ends the segment: the same audio, no new run.
    r.hear(silence(400));
    assert!(r.kinds().contains(&"segment_closed".to_string()));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()]);
    assert_eq!(
        r.runs.load(Ordering::SeqCst),
        1,
        "the run into the pause was the one the release waited for"
    );
}

#[test]
fn speech_after_a_short_pause_is_added_to_the_window_and_run_again() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Main, true);
    r.hear(tone(1000));
    r.hear(silence(400)); // a run starts into the pause...
    r.hear(tone(800)); // ...but the user goes on: one segment, one window
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one two".to_string()]);
    let closed = r.kinds().iter().filter(|k| *k == "segment_closed").count();
    assert_eq!(closed, 1, "a 400 ms pause does not end the segment");
    assert!(r.runs.load(Ordering::SeqCst) >= 2);
}

#[test]
fn per_span_runs_each_span_once_alone_where_growing_windows_rerun_the_window() {
    for (strategy, text) in [
        (LiveStrategy::PerSpan, "one one"),
        (LiveStrategy::GrowingWindow, "one two"),
    ] {
        let mut r = rig(Options {
            strategy: Some(strategy),
            ..Default::default()
        });
        r.key(TriggerKey::Main, true);
        r.hear(tone(700));
        r.hear(silence(900));
        r.hear(tone(700));
        r.hear(silence(900));
        r.key(TriggerKey::Main, false);
        r.settle();
        // The fake names each stretch of tone a run hears: a run over one
        // span hears "one", a run over the window so far "one two".
        assert_eq!(r.delivered(), vec![text.to_string()], "{strategy}");
        assert_eq!(
            r.runs.load(Ordering::SeqCst),
            2,
            "{strategy}: one run per pause"
        );
    }
}

#[test]
fn on_release_runs_once_over_all_the_speech() {
    let mut r = rig(Options {
        strategy: Some(LiveStrategy::OnRelease),
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.hear(silence(900));
    r.hear(tone(700));
    assert_eq!(
        r.runs.load(Ordering::SeqCst),
        0,
        "nothing while the key is held"
    );
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one two".to_string()]);
    assert_eq!(r.runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_streaming_model_hears_the_audio_itself_and_its_final_text_is_delivered() {
    let mut r = rig(Options {
        streaming: true,
        engine_delay: Duration::from_millis(20),
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.hear(silence(400));
    r.hear(tone(700));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one two".to_string()]);
    let kinds = r.kinds();
    assert!(kinds.contains(&"partial_text".to_string()), "{kinds:?}");
    assert!(
        !kinds.contains(&"segment_closed".to_string()),
        "no VAD segments for a stream: {kinds:?}"
    );
    assert_eq!(r.record_status(), vec!["delivered"]);
}

#[test]
fn a_streaming_dictation_can_be_cancelled_and_the_next_one_streams_afresh() {
    let mut r = rig(Options {
        streaming: true,
        ..Default::default()
    });
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.key(TriggerKey::Cancel, true);
    assert!(matches!(r.service.phase, Phase::Idle));
    r.key(TriggerKey::Main, true);
    r.hear(tone(700));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), vec!["one".to_string()], "only the second");
    assert_eq!(r.record_status(), vec!["cancelled", "delivered"]);
}
