//! The dictation service: the one thread where key events, control messages,
//! microphone audio and engine results are serialised, so a press and a
//! release can never race. It owns the microphone (opened on demand) and the
//! dictation in hand, in one `Phase` at a time (Idle → Recording → PostRoll →
//! Finishing → Idle; a cancel from any of them back to Idle), with the
//! [`Trigger`] deciding each transition from the control message and the
//! stage. Keys arrive as [`Control::Key`] messages and text leaves through a
//! [`TextSink`], so nothing here touches the OS.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, Receiver};
use utter_postprocess::{continues_sentence, Placeholder, Processed, TextRules};

use crate::audio::capture::{Capture, CaptureError, CaptureEvent};
use crate::audio::wav::WavRecorder;
use crate::engine::{Engine, EngineNotice};
use crate::platform::focus::{FocusError, FocusProbe};
use crate::platform::hotkeys::RecordingKeys;
use crate::platform::output::selection::SelectionReader;
use crate::platform::output::{Delivery, OutputConfig, TextSink};
use crate::profiles::{Profile, ProfileSet};
use crate::vad::SpeechDetector;

use super::defaults;
use super::events::CommandStarted;
use super::events::DictationEvent;
use super::record_log::{self, RecordingRecord, RecordingStatus};
use super::rewrite_step::{PendingRewrite, RewriteReport, RewriteStep};
use super::session::{post_roll_done, Dictation, DictationConfig, Purpose, NOT_SAVED};
use super::strategy::LiveStrategy;
use super::trigger::{Intent, Stage, Trigger};
use crate::control::{Control, TriggerMode};

/// Everything the service needs to know, resolved at the edge.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    pub hotkey: String,
    pub mode: TriggerMode,
    pub latch_key: String,
    pub cancel_key: String,
    pub paste_last_key: Option<String>,
    /// Held to speak an instruction for the selected text (AI command
    /// mode); bound only while the AI rewrite is on.
    pub command_key: Option<String>,
    pub device: Option<String>,
    /// When the microphone is open: only while recording (the default), or
    /// ready between dictations.
    pub mic: MicMode,
    /// Audio kept after the key is released, so the last word is not cut.
    pub post_roll: Duration,
    pub output: OutputConfig,
    pub dictation: DictationConfig,
    pub recordings_dir: PathBuf,
    /// Finished recordings whose audio is kept.
    pub keep_recordings: usize,
    pub model_name: String,
    /// Replacements, spoken punctuation and clean-up for each dictation.
    pub text_rules: TextRules,
    /// Per-app overrides, chosen by the app focused at the press.
    pub profiles: ProfileSet,
    /// The AI rewrite after the text rules; `None` when it is off.
    pub rewrite: Option<RewriteStep>,
    /// Report the mic level (~20 per second) while recording, for level meters.
    pub emit_levels: bool,
}

impl ServiceConfig {
    pub fn new(model_name: String) -> Self {
        Self {
            hotkey: defaults::HOTKEY.into(),
            mode: TriggerMode::PushToTalk,
            latch_key: defaults::LATCH_KEY.into(),
            cancel_key: defaults::CANCEL_KEY.into(),
            paste_last_key: None,
            command_key: None,
            device: None,
            mic: MicMode::Ready,
            post_roll: Duration::from_millis(defaults::POST_ROLL_MS),
            output: OutputConfig::default(),
            dictation: DictationConfig::defaults(),
            recordings_dir: crate::paths::recordings_dir(),
            keep_recordings: defaults::KEEP_RECORDINGS,
            model_name,
            text_rules: TextRules::default(),
            profiles: ProfileSet::default(),
            rewrite: None,
            emit_levels: false,
        }
    }
}

