//! The dictation service: the one thread where key events, control messages,
//! microphone audio and engine results are serialised, so a press and a
//! release can never race. It owns the microphone (opened on demand) and the
//! dictation in hand, in one `Phase` at a time (Idle → Recording → PostRoll →
//! Finishing → Idle; a cancel from any of them back to Idle), with the
//! [`Trigger`] deciding each transition from the control message and the
//! stage. Keys arrive as [`Control::Key`] messages and text leaves through a
//! [`TextSink`], so nothing here touches the OS.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, Receiver, Select, TryRecvError};

use crate::audio::wav::WavRecorder;
use crate::profiles::Profile;
use utter_engine::vad::SpeechDetector;
use utter_engine::{Engine, EngineNotice};
use utter_ports::control::Control;
use utter_ports::focus::FocusError;
use utter_ports::microphone::CaptureEvent;

use super::events::{CommandStarted, DictationEvent};
use super::plan::{self, Plan, PlanDefaults};
use super::record_log::{self, RecordingStatus};
use super::recording::{post_roll_done, post_roll_length, Dictation, Purpose, NOT_SAVED};
use super::rewrite_step::PendingRewrite;
use super::silence_stop::{Heard, SilenceVerdict};
use super::strategy::LiveStrategy;
use super::trigger::{Intent, Stage, Trigger};

mod config;
mod finishing;
mod ports;

pub use config::ServiceConfig;
pub use ports::ServiceIo;
pub use utter_ports::microphone::Microphone;

/// With the mic ready ([`MicMode::Ready`]), the moments before the press are kept as pre-roll.
const PREROLL_SAMPLES: usize = crate::audio::ms_to_samples(300) as usize;
/// With the mic opened at the press ([`MicMode::OnPress`]) there is no
/// pre-roll: speech said at the press starts at the recording's first
/// sample, and the voice detector and the engine, given no quiet before the
/// first sound, drop or mishear the first word (docs/benchmarks.md, "The
/// first word"). This much silence goes first instead, as long as the
/// ready microphone's pre-roll, so both modes give the engine the same.
const LEAD_IN_SAMPLES: usize = PREROLL_SAMPLES;
/// With hands-free stop on, a push-to-talk press released this soon is a
/// tap: it latches the dictation, which then ends on silence.
const TAP: Duration = Duration::from_millis(400);
/// A dictation this soon after one that ended mid-sentence continues it.
const CONTINUE_SENTENCE_WITHIN: Duration = Duration::from_secs(60);

