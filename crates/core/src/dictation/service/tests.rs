//! The service loop with fake keys, a fake microphone, a fake sink and a fake
//! engine (plus a loudness VAD): press/release races, latch, cancel during
//! the post-roll, delivery failures, a lost microphone. No desktop needed.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{never, unbounded, Receiver, Sender};
use utter_postprocess::TextRules;

use super::*;
use crate::audio::capture::CaptureError;
use crate::control::{TriggerKey, TriggerMode};
use crate::dictation::rewrite_step::{RewriteReport, RewriteStep};
use crate::engine::EngineError;
use crate::platform::focus::{FocusProbe, FocusedApp};
use crate::platform::hotkeys::RecordingKeys;
use crate::platform::output::selection::SelectionReader;
use crate::platform::output::{Delivered, Delivery, Outcome, OutputConfig, TextSink};
use crate::platform::output::{OutputError, OutputMethod, PasteKeys};
use crate::profiles::ProfileSet;
use crate::settings::MicMode;

type Log<T> = Arc<Mutex<Vec<T>>>;

fn log<T>() -> Log<T> {
    Arc::new(Mutex::new(Vec::new()))
}

struct FakeKeys(Log<bool>);

impl RecordingKeys for FakeKeys {
    fn set_recording(&mut self, on: bool) {
        self.0.lock().unwrap().push(on);
    }
}

struct FakeSink {
    delivered: Log<String>,
    /// How each text was to be delivered.
    hows: Log<Delivery>,
    fail: bool,
}

impl TextSink for FakeSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, OutputError> {
        if self.fail {
            return Err(OutputError::Input(
                enigo::InputError::Simulate("the target app went away").into(),
            ));
        }
        self.delivered.lock().unwrap().push(text.to_string());
        self.hows.lock().unwrap().push(*how);
        Ok(match how.method {
            OutputMethod::Paste => Delivered::Pasted,
            OutputMethod::Type => Delivered::Typed,
            OutputMethod::Clipboard => Delivered::OnClipboard,
            OutputMethod::Stdout => Delivered::Printed,
        }
        .into())
    }
}

/// The focused app, as the test sets it.
struct FakeFocus(Arc<Mutex<Result<FocusedApp, FocusError>>>);

impl FocusProbe for FakeFocus {
    fn focused(&mut self) -> Result<FocusedApp, FocusError> {
        self.0.lock().unwrap().clone()
    }
}

/// The selected text, as the test sets it.
struct FakeSelection(Arc<Mutex<Option<String>>>);

impl SelectionReader for FakeSelection {
    fn selected_text(&mut self) -> Result<Option<String>, OutputError> {
        Ok(self.0.lock().unwrap().clone())
    }
}

/// A microphone the test feeds through `audio`.
struct FakeMic {
    rx: Receiver<CaptureEvent>,
    open: bool,
    broken: bool,
    opens: Arc<AtomicUsize>,
}

impl Microphone for FakeMic {
    fn open(&mut self) -> Result<(), CaptureError> {
        if self.broken {
            return Err(CaptureError::DeviceNotFound {
                wanted: "USB mic".into(),
                available: vec![],
            });
        }
        self.opens.fetch_add(1, Ordering::SeqCst);
        self.open = true;
        Ok(())
    }
    fn events(&self) -> Receiver<CaptureEvent> {
        if self.open {
            self.rx.clone()
        } else {
            never()
        }
    }
    fn close(&mut self) -> Vec<Vec<f32>> {
        self.open = false;
        Vec::new()
    }
    fn is_open(&self) -> bool {
        self.open
    }
    fn level(&self) -> f32 {
        0.1
    }
    fn name(&self) -> Option<String> {
        self.open.then(|| "fake mic".into())
    }
}

struct Rig {
    service: Service<Box<dyn FnMut(DictationEvent)>>,
    events: Log<DictationEvent>,
    grabs: Log<bool>,
    delivered: Log<String>,
    hows: Log<Delivery>,
    focus: Arc<Mutex<Result<FocusedApp, FocusError>>>,
    selection: Arc<Mutex<Option<String>>>,
    audio: Sender<CaptureEvent>,
    opens: Arc<AtomicUsize>,
    /// Engine runs so far.
    runs: Arc<AtomicUsize>,
    dir: tempfile::TempDir,
}

#[derive(Default)]
struct Options {
    mode: Option<TriggerMode>,
    post_roll: Option<Duration>,
    sink_fails: bool,
    mic_broken: bool,
    engine_delay: Duration,
    /// A streaming model (the audio goes to it directly, no VAD).
    streaming: bool,
    /// Engine runs (1 = the first) that fail as a crashed worker does.
    crashing_runs: Vec<usize>,
    strategy: Option<LiveStrategy>,
    profiles: Vec<Profile>,
    mic_ready: bool,
    /// The AI step, against a loopback server.
    rewrite: Option<utter_rewrite::RewriteConfig>,
}

