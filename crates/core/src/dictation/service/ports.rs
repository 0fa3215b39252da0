//! The service's ends towards the OS — keys, text sink, microphone, focus
//! and selection — as traits, so the service itself touches no OS API; the
//! real implementations are plugged in at setup (`crate::setup`), the tests'
//! fakes in `service/tests/rig.rs`.

use crossbeam_channel::{never, Receiver};

use crate::audio::capture::{Capture, CaptureError, CaptureEvent};
use crate::platform::focus::FocusProbe;
use crate::platform::hotkeys::RecordingKeys;
use crate::platform::output::selection::SelectionReader;
use crate::platform::output::TextSink;

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

/// The real microphone, through cpal.
pub struct CpalMicrophone {
    device: Option<String>,
    capture: Option<Capture>,
}

impl CpalMicrophone {
    pub fn new(device: Option<String>) -> Self {
        Self {
            device,
            capture: None,
        }
    }
}

impl Microphone for CpalMicrophone {
    fn open(&mut self) -> Result<(), CaptureError> {
        self.capture = Some(Capture::open(self.device.as_deref())?);
        Ok(())
    }

    fn events(&self) -> Receiver<CaptureEvent> {
        self.capture
            .as_ref()
            .map(|c| c.events.clone())
            .unwrap_or_else(never)
    }

    fn close(&mut self) -> Vec<Vec<f32>> {
        let Some(capture) = self.capture.take() else {
            return Vec::new();
        };
        let rx = capture.events.clone();
        capture.close(); // delivers what was still buffered
        rx.try_iter()
            .filter_map(|ev| match ev {
                CaptureEvent::Audio(pcm) => Some(pcm),
                _ => None,
            })
            .collect()
    }

    fn is_open(&self) -> bool {
        self.capture.is_some()
    }

    fn level(&self) -> f32 {
        self.capture.as_ref().map_or(0.0, |c| c.level())
    }

    fn name(&self) -> Option<String> {
        self.capture.as_ref().map(|c| c.info.device.clone())
    }
}

/// The service's ends towards the OS, built by the caller on the service thread.
pub struct ServiceIo {
    pub keys: Box<dyn RecordingKeys>,
    pub sink: Box<dyn TextSink>,
    pub mic: Box<dyn Microphone>,
    /// Which app the user dictates into (for its profile).
    pub focus: Box<dyn FocusProbe>,
    /// The selected text, for a spoken command.
    pub selection: Box<dyn SelectionReader>,
}