/// The last text as it went into the app, for "scratch that".
struct Erasable {
    /// Characters put in (the trailing space included).
    chars: usize,
    at: Instant,
}

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

    /// Adds what this phase waits for (engine replies, the language
    /// model's answer) to `select`.
    fn wait_on<'a>(&'a self, select: &mut Select<'a>) {
        match self {
            Self::Idle => {}
            Self::Recording(d) | Self::PostRoll { dictation: d, .. } | Self::Finishing(d) => {
                d.wait_on(select)
            }
            Self::Rewriting { rewrite, .. } => rewrite.wait_on(select),
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
    /// The last moment a dictation was in hand: the voice detector's worker
    /// is unloaded once the engine's idle time has passed since.
    busy_until: Instant,
    /// The hands-free countdown the user was last shown (whole seconds).
    countdown_shown: Option<u64>,
    /// Told once that other audio cannot be lowered here.
    ducking_failure_told: bool,
    /// What "scratch that" would take back.
    erasable: Option<Erasable>,
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
            busy_until: Instant::now(),
            countdown_shown: None,
            ducking_failure_told: false,
            erasable: None,
        }
    }

    /// The longest the loop may sleep when nothing it waits on is ready:
    /// until the post-roll can end or the next level is due; otherwise a
    /// rare wake-up for engine notices (replies wake it themselves).
    fn wake_within(&self) -> Duration {
        const LEVEL_EVERY: Duration = Duration::from_millis(50);
        const IDLE: Duration = Duration::from_secs(1);
        // Replies wake the loop; this only bounds a wait on one that never
        // comes (each has its own deadline in the engine).
        const IN_FLIGHT: Duration = Duration::from_millis(250);
        match &self.phase {
            Phase::Idle => IDLE,
            Phase::Recording(_) if self.config.emit_levels => LEVEL_EVERY,
            Phase::PostRoll {
                dictation,
                released,
            } => {
                let due = post_roll_length(self.config.post_roll, dictation.hearing_speech());
                let left = due.saturating_sub(released.elapsed());
                let left = left.max(Duration::from_millis(1));
                if self.config.emit_levels {
                    left.min(LEVEL_EVERY)
                } else {
                    left
                }
            }
            Phase::Recording(_) | Phase::Finishing(_) | Phase::Rewriting { .. } => IN_FLIGHT,
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
            Some(Intent::Stop) if self.is_tap(control) => {
                self.trigger.latch();
                if let Some(d) = self.phase.dictation() {
                    let id = d.id;
                    (self.emit)(DictationEvent::Latched { id });
                }
            }
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
                // Pasted again, not sent again.
                let how = utter_ports::output::Delivery {
                    submit: utter_ports::output::Submit::None,
                    ..plan::delivery(&self.config.output, profile.as_ref())
                };
                match self.io.sink.deliver(&self.last_text, &how) {
                    Ok(outcome) => self.notice(outcome.notice),
                    Err(e) => self.error(e.to_string()),
                }
            }
            Some(Intent::Meeting) => (self.emit)(DictationEvent::MeetingKey),
            Some(Intent::PasteLast) | None => {}
        }
    }

    /// Whether `control` ends a push-to-talk press so short it was a tap,
    /// which with hands-free stop on starts a dictation that ends on silence.
    fn is_tap(&self, control: Control) -> bool {
        let release = matches!(
            control,
            Control::Key {
                key: utter_ports::control::TriggerKey::Main,
                pressed: false
            }
        );
        release
            && self.config.stop_on_silence.is_some()
            && self.config.mode == utter_ports::control::TriggerMode::PushToTalk
            && matches!(&self.phase, Phase::Recording(d) if d.since_start() < TAP)
    }

    /// Hands-free stop: a dictation no key is held for ends once the user
    /// has been quiet long enough after speaking (the countdown shown as it
    /// goes), and is cancelled when nothing was said at all.
    fn stop_on_silence(&mut self) {
        let (Some(rule), Phase::Recording(d)) = (self.config.stop_on_silence, &self.phase) else {
            return;
        };
        if self.trigger.key_held() {
            return;
        }
        let id = d.id;
        match rule.verdict(d.audio_ms(), d.heard()) {
            SilenceVerdict::GoOn => self.show_countdown(id, None),
            SilenceVerdict::CountingDown { left_ms } => self.show_countdown(id, Some(left_ms)),
            SilenceVerdict::Stop => {
                self.countdown_shown = None;
                self.stop();
            }
            SilenceVerdict::Cancel => {
                self.notice(Some(format!(
                    "nothing was said within {} s, so the dictation was cancelled (if you spoke, \
                     check that the microphone is not muted)",
                    rule.no_speech_within.as_secs()
                )));
                self.countdown_shown = None;
                self.cancel();
            }
        }
    }

    fn show_countdown(&mut self, id: u64, left_ms: Option<u64>) {
        let seconds = left_ms.map(|ms| ms.div_ceil(1000));
        if seconds != self.countdown_shown {
            self.countdown_shown = seconds;
            (self.emit)(DictationEvent::StoppingOnSilence {
                id,
                left_ms: seconds.map(|s| s * 1000),
            });
        }
    }

    fn on_audio(&mut self, event: CaptureEvent) {
        match event {
            CaptureEvent::Audio(pcm) => match &mut self.phase {
                Phase::Recording(d) => {
                    d.push_audio(&pcm, &mut self.vad, &self.engine, &mut self.emit);
                    self.stop_on_silence();
                }
                Phase::PostRoll { dictation: d, .. } => {
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
            // Unreachable from both front ends (they bind the command key only
            // with the rewrite on); said plainly should one ever send it.
            self.error("AI command mode needs the AI rewrite, which is off".into());
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
        self.lower_other_audio();
        // A model unloaded while idle loads while the user speaks; the
        // voice detector starts now (tens of ms; the audio waits in the
        // microphone's channel meanwhile).
        self.engine.prewarm();
        self.vad.prewarm();
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
        let plan = self.plan(profile.as_ref());
        let mut d = Dictation::start(
            self.next_id,
            &path,
            recorder,
            plan,
            self.strategy,
            &mut self.vad,
            &self.engine,
        )
        .with_purpose(purpose);
        // Grab cancel/latch before announcing, so an immediate press is not lost.
        self.io.keys.set_recording(true);
        (self.emit)(DictationEvent::RecordingStarted {
            id: d.id,
            audio_path: path.display().to_string(),
            app,
            profile: d.plan().profile_name().map(str::to_string),
            language: d.plan().language().map(str::to_string),
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
        if self.config.stop_on_silence.is_some() && d.heard() == Heard::Unknown {
            self.notice(Some(format!(
                "{} streams without the voice detector, so it cannot stop on silence: end this \
                 dictation with the key",
                self.config.model_name
            )));
        }
        self.countdown_shown = None;
        self.next_id += 1;
        self.phase = Phase::Recording(d);
    }

    /// Other programs' sound down while the microphone records (ducking);
    /// a failure is said once, and the dictation goes on.
    fn lower_other_audio(&mut self) {
        if let Err(why) = self.io.other_audio.lower() {
            if !self.ducking_failure_told {
                self.ducking_failure_told = true;
                self.notice(Some(why));
            }
        }
    }

    /// ...and back up once it stops.
    fn restore_other_audio(&mut self) {
        if let Err(why) = self.io.other_audio.restore() {
            self.notice(Some(why));
        }
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

    /// The plan for a dictation into `profile`'s app (the settings where
    /// none matched); what the user must know about it is said.
    fn plan(&mut self, profile: Option<&Profile>) -> Plan {
        let defaults = PlanDefaults {
            dictation: &self.config.dictation,
            text_rules: &self.config.text_rules,
            output: &self.config.output,
            rewrite_mode: self.config.rewrite.as_ref().map(|step| step.mode()),
        };
        let plan = plan::plan(&defaults, profile, self.engine.info());
        for warning in &plan.warnings {
            self.error(warning.clone());
        }
        plan
    }

    /// The key was released (or the mic lost): the post-roll starts. The
    /// cancel key stays grabbed until the text is out.
    fn stop(&mut self) {
        self.phase = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Recording(d) => {
                self.restore_other_audio();
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
        d.abort();
        self.restore_other_audio();
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
        d.abort();
        self.restore_other_audio();
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
        self.unload_detector_when_idle();
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

    /// The voice detector's worker (25–33 MB) goes with the model when
    /// nobody has dictated for the engine's idle time; the next press
    /// starts it again. With no idle unload set, both stay.
    fn unload_detector_when_idle(&mut self) {
        if !matches!(self.phase, Phase::Idle) {
            self.busy_until = Instant::now();
            return;
        }
        if let Some(idle) = self.engine.idle_unload() {
            if self.busy_until.elapsed() >= idle && self.vad.unload() {
                tracing::info!(
                    "voice detector unloaded after {} s without dictation",
                    idle.as_secs()
                );
            }
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
}

/// What woke the service loop.
enum Wake {
    Control,
    Audio,
    /// An engine reply or the language model's answer (or a timeout): the
    /// tick collects whatever is in.
    Work,
}

/// Runs until `Control::Shutdown` (or the control channel closes). The loop
/// sleeps until a control message, microphone audio or a reply the dictation
/// in hand waits for is ready (no polling), or until the post-roll or the
/// level meter is due.
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
        let audio = service.io.mic.events();
        let wake = {
            let mut select = Select::new();
            let control_at = select.recv(&control);
            let audio_at = select.recv(&audio);
            service.phase.wait_on(&mut select);
            match select.ready_timeout(service.wake_within()) {
                Ok(i) if i == control_at => Wake::Control,
                Ok(i) if i == audio_at => Wake::Audio,
                _ => Wake::Work,
            }
        };
        match wake {
            Wake::Control => match control.try_recv() {
                Ok(msg) => service.on_control(msg),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    // Nobody can send any more: finish what is in flight, then return.
                    control = never();
                    service.on_control(Control::Shutdown);
                }
            },
            Wake::Audio => match audio.try_recv() {
                Ok(ev) => service.on_audio(ev),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    service.io.mic.close();
                }
            },
            Wake::Work => {}
        }
        service.tick();
    }
}

#[cfg(test)]
mod tests;
