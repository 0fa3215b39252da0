//! The messages that drive a dictation, shared by whoever sends them (the
//! platform's hotkeys, `utter ptt`, the GlobalShortcuts portal, a UI, a
//! signal handler) and the dictation service that receives them. A leaf
//! module: the platform layer and the pipeline both depend on it, never on
//! each other's internals for it.

use serde::{Deserialize, Serialize};

/// How the main hotkey starts and stops a dictation. The settings file
/// spells it `push_to_talk`; the CLI's `--mode` takes `push-to-talk`, as
/// command lines do (`settings::parse_cli_value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TriggerMode {
    /// Hold to talk; release to stop. The latch key, pressed while holding,
    /// switches to hands-free until the next press of the hotkey.
    PushToTalk,
    /// Press to start, press again to stop.
    Toggle,
}

/// Which registered key an event is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerKey {
    Main,
    Latch,
    Cancel,
    PasteLast,
    /// Held to speak an instruction for the selected text (AI command mode).
    Command,
    /// Starts or stops a meeting (the app's meeting shortcut): the service
    /// only passes it on.
    Meeting,
}

/// What the service is told: keys (from the hotkey layer or `utter ptt`)
/// and commands (from a UI, a signal handler, tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A registered key went down or up.
    Key {
        key: TriggerKey,
        pressed: bool,
    },
    Start,
    Stop,
    /// Start when idle, stop when recording.
    Toggle,
    Cancel,
    /// Finish any dictation in progress, then return.
    Shutdown,
    /// The desktop session ended (logout, the display server gone): nothing
    /// can be delivered any more. A dictation in progress stops where it is,
    /// its audio left on disk unfinished for the next start to transcribe;
    /// then return.
    SessionEnded,
}
