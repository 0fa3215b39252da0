//! The fakes the service talks to (keys, sink, focus, selection,
//! microphone, an engine that names the stretches of tone it hears) and the
//! rig that drives the service through them.

use super::*;

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
    /// The submit keys pressed.
    submits: Log<Submit>,
    /// Edit commands' keys pressed, and how many times.
    edits: Log<(EditKey, usize)>,
    fail: bool,
}

impl TextSink for FakeSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        if self.fail {
            return Err(DesktopError::Keys(
                "cannot simulate key presses: the target app went away".into(),
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

    fn press_submit(&mut self, key: Submit) -> Result<(), DesktopError> {
        self.submits.lock().unwrap().push(key);
        Ok(())
    }

    fn press_keys(&mut self, key: EditKey, times: usize) -> Result<(), DesktopError> {
        self.edits.lock().unwrap().push((key, times));
        Ok(())
    }
}

/// Other audio: what the service asked of it, in order.
struct FakeOtherAudio(Log<&'static str>);

impl OtherAudio for FakeOtherAudio {
    fn lower(&mut self) -> Result<usize, String> {
        self.0.lock().unwrap().push("lower");
        Ok(1)
    }
    fn restore(&mut self) -> Result<(), String> {
        self.0.lock().unwrap().push("restore");
        Ok(())
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
    fn selected_text(&mut self) -> Result<Option<String>, DesktopError> {
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

pub(super) struct Rig {
    pub(super) service: Service<Box<dyn FnMut(DictationEvent)>>,
    pub(super) events: Log<DictationEvent>,
    pub(super) grabs: Log<bool>,
    pub(super) delivered: Log<String>,
    pub(super) hows: Log<Delivery>,
    pub(super) submits: Log<Submit>,
    pub(super) edits: Log<(EditKey, usize)>,
    pub(super) other_audio: Log<&'static str>,
    pub(super) focus: Arc<Mutex<Result<FocusedApp, FocusError>>>,
    pub(super) selection: Arc<Mutex<Option<String>>>,
    pub(super) audio: Sender<CaptureEvent>,
    pub(super) opens: Arc<AtomicUsize>,
    /// Engine runs so far.
    pub(super) runs: Arc<AtomicUsize>,
    pub(super) dir: tempfile::TempDir,
}

#[derive(Default)]
pub(super) struct Options {
    pub(super) mode: Option<TriggerMode>,
    pub(super) post_roll: Option<Duration>,
    pub(super) sink_fails: bool,
    pub(super) mic_broken: bool,
    pub(super) engine_delay: Duration,
    /// A streaming model (the audio goes to it directly, no VAD).
    pub(super) streaming: bool,
    /// Engine runs (1 = the first) that fail as a crashed worker does.
    pub(super) crashing_runs: Vec<usize>,
    pub(super) strategy: Option<LiveStrategy>,
    pub(super) profiles: Vec<Profile>,
    pub(super) mic_ready: bool,
    /// The AI step, against a loopback server.
    pub(super) rewrite: Option<utter_rewrite::RewriteConfig>,
    /// Hands-free stop.
    pub(super) stop_on_silence: Option<SilenceStop>,
    /// The key pressed after each text.
    pub(super) submit: Option<Submit>,
    /// The spoken submit's words (none: off).
    pub(super) spoken_submit: Vec<String>,
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

pub(super) fn rig(options: Options) -> Rig {
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
    config.stop_on_silence = options.stop_on_silence;
    config.output.submit = options.submit.unwrap_or_default();
    config.spoken_submit = options.spoken_submit.clone();
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
    let (events, grabs, delivered, hows, submits) = (log(), log(), log(), log(), log());
    let other_audio = log();
    let edits = log();
    let focus = Arc::new(Mutex::new(Err(FocusError::NoFocus)));
    let selection = Arc::new(Mutex::new(None));
    let (audio, rx) = unbounded();
    let opens = Arc::new(AtomicUsize::new(0));
    let io = ServiceIo {
        keys: Box::new(FakeKeys(grabs.clone())),
        sink: Box::new(FakeSink {
            delivered: delivered.clone(),
            hows: hows.clone(),
            submits: submits.clone(),
            edits: edits.clone(),
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
        other_audio: Box::new(FakeOtherAudio(other_audio.clone())),
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
        submits,
        edits,
        other_audio,
        focus,
        selection,
        audio,
        opens,
        runs,
        dir,
    }
}

/// 16 kHz samples: a loud tone (speech to the loudness VAD) or silence.
pub(super) fn tone(ms: usize) -> Vec<f32> {
    (0..ms * 16)
        .map(|i| 0.3 * (i as f32 * 0.08).sin())
        .collect()
}

pub(super) fn silence(ms: usize) -> Vec<f32> {
    vec![0.0; ms * 16]
}

impl Rig {
    pub(super) fn key(&mut self, key: TriggerKey, pressed: bool) {
        self.service.on_control(Control::Key { key, pressed });
        self.service.tick();
    }

    /// Feeds audio the way the capture thread would, through the mic's channel.
    pub(super) fn hear(&mut self, pcm: Vec<f32>) {
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

    pub(super) fn kinds(&self) -> Vec<String> {
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

    pub(super) fn settle(&mut self) {
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

    /// From now on the fake engine's `heard` is written as `written` (a
    /// replacement rule): what the user "said", for the text rules' sake.
    pub(super) fn hears_as(&mut self, heard: &str, written: &str) {
        self.service.config.text_rules = TextRules::new(&utter_postprocess::TextRulesConfig {
            replacements: vec![utter_postprocess::Replacement {
                heard: heard.into(),
                written: written.into(),
                regex: false,
            }],
            ..Default::default()
        })
        .unwrap();
    }

    /// Two words with a pause between them, said while `key` is held.
    pub(super) fn say_two_words(&mut self, key: TriggerKey) {
        self.key(key, true);
        self.hear(tone(400));
        self.hear(silence(400));
        self.hear(tone(400));
        self.key(key, false);
        self.settle();
    }

    /// The notices the service gave, in order.
    pub(super) fn notices(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                DictationEvent::Notice { message } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    pub(super) fn delivered(&self) -> Vec<String> {
        self.delivered.lock().unwrap().clone()
    }

    pub(super) fn record_status(&self) -> Vec<String> {
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

/// Holds the key over `tone` ms of speech and releases it.
pub(super) fn speak(r: &mut Rig, tone_ms: usize) {
    r.key(TriggerKey::Main, true);
    r.hear(tone(tone_ms));
    r.key(TriggerKey::Main, false);
}
