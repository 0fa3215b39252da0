//! The service loop with fake keys, a fake microphone, a fake sink and a fake
//! engine (plus a loudness VAD): press/release races, latch, cancel during
//! the post-roll, delivery failures, a lost microphone. No desktop needed.
//!
//! [`rig`] holds the fakes and the rig that drives the service; the tests
//! are in one module per topic: the keys ([`keys`]), when the engine runs
//! ([`runs`]), the microphone ([`mic`]), what goes wrong ([`faults`]),
//! per-app profiles ([`profiles`]), the AI step ([`rewrite`]) and the
//! hands-free stop on silence ([`hands_free`]) and auto-submit ([`submit`]).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{never, unbounded, Receiver, Sender};
use utter_postprocess::TextRules;

use super::*;
use crate::dictation::rewrite_step::{RewriteReport, RewriteStep};
use crate::dictation::silence_stop::SilenceStop;
use crate::profiles::ProfileSet;
use crate::settings::MicMode;
use rig::*;
use utter_engine::EngineError;
use utter_ports::control::{TriggerKey, TriggerMode};
use utter_ports::focus::{FocusProbe, FocusedApp};
use utter_ports::keys::RecordingKeys;
use utter_ports::microphone::CaptureError;
use utter_ports::other_audio::OtherAudio;
use utter_ports::output::{Delivered, Delivery, Outcome, OutputConfig, TextSink};
use utter_ports::output::{EditKey, OutputMethod, PasteKeys, Submit};
use utter_ports::selection::SelectionReader;
use utter_ports::DesktopError;

mod faults;
mod hands_free;
mod keys;
mod mic;
mod profiles;
mod rewrite;
mod rig;
mod runs;
mod submit;
