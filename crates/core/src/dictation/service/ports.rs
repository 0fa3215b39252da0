//! The service's ends towards the OS — keys, text sink, microphone, focus,
//! selection and the other programs' sound — held together. The traits are utter-ports' (a leaf crate
//! that knows no OS crate), so the service itself touches no OS API; the
//! real implementations are plugged in at setup (utter-desktop's `setup`), the tests'
//! fakes in `service/tests/rig.rs`.

use utter_ports::focus::FocusProbe;
use utter_ports::keys::RecordingKeys;
use utter_ports::microphone::Microphone;
use utter_ports::other_audio::OtherAudio;
use utter_ports::output::TextSink;
use utter_ports::selection::SelectionReader;

/// The service's ends towards the OS, built by the caller on the service thread.
pub struct ServiceIo {
    pub keys: Box<dyn RecordingKeys>,
    pub sink: Box<dyn TextSink>,
    pub mic: Box<dyn Microphone>,
    /// Which app the user dictates into (for its profile).
    pub focus: Box<dyn FocusProbe>,
    /// The selected text, for a spoken command.
    pub selection: Box<dyn SelectionReader>,
    /// Other programs' sound, lowered while recording (ducking).
    pub other_audio: Box<dyn OtherAudio>,
}
