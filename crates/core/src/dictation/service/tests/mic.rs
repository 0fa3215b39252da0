//! The microphone: kept ready with its pre-roll, or opened at the press
//! with silence before its first sample.

use super::*;

#[test]
fn a_ready_mic_keeps_what_was_said_just_before_the_press_and_stays_open() {
    let mut r = rig(Options {
        mic_ready: true,
        ..Options::default()
    });
    r.service.announce_ready();
    assert!(r.service.io.mic.is_open(), "open before any press");
    // Speech starts 200 ms before the key goes down (inside the pre-roll).
    r.hear(silence(1000));
    r.hear(tone(200));
    r.key(TriggerKey::Main, true);
    r.hear(tone(400));
    r.hear(silence(400));
    r.hear(tone(600));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), ["one two"]);
    assert!(
        r.service.io.mic.is_open(),
        "still ready after the dictation"
    );
    assert_eq!(r.opens.load(Ordering::SeqCst), 1, "opened once");
}

/// Speech said at the press starts at the first sample of a microphone
/// opened at the press; the engine and the voice detector get 300 ms of
/// silence before it, as the ready microphone's pre-roll gives them.
#[test]
fn a_mic_opened_at_the_press_puts_silence_before_its_first_sample() {
    let mut r = rig(Options::default());
    r.key(TriggerKey::Main, true);
    r.hear(tone(400));
    r.key(TriggerKey::Main, false);
    r.settle();
    assert_eq!(r.delivered(), ["one"]);
    let wav = std::fs::read_dir(r.dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "wav"))
        .expect("the recording is on disk");
    let samples: Vec<i16> = hound::WavReader::open(wav)
        .unwrap()
        .samples::<i16>()
        .map(Result::unwrap)
        .collect();
    let lead_in = crate::audio::ms_to_samples(300) as usize;
    assert_eq!(
        samples.len(),
        lead_in + crate::audio::ms_to_samples(400) as usize
    );
    assert!(samples[..lead_in].iter().all(|s| *s == 0), "silence first");
    assert!(
        samples[lead_in..lead_in + 160].iter().any(|s| *s != 0),
        "then the speech"
    );
}
