//! The microphone as the dictation service sees it: the [`Microphone`] port,
//! the events an open one sends and why one fails. The cpal implementation
//! is utter-capture's `microphone`.

use crossbeam_channel::Receiver;

/// Why the microphone could not be used. Worded for the user.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CaptureError {
    #[error("no input device found (is a microphone connected and allowed?)")]
    NoDevice,
    #[error("input device `{wanted}` not found (available: {})", if available.is_empty() { "none".into() } else { available.join(", ") })]
    DeviceNotFound {
        wanted: String,
        available: Vec<String>,
    },
    #[error("cannot open input device `{device}`: {message}")]
    Open { device: String, message: String },
    #[error("input device `{device}` stopped: {message}")]
    Lost { device: String, message: String },
    #[error("no system-audio device `{wanted}` (available: {})", if available.is_empty() { "none".into() } else { available.join(", ") })]
    SystemDeviceNotFound {
        wanted: String,
        available: Vec<String>,
    },
    /// What the computer plays cannot be recorded through this sound system.
    #[error("system audio cannot be recorded here: {0}")]
    NoSystemAudio(String),
}

/// Messages from the capture thread.
#[derive(Debug)]
pub enum CaptureEvent {
    /// 16 kHz mono audio, in order.
    Audio(Vec<f32>),
    /// The device failed (e.g. unplugged); no more audio will come.
    Lost(CaptureError),
}

/// The microphone as the service sees it.
pub trait Microphone {
    /// Opens the device; audio and loss events arrive on the receiver.
    fn open(&mut self) -> Result<(), CaptureError>;
    /// The open device's events (a never-ready channel when closed).
    fn events(&self) -> Receiver<CaptureEvent>;
    /// Closes the device and returns the audio it still had buffered.
    fn close(&mut self) -> Vec<Vec<f32>>;
    fn is_open(&self) -> bool;
    /// RMS level of the latest audio.
    fn level(&self) -> f32;
    fn name(&self) -> Option<String>;
}
