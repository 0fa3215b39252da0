//! utter-desktop: the core wired to this computer. [`setup`] takes the
//! settings, loads the models and plugs the platform's hotkeys, focus, text
//! output and clipboard and utter-capture's microphone into the dictation
//! service, for both front ends (the CLI's `utter dictate` and the app).
//!
//! It is the one crate that sees both utter-core and the desktop
//! (utter-platform, utter-capture); utter-core sees neither, and the
//! compiler holds that (crate_graph).

pub mod setup;
