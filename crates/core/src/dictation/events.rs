//! What a dictation reports as it goes, for UIs, tests and benchmarks
//! (`utter dictate --events json` prints one per line).

use std::sync::OnceLock;
use std::time::Instant;

use serde::Serialize;

use super::rewrite_step::RewriteReport;
use utter_ports::output::{Delivered, Submit};

/// Milliseconds since the process started (monotonic).
pub fn now_ms() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}

// `TextDelivered` is the big one, sent once per dictation: boxing its
// fields would cost an allocation and buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "event", rename_all = "snake_case")]
#[ts(export)]
pub enum DictationEvent {
    Ready {
        model: String,
        mic: String,
    },
    RecordingStarted {
        id: u64,
        audio_path: String,
        /// The focused app at the press, where the desktop tells it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        app: Option<String>,
        /// The per-app profile this dictation follows.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        profile: Option<String>,
        /// The language this dictation is transcribed in, after its profile
        /// (absent: the model detects it, or speaks only one).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        language: Option<String>,
        /// Set when the words are a spoken command for the selected text
        /// (AI command mode) rather than a dictation.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        command: Option<CommandStarted>,
    },
    /// Speech closed by a pause; sent to the engine while the user still talks.
    SegmentClosed {
        id: u64,
        index: usize,
        start_ms: u64,
        end_ms: u64,
    },
    SegmentTranscribed {
        id: u64,
        index: usize,
        text: String,
        engine_ms: f64,
    },
    /// The text so far, while the user speaks: after each run made while
    /// they speak (or a streaming model's partial). `settled` words stay as
    /// they are; `tentative` ones may still change. The final text, after
    /// the text rules, comes with `text_delivered`.
    PartialText {
        id: u64,
        settled: String,
        tentative: String,
    },
    /// The user released the key (or pressed stop).
    RecordingStopped {
        id: u64,
        audio_ms: u64,
    },
    Latched {
        id: u64,
    },
    /// Hands-free stop: the user is quiet after speaking, and the dictation
    /// stops in `left_ms` (whole seconds as they change) unless they speak
    /// again; `null` when they did (the countdown is off).
    StoppingOnSilence {
        id: u64,
        left_ms: Option<u64>,
    },
    /// The meeting shortcut was pressed: the front end starts or stops a
    /// meeting (the CLI binds none).
    MeetingKey,
    Cancelled {
        id: u64,
    },
    /// The text is ready and the language model is rewriting it (in
    /// `mode`); `text_delivered` follows within the time budget.
    Rewriting {
        id: u64,
        mode: String,
    },
    TextDelivered {
        id: u64,
        text: String,
        output: String,
        engine_ms: f64,
        segments: usize,
        /// What became of the text, as far as the desktop can tell (`pasted`
        /// only where the app was seen reading it); absent when nothing was
        /// delivered (no speech, or an error).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        delivered: Option<Delivered>,
        /// The engine's text, where replacements, spoken punctuation or
        /// clean-up changed it.
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_text: Option<String>,
        /// Set when the engine failed on part or all of the audio: `text` is
        /// what it transcribed, and the recording is kept for a retry.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Set when speech the VAD heard is missing from `text` ("N s of
        /// speech could not be transcribed"): the engine's runs over it
        /// came back empty.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        warning: Option<String>,
        /// Set when the AI rewrite ran: the text as dictated, and the model
        /// that rewrote it or why the dictated text was kept.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        rewrite: Option<RewriteReport>,
        /// The key pressed after the text to send it (auto-submit, or a
        /// spoken "send"); absent when none was.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        submitted: Option<Submit>,
        /// Set when the dictation was an edit command ("scratch that",
        /// "press tab") that was carried out: `text` is empty, and
        /// `raw_text` holds what was said.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        edit: Option<String>,
    },
    /// A recording from an earlier run whose transcription never finished.
    Recovered {
        audio_path: String,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_text: Option<String>,
    },
    Error {
        message: String,
    },
    /// The speech engine's worker process died and was restarted; the text
    /// in flight is transcribed again. `on_cpu`: it died on the GPU and now
    /// runs on the CPU.
    EngineRestarted {
        message: String,
        on_cpu: bool,
    },
    /// Something works less well than configured in this session (no global
    /// hotkeys on Wayland, clipboard instead of paste), and what to do.
    Notice {
        message: String,
    },
    Level {
        rms: f32,
    },
}

/// A spoken command's start: how much text was selected (0: none; the
/// command is then answered and the answer inserted).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct CommandStarted {
    pub selection_chars: usize,
}

/// An event stamped with [`now_ms`].
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Stamped {
    pub t_ms: f64,
    #[serde(flatten)]
    pub event: DictationEvent,
}

impl From<DictationEvent> for Stamped {
    fn from(event: DictationEvent) -> Self {
        Self {
            t_ms: now_ms(),
            event,
        }
    }
}