/// When the microphone is open.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum MicMode {
    /// Open while dictation is on, so the press starts no device: the
    /// 300 ms before the press are kept as pre-roll. The system shows its
    /// recording indicator the whole time (macOS's orange dot, GNOME's
    /// microphone icon), and the sound server's client costs ~2 % of a core.
    /// The default: with the microphone opened at the press, the desktop
    /// suite's first-word test still lost the first word (2026-12-03).
    #[default]
    Ready,
    /// Opened at the press, closed after each dictation: the
    /// indicator shows only while dictating and nothing runs between
    /// dictations. Opening takes ~16 ms on PulseAudio (more on Windows and
    /// macOS; seconds for a Bluetooth headset); the engine gets 300 ms of
    /// silence before the first sample, which is what kept the first word
    /// (docs/benchmarks.md, "The first word").
    OnPress,
}

impl MicMode {
    fn keeps_open(self) -> bool {
        self == Self::Ready
    }
}

/// The microphone as the service sees it.
pub trait Microphone {
    /// Opens the device; audio and loss events arrive on the receiver.
    fn open(&mut self) -> Result<(), CaptureError>;
    /// The open device's events (a never-ready channel when closed).
    fn events(&self) -> Receiver<CaptureEvent>;
    /// Closes the device and returns the audio it still had buffered.
    fn close(&mut self) -> Vec<Vec<f32>>;
    fn is_open(&self) -> bool;
    /// RMS level of the latest audio.
    fn level(&self) -> f32;
    fn name(&self) -> Option<String>;
}

/// The real microphone, through cpal.
pub struct CpalMicrophone {
    device: Option<String>,
    capture: Option<Capture>,
}

impl CpalMicrophone {
    pub fn new(device: Option<String>) -> Self {
        Self {
            device,
            capture: None,
        }
    }
}

impl Microphone for CpalMicrophone {
    fn open(&mut self) -> Result<(), CaptureError> {
        self.capture = Some(Capture::open(self.device.as_deref())?);
        Ok(())
    }

    fn events(&self) -> Receiver<CaptureEvent> {
        self.capture
            .as_ref()
            .map(|c| c.events.clone())
            .unwrap_or_else(never)
    }

    fn close(&mut self) -> Vec<Vec<f32>> {
        let Some(capture) = self.capture.take() else {
            return Vec::new();
        };
        let rx = capture.events.clone();
        capture.close(); // delivers what was still buffered
        rx.try_iter()
            .filter_map(|ev| match ev {
                CaptureEvent::Audio(pcm) => Some(pcm),
                _ => None,
            })
            .collect()
    }

    fn is_open(&self) -> bool {
        self.capture.is_some()
    }

    fn level(&self) -> f32 {
        self.capture.as_ref().map_or(0.0, |c| c.level())
    }

    fn name(&self) -> Option<String> {
        self.capture.as_ref().map(|c| c.info.device.clone())
    }
}

/// The service's ends towards the OS, built by the caller on the service thread.
pub struct ServiceIo {
    pub keys: Box<dyn RecordingKeys>,
    pub sink: Box<dyn TextSink>,
    pub mic: Box<dyn Microphone>,
    /// Which app the user dictates into (for its profile).
    pub focus: Box<dyn FocusProbe>,
    /// The selected text, for a spoken command.
    pub selection: Box<dyn SelectionReader>,
}

/// With the mic ready ([`MicMode::Ready`]), the moments before the press are kept as pre-roll.
const PREROLL_SAMPLES: usize = crate::audio::ms_to_samples(300) as usize;
/// With the mic opened at the press ([`MicMode::OnPress`]) there is no
/// pre-roll: speech said at the press starts at the recording's first
/// sample, and the voice detector and the engine, given no quiet before the
/// first sound, drop or mishear the first word (docs/benchmarks.md, "The
/// first word"). This much silence goes first instead, as long as the
/// ready microphone's pre-roll, so both modes give the engine the same.
const LEAD_IN_SAMPLES: usize = PREROLL_SAMPLES;
/// A dictation this soon after one that ended mid-sentence continues it.
const CONTINUE_SENTENCE_WITHIN: Duration = Duration::from_secs(60);

