//! Hands-free: a dictation no key is held for ends after a pause that
//! follows speech, and is cancelled when nothing is said; other audio is
//! lowered while it records.

use super::*;

const AFTER: Duration = Duration::from_millis(1000);

fn hands_free(mode: TriggerMode) -> Rig {
    rig(Options {
        mode: Some(mode),
        stop_on_silence: Some(SilenceStop::after(AFTER)),
        ..Options::default()
    })
}

fn event_values(r: &Rig, kind: &str) -> Vec<serde_json::Value> {
    r.events
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}

#[test]
fn a_toggled_dictation_stops_after_the_silence_that_follows_speech() {
    let mut r = hands_free(TriggerMode::Toggle);
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Main, false);
    r.hear(tone(600));
    r.hear(silence(500));
    assert!(r.service.recording(), "half the silence: still recording");
    r.hear(silence(1500));
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
    // 300 ms of lead-in, 600 of speech, then the second of silence (to the
    // 100 ms the microphone's chunks and the detector's frames allow).
    let stopped = &event_values(&r, "recording_stopped")[0];
    let audio_ms = stopped["audio_ms"].as_u64().unwrap();
    assert!((1900..=2100).contains(&audio_ms), "{stopped}");
    let countdown: Vec<_> = event_values(&r, "stopping_on_silence")
        .iter()
        .map(|v| v["left_ms"].clone())
        .collect();
    assert_eq!(countdown, [serde_json::json!(1000)], "{:?}", r.kinds());
}

#[test]
fn speech_after_a_short_pause_keeps_the_dictation_going() {
    let mut r = hands_free(TriggerMode::Toggle);
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Main, false);
    r.hear(tone(600));
    r.hear(silence(700));
    r.hear(tone(600));
    assert!(r.service.recording());
    r.hear(silence(1500));
    r.settle();
    assert_eq!(r.delivered(), ["one two"]);
    let countdown: Vec<_> = event_values(&r, "stopping_on_silence")
        .iter()
        .map(|v| v["left_ms"].clone())
        .collect();
    assert!(
        countdown.contains(&serde_json::Value::Null),
        "the countdown went off when speech resumed: {countdown:?}"
    );
}

#[test]
fn nothing_said_within_ten_seconds_cancels_and_says_why() {
    let mut r = hands_free(TriggerMode::Toggle);
    r.key(TriggerKey::Main, true);
    r.hear(silence(9_500));
    assert!(r.service.recording());
    r.hear(silence(1_000));
    r.settle();
    assert!(r.delivered().is_empty());
    assert!(
        r.kinds().contains(&"cancelled".to_string()),
        "{:?}",
        r.kinds()
    );
    let notices = event_values(&r, "notice");
    assert!(
        notices
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("nothing was said")),
        "{notices:?}"
    );
}

#[test]
fn a_held_push_to_talk_key_is_never_cut_by_silence() {
    let mut r = hands_free(TriggerMode::PushToTalk);
    r.key(TriggerKey::Main, true);
    std::thread::sleep(Duration::from_millis(450)); // a hold, not a tap
    r.hear(tone(600));
    r.hear(silence(3000));
    assert!(r.service.recording(), "held: silence does not stop it");
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
    assert!(event_values(&r, "stopping_on_silence").is_empty());
}

#[test]
fn a_push_to_talk_tap_starts_a_hands_free_dictation() {
    let mut r = hands_free(TriggerMode::PushToTalk);
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Main, false);
    assert!(r.service.recording(), "the tap latched it");
    assert_eq!(event_values(&r, "latched").len(), 1);
    r.hear(tone(600));
    r.hear(silence(1500));
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
}

#[test]
fn without_hands_free_a_tap_stops_at_once() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Main, false);
    assert!(!r.service.recording());
}

#[test]
fn other_audio_is_lowered_while_recording_and_given_back_when_it_stops_or_is_cancelled() {
    let mut r = rig(Options::default());
    let asked = |r: &Rig| r.other_audio.lock().unwrap().clone();
    r.key(TriggerKey::Main, true);
    assert_eq!(asked(&r), ["lower"]);
    r.hear(tone(400));
    r.key(TriggerKey::Main, false);
    assert_eq!(asked(&r), ["lower", "restore"], "back up at the release");
    r.settle();
    r.key(TriggerKey::Main, true);
    r.key(TriggerKey::Cancel, true);
    assert_eq!(asked(&r), ["lower", "restore", "lower", "restore"]);
}
