//! `utter dictate` on a real (virtual) desktop: an Xvfb X server, a
//! PulseAudio virtual microphone fed with real LibriVox speech, xdotool for
//! the hotkey, and a zenity entry window that receives the pasted text.
//! The tests share one desktop and run one at a time (hotkeys are global).
//! Linux only: the desktop is X11 (Xvfb, xdotool, zenity).
//!
//! One test binary (`cargo test -p utter-cli --test dictate_desktop`): the
//! desktops and the serial lock are in [`harness`], the tests in one module
//! per topic.
#![cfg(all(unix, not(target_os = "macos")))]

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod apps;
mod doctor;
mod ducking;
mod engine;
mod hands_free;
mod keys;
mod paste;
mod profiles;
mod recovery;
mod rewrite;
mod snippets;
mod submit;
mod wayland;
mod words;