/// Where the dictation in hand is; each phase holds what it needs.
enum Phase {
    Idle,
    /// The key is down (or latched, or toggled on): audio goes into the dictation.
    Recording(Dictation),
    /// Released at `released`: audio still goes in until the post-roll is over.
    PostRoll {
        dictation: Dictation,
        released: Instant,
    },
    /// All audio is in: the engine finishes the text.
    Finishing(Dictation),
    /// The text is ready and the language model is rewriting it.
    Rewriting {
        dictation: Dictation,
        /// The text rules' output, as `TextDelivered` reports it.
        raw: Option<String>,
        rewrite: PendingRewrite,
    },
}

impl Phase {
    fn dictation(&self) -> Option<&Dictation> {
        match self {
            Self::Idle => None,
            Self::Recording(d)
            | Self::PostRoll { dictation: d, .. }
            | Self::Finishing(d)
            | Self::Rewriting { dictation: d, .. } => Some(d),
        }
    }

    fn dictation_mut(&mut self) -> Option<&mut Dictation> {
        match self {
            Self::Idle => None,
            Self::Recording(d)
            | Self::PostRoll { dictation: d, .. }
            | Self::Finishing(d)
            | Self::Rewriting { dictation: d, .. } => Some(d),
        }
    }

    fn stage(&self) -> Stage {
        match self {
            Self::Idle => Stage::Idle,
            Self::Recording(_) => Stage::Recording,
            Self::PostRoll { .. } | Self::Finishing(_) | Self::Rewriting { .. } => Stage::Finishing,
        }
    }
}

/// The service's state; one handler per kind of input.
struct Service<E: FnMut(DictationEvent)> {
    config: ServiceConfig,
    engine: Engine,
    vad: SpeechDetector,
    io: ServiceIo,
    emit: E,
    trigger: Trigger,
    /// How each dictation's speech reaches this engine.
    strategy: LiveStrategy,
    phase: Phase,
    next_id: u64,
    last_text: String,
    /// When `last_text` went out: a dictation soon after it may continue its sentence.
    last_delivered: Option<Instant>,
    /// Told to shut down: the service ends once the dictation in hand is out.
    shutting_down: bool,
    preroll: VecDeque<f32>,
    level_sent: Instant,
    /// Told once that profiles cannot switch on this desktop.
    focus_unsupported_told: bool,
}

impl<E: FnMut(DictationEvent)> Service<E> {
    fn new(
        config: ServiceConfig,
        engine: Engine,
        vad: SpeechDetector,
        io: ServiceIo,
        mut emit: E,
    ) -> Self {
        let strategy = LiveStrategy::resolve(config.dictation.strategy, engine.info())
            .unwrap_or_else(|e| {
                emit(DictationEvent::Error {
                    message: e.to_string(),
                });
                LiveStrategy::for_model(engine.info())
            });
        Self {
            trigger: Trigger::new(config.mode),
            strategy,
            config,
            engine,
            vad,
            io,
            emit,
            phase: Phase::Idle,
            next_id: 1,
            last_text: String::new(),
            last_delivered: None,
            shutting_down: false,
            preroll: VecDeque::new(),
            level_sent: Instant::now(),
            focus_unsupported_told: false,
        }
    }

    fn recording(&self) -> bool {
        matches!(self.phase, Phase::Recording(_))
    }

    fn error(&mut self, message: String) {
        (self.emit)(DictationEvent::Error { message });
    }

    fn open_mic(&mut self) -> bool {
        if !self.io.mic.is_open() {
            if let Err(e) = self.io.mic.open() {
                self.error(e.to_string());
            }
        }
        self.io.mic.is_open()
    }

    fn announce_ready(&mut self) {
        if self.config.mic.keeps_open() {
            self.open_mic();
        }
        let mic = self
            .io
            .mic
            .name()
            .or_else(|| self.config.device.clone())
            .unwrap_or_else(|| "default".into());
        (self.emit)(DictationEvent::Ready {
            model: self.config.model_name.clone(),
            mic,
        });
    }

