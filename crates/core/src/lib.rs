//! utter-core: everything Utter does, without any GUI.
//!
//! Pipeline order (one module per stage): [`audio`] decodes and resamples →
//! [`vad`] finds speech → [`packing`] packs it for the engine → [`engine`]
//! transcribes in a worker process (the voice detector in one of its own;
//! both in threads for tests) → [`text`] joins into a
//! [`transcript`] → [`export`] writes it. [`transcribe`] strings these
//! together for files; [`paths`] knows where files live; [`models`] provisions,
//! converts and resolves the model files the engine loads. [`dictation`] runs
//! live dictation, driven by [`control`] messages and started by [`setup`]
//! (one setup for the CLI and the app); [`platform`] holds everything that
//! differs between desktops (hotkeys, text output, session detection).
//! The dictation service talks to the desktop and the microphone only
//! through utter-ports' traits (`ServiceIo`), which setup fills with the
//! platform's implementations and [`audio::capture`]'s microphone; the
//! `module_graph` test keeps `dictation` from naming either directly.

pub mod audio;
pub mod coverage;
pub mod dictation;
pub mod export;
pub mod language;
pub mod meeting;
pub mod packing;
pub mod placeholders;
pub mod profiles;
pub mod recheck;
pub mod settings;
pub mod setup;
pub mod subtitles;
pub mod text;
pub mod transcribe;
pub mod transcript;

/// Everything that differs between desktops (`utter-platform`), and the
/// leaf modules it carries that every layer uses: the control messages,
/// where files live, bounded thread joins. Re-exported under the paths they
/// always had; utter-platform cannot see utter-core.
pub use utter_platform::{self as platform, control, panics, paths, threads};

/// The speech engine and the voice detector's model, each in a worker
/// process (`utter-engine`); it knows nothing of dictation or the desktop.
pub use utter_engine::{self as engine, quiet_native_logs, vad};

/// Model files: the store, imports and converters, downloads, the starter
/// set and the recommendation (`utter-models`).
pub use utter_models as models;

/// The text rules (the engine's text into the user's), a crate of their own
/// (`utter-postprocess`), under the path they always had.
pub use utter_postprocess as postprocess;
