//! The keys that only matter while recording (latch, cancel), grabbed at the
//! press and let go after: the [`RecordingKeys`] port. The OS hotkey manager
//! behind it is utter-platform's.

/// Grabs and releases the keys that only matter while recording. The
/// dictation service calls this; it never touches the OS itself.
pub trait RecordingKeys: Send {
    fn set_recording(&mut self, on: bool);
}

/// No keys to grab (hotkeys unavailable, or driven by `utter ptt`).
pub struct NoRecordingKeys;

impl RecordingKeys for NoRecordingKeys {
    fn set_recording(&mut self, _on: bool) {}
}