    fn on_control(&mut self, control: Control) {
        if control == Control::Shutdown {
            self.shutting_down = true;
        }
        if control == Control::SessionEnded {
            self.leave_unfinished();
            return;
        }
        match self.trigger.on_control(control, self.phase.stage()) {
            Some(Intent::Start) => self.start(Purpose::Dictation),
            Some(Intent::StartCommand) => self.start_command(),
            Some(Intent::Stop) => self.stop(),
            Some(Intent::Latch) => {
                if let Some(d) = self.phase.dictation() {
                    let id = d.id;
                    (self.emit)(DictationEvent::Latched { id });
                }
            }
            Some(Intent::Cancel) => self.cancel(),
            Some(Intent::PasteLast) if !self.last_text.is_empty() => {
                let (_, profile) = self.focused_profile();
                let how = delivery(&self.config.output, profile.as_ref());
                match self.io.sink.deliver(&self.last_text, &how) {
                    Ok(outcome) => self.notice(outcome.notice),
                    Err(e) => self.error(e.to_string()),
                }
            }
            Some(Intent::PasteLast) | None => {}
        }
    }

    fn on_audio(&mut self, event: CaptureEvent) {
        match event {
            CaptureEvent::Audio(pcm) => match &mut self.phase {
                Phase::Recording(d) | Phase::PostRoll { dictation: d, .. } => {
                    d.push_audio(&pcm, &mut self.vad, &self.engine, &mut self.emit)
                }
                Phase::Idle | Phase::Finishing(_) | Phase::Rewriting { .. } => {
                    self.preroll.extend(pcm);
                    let excess = self.preroll.len().saturating_sub(PREROLL_SAMPLES);
                    self.preroll.drain(..excess);
                }
            },
            CaptureEvent::Lost(e) => {
                self.error(e.to_string());
                self.io.mic.close();
                // The dictation keeps what was captured before the device went away.
                self.stop();
                self.finish_audio();
            }
        }
    }

    /// AI command mode: the selection is read now, at the press, while the
    /// app the user selected in still has the focus.
    fn start_command(&mut self) {
        if !matches!(self.phase, Phase::Idle) {
            return;
        }
        if self.config.rewrite.is_none() {
            self.error(
                "AI command mode needs the AI rewrite on (Settings → AI, or `--rewrite`)".into(),
            );
            return;
        }
        let selection = match self.io.selection.selected_text() {
            Ok(selection) => selection,
            Err(e) => {
                self.error(format!(
                    "cannot read the selected text ({e}); the command is answered without it"
                ));
                None
            }
        };
        self.start(Purpose::Command { selection });
    }

    fn start(&mut self, purpose: Purpose) {
        let opened_at_press = !self.io.mic.is_open();
        if !matches!(self.phase, Phase::Idle) || !self.open_mic() {
            return;
        }
        // A model unloaded while idle loads while the user speaks.
        self.engine.prewarm();
        let path = record_log::new_recording_path(&self.config.recordings_dir);
        let recorder = match WavRecorder::create(&path) {
            Ok(recorder) => Some(recorder),
            Err(e) => {
                // A full disk must not cost the dictation: it goes on in
                // memory. A stub file would look unfinished to the recovery pass.
                let _ = std::fs::remove_file(&path);
                self.error(format!(
                    "{}: cannot create the recording: {e}. {NOT_SAVED}",
                    path.display()
                ));
                None
            }
        };
        let (app, profile) = self.focused_profile();
        let config = self.dictation_config(profile.as_ref());
        let language = config.language.clone();
        let mut d = Dictation::start(
            self.next_id,
            &path,
            recorder,
            config,
            self.strategy,
            &mut self.vad,
            &self.engine,
        )
        .with_profile(profile)
        .with_purpose(purpose);
        // Grab cancel/latch before announcing, so an immediate press is not lost.
        self.io.keys.set_recording(true);
        (self.emit)(DictationEvent::RecordingStarted {
            id: d.id,
            audio_path: path.display().to_string(),
            app,
            profile: d.profile().map(|p| p.name.clone()),
            language,
            command: match d.purpose() {
                Purpose::Dictation => None,
                Purpose::Command { selection } => Some(CommandStarted {
                    selection_chars: selection.as_ref().map_or(0, |s| s.chars().count()),
                }),
            },
        });
        let mut pre: Vec<f32> = self.preroll.drain(..).collect();
        if opened_at_press {
            pre = vec![0.0; LEAD_IN_SAMPLES];
        }
        if !pre.is_empty() {
            d.push_audio(&pre, &mut self.vad, &self.engine, &mut self.emit);
        }
        self.next_id += 1;
        self.phase = Phase::Recording(d);
    }