/// Like a real engine, the fake hears all of the audio it is given: one word
/// ("one", "two", ...) per stretch of tone, stretches parted by 300 ms of silence.
fn fake_words(pcm: &[f32]) -> String {
    let words = ["one", "two", "three", "four", "five", "six"];
    let (mut stretches, mut quiet, mut in_tone) = (0, 0, false);
    for chunk in pcm.chunks(160) {
        let loud = chunk.iter().any(|s| s.abs() > 0.05);
        if loud && !in_tone {
            stretches += 1;
            in_tone = true;
        }
        quiet = if loud { 0 } else { quiet + 1 };
        if quiet >= 30 {
            in_tone = false;
        }
    }
    words[..stretches.min(words.len())].join(" ")
}

fn rig(options: Options) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServiceConfig::new("fake-model".into());
    config.recordings_dir = dir.path().to_path_buf();
    config.mode = options.mode.unwrap_or(TriggerMode::PushToTalk);
    config.post_roll = options.post_roll.unwrap_or(Duration::ZERO);
    config.dictation.strategy = options.strategy;
    // Most tests watch the mic open and close with each dictation.
    config.mic = match options.mic_ready {
        true => MicMode::Ready,
        false => MicMode::OnPress,
    };
    config.profiles = ProfileSet::new(&options.profiles).unwrap();
    config.rewrite = options
        .rewrite
        .clone()
        .and_then(|rewrite| RewriteStep::new(rewrite, Ok(None)).unwrap());
    config.dictation.vocabulary = vec!["Ana".into()];
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let crashing = options.crashing_runs.clone();
    let streaming = options.streaming;
    let engine = Engine::fake_with(options.engine_delay, streaming, move |pcm| {
        if streaming {
            return Ok(fake_words(pcm)); // partials are not runs
        }
        let run = counted.fetch_add(1, Ordering::SeqCst) + 1;
        match crashing.contains(&run) {
            true => Err(EngineError::Crashed("SIGABRT".into())),
            false => Ok(fake_words(pcm)),
        }
    });
    let (events, grabs, delivered, hows) = (log(), log(), log(), log());
    let focus = Arc::new(Mutex::new(Err(FocusError::NoFocus)));
    let selection = Arc::new(Mutex::new(None));
    let (audio, rx) = unbounded();
    let opens = Arc::new(AtomicUsize::new(0));
    let io = ServiceIo {
        keys: Box::new(FakeKeys(grabs.clone())),
        sink: Box::new(FakeSink {
            delivered: delivered.clone(),
            hows: hows.clone(),
            fail: options.sink_fails,
        }),
        focus: Box::new(FakeFocus(focus.clone())),
        selection: Box::new(FakeSelection(selection.clone())),
        mic: Box::new(FakeMic {
            rx,
            open: false,
            broken: options.mic_broken,
            opens: opens.clone(),
        }),
    };
    let sink_events = events.clone();
    let emit: Box<dyn FnMut(DictationEvent)> =
        Box::new(move |e| sink_events.lock().unwrap().push(e));
    let service = Service::new(config, engine, SpeechDetector::loudness(), io, emit);
    Rig {
        service,
        events,
        grabs,
        delivered,
        hows,
        focus,
        selection,
        audio,
        opens,
        runs,
        dir,
    }
}

/// 16 kHz samples: a loud tone (speech to the loudness VAD) or silence.
fn tone(ms: usize) -> Vec<f32> {
    (0..ms * 16)
        .map(|i| 0.3 * (i as f32 * 0.08).sin())
        .collect()
}

fn silence(ms: usize) -> Vec<f32> {
    vec![0.0; ms * 16]
}

impl Rig {
    fn key(&mut self, key: TriggerKey, pressed: bool) {
        self.service.on_control(Control::Key { key, pressed });
        self.service.tick();
    }

    /// Feeds audio the way the capture thread would, through the mic's channel.
    fn hear(&mut self, pcm: Vec<f32>) {
        for chunk in pcm.chunks(1600) {
            self.audio
                .send(CaptureEvent::Audio(chunk.to_vec()))
                .unwrap();
        }
        let rx = self.service.io.mic.events();
        while let Ok(ev) = rx.try_recv() {
            self.service.on_audio(ev);
            self.service.tick();
        }
    }

