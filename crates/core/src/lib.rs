//! utter-core: everything Utter does with speech, without any GUI and
//! without the desktop: the compiler keeps it off the OS (it depends on no
//! platform, audio-device or clipboard crate; `crate_graph` asserts it).
//!
//! Pipeline order (one module per stage): [`audio`] decodes and resamples →
//! utter-engine's `vad` finds speech → [`packing`] packs it for the engine →
//! utter-engine transcribes in a worker process → [`text`] joins into a
//! [`transcript`] → [`export`] writes it. [`transcribe`] strings these
//! together for files. [`dictation`] runs live dictation, driven by
//! utter-ports' control messages; it talks to the desktop and the
//! microphone only through utter-ports' traits (`ServiceIo`), which
//! utter-desktop's `setup` fills with utter-platform's and utter-capture's
//! implementations. [`meeting`] transcribes what utter-capture recorded.
//! Each front end names the crates it uses (utter-engine, utter-models,
//! utter-base…) itself: nothing is re-exported here.

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
pub mod subtitles;
pub mod text;
pub mod transcribe;
pub mod transcript;