    /// The focused app's name and its profile, asked at the press. Where the
    /// desktop cannot tell, the user is told once (when they have profiles).
    fn focused_profile(&mut self) -> (Option<String>, Option<Profile>) {
        match self.io.focus.focused() {
            Ok(app) => {
                let profile = self.config.profiles.for_app(&app).cloned();
                (Some(app.id), profile)
            }
            Err(FocusError::Unsupported(why)) => {
                if !self.focus_unsupported_told && !self.config.profiles.is_empty() {
                    self.focus_unsupported_told = true;
                    (self.emit)(DictationEvent::Notice { message: why });
                }
                (None, None)
            }
            Err(e) => {
                tracing::debug!("no focused app: {e}");
                (None, None)
            }
        }
    }

    /// The dictation's settings with `profile`'s language and words. A
    /// language the model does not know is said, and the settings' kept.
    fn dictation_config(&mut self, profile: Option<&Profile>) -> DictationConfig {
        let mut config = self.config.dictation.clone();
        let Some(profile) = profile else {
            return config;
        };
        if let Some(language) = &profile.language {
            match self.engine.info().check_language(language.code()) {
                Ok(()) => config.language = language.code().map(str::to_owned),
                Err(e) => self.error(format!("profile `{}`: {e}", profile.name)),
            }
        }
        if !profile.vocabulary.is_empty() {
            config.vocabulary = profile.vocabulary_before(&config.vocabulary);
        }
        config
    }