    fn kinds(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| !matches!(e, DictationEvent::Level { .. }))
            .map(|e| {
                serde_json::to_value(e).unwrap()["event"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    fn settle(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !matches!(self.service.phase, Phase::Idle) {
            assert!(
                Instant::now() < deadline,
                "never finished: {:?}",
                self.kinds()
            );
            self.service.tick();
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn delivered(&self) -> Vec<String> {
        self.delivered.lock().unwrap().clone()
    }

    fn record_status(&self) -> Vec<String> {
        record_statuses(self.dir.path())
    }
}

fn record_statuses(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            out.push(v["status"].as_str().unwrap().to_string());
        }
    }
    out.sort(); // the directory's order is the file system's
    out
}

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

/// Holds the key over `tone` ms of speech and releases it.
fn speak(r: &mut Rig, tone_ms: usize) {
    r.key(TriggerKey::Main, true);
    r.hear(tone(tone_ms));
    r.key(TriggerKey::Main, false);
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

fn dictate_one_two(r: &mut Rig) {
    r.key(TriggerKey::Main, true);
    r.hear(tone(600));
    r.hear(silence(400));
    r.hear(tone(600));
    r.key(TriggerKey::Main, false);
    r.settle();
}

#[test]
fn the_profile_of_the_app_focused_at_the_press_shapes_that_dictation_only() {
    let terminal = Profile {
        name: "terminal".into(),
        apps: vec!["*term*".into()],
        paste_keys: Some(PasteKeys::CtrlShiftV),
        trailing_space: Some(true),
        output: Some(OutputMethod::Type),
        ..Profile::default()
    };
    let mut r = rig(Options {
        profiles: vec![terminal],
        ..Options::default()
    });
    r.service.announce_ready();
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("Lxterminal", ["lxterminal".to_string()]));
    r.key(TriggerKey::Main, true);
    // The focus moves while the user speaks: the press decided.
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("Zenity", ["zenity".to_string()]));
    r.hear(tone(600));
    r.key(TriggerKey::Main, false);
    r.settle();
    dictate_one_two(&mut r);
    let hows = r.hows.lock().unwrap().clone();
    assert_eq!(
        hows[0],
        Delivery {
            method: OutputMethod::Type,
            paste_keys: PasteKeys::CtrlShiftV,
            trailing_space: true
        }
    );
    assert_eq!(hows[1], OutputConfig::default().delivery());
    let started: Vec<_> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            DictationEvent::RecordingStarted { app, profile, .. } => {
                Some((app.clone(), profile.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [
            (Some("Lxterminal".into()), Some("terminal".into())),
            (Some("Zenity".into()), None)
        ]
    );
    let delivered_output: Vec<_> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            DictationEvent::TextDelivered { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(delivered_output, ["type", "paste"]);
}

#[test]
fn a_profile_drops_the_final_period_and_turns_spoken_punctuation_off() {
    let chat = Profile {
        name: "chat".into(),
        apps: vec!["chat".into()],
        final_period: Some(false),
        ..Profile::default()
    };
    let mut r = rig(Options {
        profiles: vec![chat],
        ..Options::default()
    });
    r.service.config.text_rules = TextRules::new(&utter_postprocess::TextRulesConfig {
        replacements: vec![utter_postprocess::Replacement {
            heard: "two".into(),
            written: "two.".into(),
            regex: false,
        }],
        ..Default::default()
    })
    .unwrap();
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("chat", []));
    dictate_one_two(&mut r);
    *r.focus.lock().unwrap() = Ok(FocusedApp::new("editor", []));
    dictate_one_two(&mut r);
    assert_eq!(r.delivered(), ["one two", "one two."]);
}

#[test]
fn where_the_desktop_cannot_tell_the_focus_the_user_is_told_once_and_defaults_apply() {
    let mut r = rig(Options {
        profiles: crate::profiles::builtin(),
        ..Options::default()
    });
    *r.focus.lock().unwrap() = Err(FocusError::Unsupported("GNOME does not tell".into()));
    dictate_one_two(&mut r);
    dictate_one_two(&mut r);
    let notices: Vec<_> = r
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, DictationEvent::Notice { .. }))
        .cloned()
        .collect();
    assert_eq!(
        notices,
        [DictationEvent::Notice {
            message: "GNOME does not tell".into()
        }]
    );
    assert_eq!(r.delivered(), ["one two", "one two"]);
    assert!(r
        .hows
        .lock()
        .unwrap()
        .iter()
        .all(|h| *h == OutputConfig::default().delivery()));
}

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

mod rewrite {
    //! The AI step against a loopback chat-completions server (the external
    //! boundary): the model's text goes out, and whatever goes wrong, the
    //! dictated text does, with a notice.

    use super::*;
    use crate::dictation::rewrite_step::COMMAND_MODE;
    use utter_rewrite::{Notice, ProviderConfig, ProviderKind, RewriteConfig};
    use utter_test_support::chat;
    use utter_test_support::http::{Reply, Server};

    fn rewriting(server: &Server, budget_ms: u32) -> Option<RewriteConfig> {
        Some(RewriteConfig {
            enabled: true,
            provider: ProviderConfig {
                kind: ProviderKind::LlamaCpp,
                base_url: Some(server.url("/v1")),
                model: "loopback-model".into(),
                time_budget_ms: budget_ms,
            },
            ..RewriteConfig::default()
        })
    }

    /// One dictation of two words, as the user says it.
    fn dictate(r: &mut Rig) {
        r.key(TriggerKey::Main, true);
        r.hear(tone(400));
        r.hear(silence(400));
        r.hear(tone(400));
        r.key(TriggerKey::Main, false);
        r.settle();
    }

    fn report(r: &Rig) -> Option<RewriteReport> {
        r.events.lock().unwrap().iter().find_map(|e| match e {
            DictationEvent::TextDelivered { rewrite, .. } => rewrite.clone(),
            _ => None,
        })
    }

    fn notices(r: &Rig) -> Vec<String> {
        r.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                DictationEvent::Notice { message } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_models_text_goes_out_and_the_dictated_text_is_kept_beside_it() {
        let server = Server::start(|path| match path {
            "/v1/chat/completions" => chat::streamed(&["One, ", "two."], Duration::from_millis(10)),
            _ => Reply::status(404),
        });
        let mut r = rig(Options {
            rewrite: rewriting(&server, 5_000),
            ..Options::default()
        });
        dictate(&mut r);
        assert_eq!(r.delivered(), ["One, two."]);
        let kinds = r.kinds();
        let at = |k: &str| kinds.iter().position(|x| x == k).unwrap();
        assert!(at("rewriting") < at("text_delivered"), "{kinds:?}");
        let report = report(&r).unwrap();
        assert_eq!(report.dictated, "one two");
        assert_eq!(report.mode, "clean-up");
        assert_eq!(report.model.as_deref(), Some(chat::MODEL));
        assert_eq!(report.notice, None);
        let sent = server.received();
        assert_eq!(sent.len(), 1);
        let body = sent[0].body_text();
        assert!(body.contains("one two"), "the dictation is sent: {body}");
        assert!(body.contains("Ana"), "with the vocabulary: {body}");
        assert_eq!(r.record_status(), ["delivered"]);
    }

    #[test]
    fn a_failing_server_delivers_the_dictated_text_with_the_reason() {
        let server = Server::start(|_| chat::error(500, "model crashed"));
        let mut r = rig(Options {
            rewrite: rewriting(&server, 5_000),
            ..Options::default()
        });
        dictate(&mut r);
        assert_eq!(r.delivered(), ["one two"]);
        let report = report(&r).unwrap();
        assert_eq!(report.model, None);
        assert!(
            matches!(report.notice, Some(Notice::ServerError { status: 500, .. })),
            "{report:?}"
        );
        assert_eq!(
            notices(&r),
            ["Delivered as dictated: The server answered with error 500: model crashed."]
        );
    }

    #[test]
    fn a_model_slower_than_the_budget_costs_at_most_the_budget() {
        let server = Server::start(|_| {
            chat::streamed(&["One, ", "two."], Duration::from_millis(10))
                .delay(Duration::from_secs(5))
        });
        let mut r = rig(Options {
            rewrite: rewriting(&server, 400),
            ..Options::default()
        });
        let started = Instant::now();
        dictate(&mut r);
        let took = started.elapsed();
        assert_eq!(r.delivered(), ["one two"]);
        assert!(
            matches!(report(&r).unwrap().notice, Some(Notice::TimedOut { .. })),
            "{:?}",
            report(&r)
        );
        assert!(took < Duration::from_secs(3), "took {took:?}");
    }

    #[test]
    fn a_profile_can_turn_the_rewrite_off_in_its_apps() {
        let server = Server::start(|_| chat::streamed(&["Rewritten."], Duration::ZERO));
        let mut r = rig(Options {
            rewrite: rewriting(&server, 5_000),
            profiles: vec![Profile {
                name: "Terminal".into(),
                apps: vec!["xterm".into()],
                rewrite: Some(utter_rewrite::modes::OFF.into()),
                ..Profile::default()
            }],
            ..Options::default()
        });
        *r.focus.lock().unwrap() = Ok(FocusedApp::new("xterm", []));
        dictate(&mut r);
        assert_eq!(r.delivered(), ["one two"]);
        assert_eq!(report(&r), None);
        assert_eq!(server.requests(), 0, "nothing was sent");
        *r.focus.lock().unwrap() = Ok(FocusedApp::new("gedit", []));
        dictate(&mut r);
        assert_eq!(r.delivered(), ["one two", "Rewritten."]);
    }

    #[test]
    fn cancel_while_the_model_answers_delivers_nothing() {
        let server = Server::start(|_| {
            chat::streamed(&["Late."], Duration::ZERO).delay(Duration::from_millis(800))
        });
        let mut r = rig(Options {
            rewrite: rewriting(&server, 5_000),
            ..Options::default()
        });
        r.key(TriggerKey::Main, true);
        r.hear(tone(400));
        r.key(TriggerKey::Main, false);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !matches!(r.service.phase, Phase::Rewriting { .. }) {
            assert!(Instant::now() < deadline, "{:?}", r.kinds());
            r.service.tick();
            std::thread::sleep(Duration::from_millis(2));
        }
        r.key(TriggerKey::Cancel, true);
        r.settle();
        std::thread::sleep(Duration::from_millis(1000));
        r.service.tick();
        assert!(r.delivered().is_empty());
        assert_eq!(r.record_status(), ["cancelled"]);
    }

    /// A spoken command over selected text: press the command key, speak,
    /// release.
    fn command(r: &mut Rig) {
        r.key(TriggerKey::Command, true);
        r.hear(tone(400));
        r.hear(silence(400));
        r.hear(tone(400));
        r.key(TriggerKey::Command, false);
        r.settle();
    }

    #[test]
    fn a_spoken_command_replaces_the_selection_with_the_models_answer() {
        let server = Server::start(|_| chat::streamed(&["THE REPORT ", "IS LATE"], Duration::ZERO));
        let mut r = rig(Options {
            rewrite: rewriting(&server, 5_000),
            ..Options::default()
        });
        *r.selection.lock().unwrap() = Some("the report is late".into());
        command(&mut r);
        assert_eq!(r.delivered(), ["THE REPORT IS LATE"]);
        assert!(
            !r.hows.lock().unwrap()[0].trailing_space,
            "nothing is added after the selection's replacement"
        );
        let started = r.events.lock().unwrap().iter().find_map(|e| match e {
            DictationEvent::RecordingStarted { command, .. } => command.clone(),
            _ => None,
        });
        assert_eq!(
            started,
            Some(CommandStarted {
                selection_chars: 18
            })
        );
        let report = report(&r).unwrap();
        assert_eq!(report.mode, COMMAND_MODE);
        assert_eq!(report.dictated, "one two", "the instruction as said");
        assert_eq!(report.selection.as_deref(), Some("the report is late"));
        let request: serde_json::Value =
            serde_json::from_str(&server.received()[0].body_text()).unwrap();
        let sent = request.to_string();
        assert!(
            sent.contains("one two") && sent.contains("the report is late"),
            "{sent}"
        );
        // The next press of the main key is a dictation again, not rewritten
        // in command mode.
        dictate(&mut r);
        assert_eq!(server.requests(), 2);
        assert_eq!(report_modes(&r), ["command", "clean-up"]);
    }

    fn report_modes(r: &Rig) -> Vec<String> {
        r.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                DictationEvent::TextDelivered {
                    rewrite: Some(report),
                    ..
                } => Some(report.mode.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_command_the_model_fails_leaves_the_selection_alone_and_says_why() {
        let server = Server::start(|_| chat::error(500, "model crashed"));
        let mut r = rig(Options {
            rewrite: rewriting(&server, 5_000),
            ..Options::default()
        });
        *r.selection.lock().unwrap() = Some("keep me".into());
        command(&mut r);
        assert!(r.delivered().is_empty(), "{:?}", r.delivered());
        let report = report(&r).unwrap();
        assert_eq!(report.dictated, "one two", "what was said is kept");
        assert!(matches!(report.notice, Some(Notice::ServerError { .. })));
        assert!(
            notices(&r)
                .iter()
                .any(|n| n
                    .starts_with("The command was not carried out; the selection is unchanged")),
            "{:?}",
            notices(&r)
        );
    }

    #[test]
    fn the_command_key_without_the_rewrite_says_what_to_turn_on() {
        let mut r = rig(Options::default());
        r.key(TriggerKey::Command, true);
        r.key(TriggerKey::Command, false);
        assert!(r.kinds().contains(&"error".to_string()), "{:?}", r.kinds());
        assert!(matches!(r.service.phase, Phase::Idle));
        assert!(r.delivered().is_empty());
    }
}
