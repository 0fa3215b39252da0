//! utter-capture: the sound of this computer, through cpal.
//!
//! - [`microphone`]: a microphone (or a system-audio device) opened, its
//!   audio downmixed and resampled to 16 kHz mono on a thread of its own;
//!   [`microphone::CpalMicrophone`] is the dictation service's
//!   `utter_ports::microphone::Microphone`. Also the device lists, the
//!   presence check and the doctor's probe.
//! - [`host`]: which sound system cpal goes through, and which of its
//!   inputs are microphones (not monitors, not ALSA plugins).
//! - [`meeting_recorder`]: a meeting's two sides, each to its WAV as it is
//!   captured, on one timeline.
//! - [`meeting_session`]: the recorder and the live transcript started and
//!   stopped together (the final pass is utter-core's `meeting::finish`).
//!
//! utter-core never opens a device: it reads audio from channels and the
//! microphone port, so the dictation and the file pipeline build and test
//! without a sound system.

pub mod host;
pub mod meeting_recorder;
pub mod meeting_session;
pub mod microphone;

pub use meeting_recorder::{MeetingLevels, MeetingNotice, MeetingRecorder, MeetingSources};
pub use meeting_session::MeetingSession;