    /// The key was released (or the mic lost): the post-roll starts. The
    /// cancel key stays grabbed until the text is out.
    fn stop(&mut self) {
        self.phase = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Recording(d) => {
                let (id, audio_ms) = (d.id, d.audio_ms());
                (self.emit)(DictationEvent::RecordingStopped { id, audio_ms });
                Phase::PostRoll {
                    dictation: d,
                    released: Instant::now(),
                }
            }
            other => other,
        };
    }

    fn cancel(&mut self) {
        let mut d = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Idle => return,
            Phase::Recording(d)
            | Phase::PostRoll { dictation: d, .. }
            | Phase::Finishing(d)
            | Phase::Rewriting { dictation: d, .. } => d,
        };
        d.abort(&self.engine);
        (self.emit)(DictationEvent::Cancelled { id: d.id });
        self.io.keys.set_recording(false);
        self.write_record(&d, RecordingStatus::Cancelled, String::new());
        if !self.config.mic.keeps_open() {
            self.io.mic.close();
        }
        // Nothing to wait for: the cancel reaches only this dictation's
        // run, and its late reply goes to a handle dropped here.
    }

    /// The desktop session ended: no text can reach an app any more, and
    /// waiting for the engine would keep a logout waiting. The dictation in
    /// hand stops here with its WAV finished and no sidecar, as after a
    /// crash, so the next start transcribes it (`recover_unfinished`).
    fn leave_unfinished(&mut self) {
        self.shutting_down = true;
        let mut d = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Idle => return,
            Phase::Recording(d)
            | Phase::PostRoll { dictation: d, .. }
            | Phase::Finishing(d)
            | Phase::Rewriting { dictation: d, .. } => d,
        };
        d.abort(&self.engine);
        (self.emit)(DictationEvent::Notice {
            message: format!(
                "the desktop session ended during a dictation: its recording ({}) is kept and \
                 will be transcribed at the next start",
                d.audio_path().display()
            ),
        });
        self.io.keys.set_recording(false);
    }

    /// Runs after every input and on idle wake-ups: levels, the end of the
    /// post-roll, and engine replies.
    fn tick(&mut self) {
        if self.config.emit_levels
            && self.recording()
            && self.level_sent.elapsed() >= Duration::from_millis(50)
            && self.io.mic.is_open()
        {
            (self.emit)(DictationEvent::Level {
                rms: self.io.mic.level(),
            });
            self.level_sent = Instant::now();
        }
        self.finish_audio_after_post_roll();
        self.on_engine_replies();
        self.on_rewrite_done();
        for message in self.vad.notices() {
            (self.emit)(DictationEvent::EngineRestarted {
                on_cpu: false,
                message,
            });
        }
        for notice in self.engine.notices() {
            let message = notice.to_string();
            (self.emit)(match notice {
                EngineNotice::LoadedOnCpu { .. } => DictationEvent::Notice { message },
                EngineNotice::FellBackToCpu { .. } => DictationEvent::EngineRestarted {
                    on_cpu: true,
                    message,
                },
                EngineNotice::Restarted { .. } => DictationEvent::EngineRestarted {
                    on_cpu: false,
                    message,
                },
            });
        }
    }

    /// Post-roll over (or the user had already stopped speaking, so the
    /// rest is silence).
    fn finish_audio_after_post_roll(&mut self) {
        if let Phase::PostRoll {
            dictation,
            released,
        } = &self.phase
        {
            if post_roll_done(
                released.elapsed(),
                self.config.post_roll,
                dictation.hearing_speech(),
            ) {
                self.finish_audio();
            }
        }
    }

    /// PostRoll → Finishing: close the mic (unless always open) and send the tail.
    fn finish_audio(&mut self) {
        let mut dictation = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::PostRoll { dictation, .. } => dictation,
            other => {
                self.phase = other; // nothing is being recorded
                return;
            }
        };
        if !self.config.mic.keeps_open() {
            for pcm in self.io.mic.close() {
                dictation.push_audio(&pcm, &mut self.vad, &self.engine, &mut self.emit);
            }
        }
        dictation.finish_audio(&mut self.vad, &self.engine, &mut self.emit);
        self.phase = Phase::Finishing(dictation);
    }

    /// Engine replies in any phase (eager runs go on while the user speaks);
    /// Finishing → Idle once the text is complete.
    fn on_engine_replies(&mut self) {
        let done = match &mut self.phase {
            Phase::Rewriting { .. } => false, // the engine is done with it
            phase => match phase.dictation_mut() {
                Some(d) => d.poll(&self.engine, &mut self.emit),
                None => false,
            },
        };
        if done && matches!(self.phase, Phase::Finishing(_)) {
            if let Phase::Finishing(d) = std::mem::replace(&mut self.phase, Phase::Idle) {
                self.text_ready(d);
            }
        }
    }

    /// Rewriting → Idle once the model has answered (or given up).
    fn on_rewrite_done(&mut self) {
        let Phase::Rewriting { rewrite, .. } = &mut self.phase else {
            return;
        };
        let Some((text, report)) = rewrite.poll() else {
            return;
        };
        if let Phase::Rewriting { dictation, raw, .. } =
            std::mem::replace(&mut self.phase, Phase::Idle)
        {
            let command = matches!(dictation.purpose(), Purpose::Command { .. });
            if let Some(notice) = &report.notice {
                let message = match command {
                    true => format!(
                        "The command was not carried out; the selection is unchanged: {notice}"
                    ),
                    false => format!("Delivered as dictated: {notice}"),
                };
                (self.emit)(DictationEvent::Notice { message });
            }
            // A command that failed leaves the selection alone: nothing goes out.
            let text = match (command, &report.notice) {
                (true, Some(_)) => String::new(),
                _ => text,
            };
            // The app's text rules (no final period in a chat) hold for the model's text too.
            let text = match dictation.profile() {
                Some(p) if report.model.is_some() => p.finish_text(text),
                _ => text,
            };
            self.deliver(dictation, text, raw, Some(report));
        }
    }

    /// The engine's text is complete: the text rules, then the AI rewrite
    /// (Finishing → Rewriting) or straight out (→ Idle).
    fn text_ready(&mut self, d: Dictation) {
        let continues = self
            .last_delivered
            .is_some_and(|t| t.elapsed() < CONTINUE_SENTENCE_WITHIN)
            && continues_sentence(&self.last_text);
        let profile = d.profile();
        let Processed {
            text,
            raw,
            snippets,
            unavailable,
        } = match profile {
            Some(p) => p
                .text_rules(&self.config.text_rules, &self.config.dictation.vocabulary)
                .dictation(&d.text(), continues),
            None => self.config.text_rules.dictation(&d.text(), continues),
        };
        if !unavailable.is_empty() {
            self.notice(Some(placeholders_missing(&snippets, &unavailable)));
        }
        let text = match profile {
            Some(p) => p.finish_text(text),
            None => text,
        };
        if let Purpose::Command { selection } = d.purpose() {
            let selection = selection.clone();
            return self.command_ready(d, selection, text, raw);
        }
        // A partial text (the engine failed) is delivered as it is, and a
        // snippet's stored text as stored.
        let mode = match (&self.config.rewrite, d.failed()) {
            (Some(step), None) if !text.trim().is_empty() && snippets.is_empty() => {
                rewrite_mode(step, profile).map(|mode| (step, mode))
            }
            _ => None,
        };
        match mode {
            Some((step, mode)) => {
                let rewrite = step.start(&mode, &text, d.vocabulary());
                self.await_rewrite(d, raw, rewrite);
            }
            None => self.deliver(d, text, raw, None),
        }
    }

    /// A spoken command's words are in: off to the model with the selection.
    fn command_ready(
        &mut self,
        d: Dictation,
        selection: Option<String>,
        instruction: String,
        raw: Option<String>,
    ) {
        let step = match (&self.config.rewrite, d.failed()) {
            (Some(step), None) if !instruction.trim().is_empty() => step,
            // Nothing said, or the engine failed on it: nothing to carry out.
            _ => return self.deliver(d, String::new(), raw, None),
        };
        let rewrite = step.start_command(&instruction, selection.as_deref(), d.vocabulary());
        self.await_rewrite(d, raw, rewrite);
    }

    /// → Rewriting: the model has the text; `on_rewrite_done` takes it from here.
    fn await_rewrite(&mut self, d: Dictation, raw: Option<String>, rewrite: PendingRewrite) {
        (self.emit)(DictationEvent::Rewriting {
            id: d.id,
            mode: rewrite.mode().to_string(),
        });
        self.phase = Phase::Rewriting {
            dictation: d,
            raw,
            rewrite,
        };
    }

    /// Out it goes: to the focused app, the recording's sidecar, and the UI.
    fn deliver(
        &mut self,
        d: Dictation,
        text: String,
        raw: Option<String>,
        rewrite: Option<RewriteReport>,
    ) {
        self.io.keys.set_recording(false);
        let profile = d.profile();
        let command = matches!(d.purpose(), Purpose::Command { .. });
        let mut how = delivery(&self.config.output, profile);
        // A command's answer replaces the selection: nothing is added after it.
        how.trailing_space &= !command;
        let status = if text.is_empty() {
            RecordingStatus::NoSpeech
        } else {
            RecordingStatus::Delivered
        };
        let delivered = if text.is_empty() {
            Ok(None)
        } else {
            self.io.sink.deliver(&text, &how).map(Some)
        };
        match &delivered {
            Ok(outcome) => self.notice(outcome.as_ref().and_then(|o| o.notice.clone())),
            Err(e) => self.error(e.to_string()),
        }
        // The sidecar marks the recording finished only once the text is out
        // (on a delivery or engine error it stays unfinished: the next start
        // transcribes it again). It is written before `text_delivered`, so
        // whoever sees that event finds the recording finished.
        if delivered.is_ok() && d.failed().is_none() {
            self.write_record(&d, status, text.clone());
        }
        (self.emit)(DictationEvent::TextDelivered {
            id: d.id,
            text: text.clone(),
            // The method that delivered (a paste that fell back says clipboard).
            output: match &delivered {
                Ok(Some(outcome)) => outcome.delivered.method(),
                _ => how.method,
            }
            .name()
            .to_string(),
            engine_ms: d.engine_ms(),
            segments: d.segments(),
            delivered: delivered.ok().flatten().map(|o| o.delivered),
            raw_text: raw,
            error: d.failed().map(str::to_string),
            warning: d.coverage_warning(),
            rewrite,
        });
        if !text.is_empty() && !command {
            self.last_text = text;
            self.last_delivered = Some(Instant::now());
        }
        record_log::prune(&self.config.recordings_dir, self.config.keep_recordings);
    }

    /// Tells the user what the delivery needs them to know.
    fn notice(&mut self, notice: Option<String>) {
        if let Some(message) = notice {
            (self.emit)(DictationEvent::Notice { message });
        }
    }

    fn write_record(&self, d: &Dictation, status: RecordingStatus, text: String) {
        let _ = record_log::write_record(
            d.audio_path(),
            &RecordingRecord {
                status,
                text,
                model: self.config.model_name.clone(),
                audio_ms: d.audio_ms(),
                finished_unix_ms: record_log::unix_ms(),
            },
        );
    }

    fn finished(&self) -> bool {
        self.shutting_down && matches!(self.phase, Phase::Idle)
    }
}

