//! What the service is told at setup: keys, microphone, output, the
//! dictation's tuning, text rules, profiles and the AI rewrite, resolved at
//! the edge (settings or CLI flags) before the service starts.

use std::path::PathBuf;
use std::time::Duration;

use utter_postprocess::TextRules;

use crate::profiles::ProfileSet;
use crate::settings::{defaults, MicMode};
use utter_ports::control::TriggerMode;
use utter_ports::output::OutputConfig;

use super::super::recording::DictationConfig;
use super::super::rewrite_step::RewriteStep;
use super::super::silence_stop::SilenceStop;

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
    /// Starts or stops a meeting (the app's; the service passes it on as
    /// `DictationEvent::MeetingKey`).
    pub meeting_key: Option<String>,
    pub device: Option<String>,
    /// When the microphone is open: only while recording (the default),
    /// or ready between dictations.
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
    /// Hands-free stop: a dictation no key is held for ends after this
    /// much silence following speech (`None`: only a key ends it).
    pub stop_on_silence: Option<SilenceStop>,
    /// Said alone as a dictation's last sentence, each of these sends it
    /// (taken off the text; Enter or the submit key pressed). Empty: off.
    pub spoken_submit: Vec<String>,
    /// Other programs' playback while recording: lowered to this share of
    /// its volume (0.0 mutes); `None`: left alone. Setup picks the
    /// `other_audio` port from it.
    pub duck_other_audio: Option<f32>,
    /// A dictation that is only "scratch that" or "press enter/tab/escape"
    /// edits instead of typing.
    pub edit_commands: bool,
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
            meeting_key: None,
            device: None,
            mic: MicMode::OnPress,
            post_roll: Duration::from_millis(defaults::POST_ROLL_MS),
            output: OutputConfig::default(),
            dictation: DictationConfig::defaults(),
            recordings_dir: utter_base::paths::recordings_dir(),
            keep_recordings: defaults::KEEP_RECORDINGS,
            model_name,
            text_rules: TextRules::default(),
            profiles: ProfileSet::default(),
            rewrite: None,
            emit_levels: false,
            stop_on_silence: None,
            spoken_submit: Vec::new(),
            duck_other_audio: None,
            edit_commands: true,
        }
    }
}