/// The rewrite mode for a dictation in `profile`'s app: the profile's, or
/// the settings'; `None` where that one is `off`.
fn rewrite_mode(step: &RewriteStep, profile: Option<&Profile>) -> Option<String> {
    let mode = profile
        .and_then(|p| p.rewrite.as_deref())
        .unwrap_or(step.mode());
    (mode != utter_rewrite::modes::OFF).then(|| mode.to_string())
}

/// How text goes out: the output settings with `profile`'s overrides.
pub fn delivery(output: &OutputConfig, profile: Option<&Profile>) -> Delivery {
    let mut how = output.delivery();
    if let Some(p) = profile {
        how.method = p.output.unwrap_or(how.method);
        how.paste_keys = p.paste_keys.unwrap_or(how.paste_keys);
        how.trailing_space = p.trailing_space.unwrap_or(how.trailing_space);
    }
    how
}

/// Runs until `Control::Shutdown` (or the control channel closes).
pub fn run(
    config: ServiceConfig,
    engine: Engine,
    vad: SpeechDetector,
    mut control: Receiver<Control>,
    io: ServiceIo,
    emit: impl FnMut(DictationEvent),
) {
    let mut service = Service::new(config, engine, vad, io, emit);
    service.announce_ready();
    while !service.finished() {
        let mut closed = false;
        let audio = service.io.mic.events();
        // Busy only while a dictation is in flight; idle, wake rarely (CPU ≈ 0).
        let idle = match service.phase {
            Phase::Idle => Duration::from_secs(1),
            _ => Duration::from_millis(10),
        };
        select! {
            recv(control) -> msg => match msg {
                Ok(msg) => service.on_control(msg),
                Err(_) => {
                    // Nobody can send any more: finish what is in flight, then return.
                    closed = true;
                    service.on_control(Control::Shutdown);
                }
            },
            recv(audio) -> ev => match ev {
                Ok(ev) => service.on_audio(ev),
                Err(_) => { service.io.mic.close(); }
            },
            default(idle) => {}
        }
        if closed {
            control = never();
        }
        service.tick();
    }
}

/// What the user is told when a snippet's placeholder had no value.
fn placeholders_missing(triggers: &[String], unavailable: &[Placeholder]) -> String {
    let names: Vec<String> = unavailable.iter().map(Placeholder::to_string).collect();
    let why = if unavailable.contains(&Placeholder::Clipboard) {
        " (the clipboard held no text)"
    } else {
        ""
    };
    format!(
        "The snippet \"{}\" was inserted without {}{why}.",
        triggers.join("\", \""),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests;
