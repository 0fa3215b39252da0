//! Turning hotkey presses into dictation intents, per trigger mode. Pure: the
//! service feeds key events and the current state, and acts on the intent.

use crate::control::{TriggerKey, TriggerMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Start,
    Stop,
    Cancel,
    /// Keep recording after the hotkey is released.
    Latch,
    PasteLast,
}

/// The trigger state machine.
#[derive(Debug)]
pub struct Trigger {
    mode: TriggerMode,
    latched: bool,
}

impl Trigger {
    pub fn new(mode: TriggerMode) -> Self {
        Self {
            mode,
            latched: false,
        }
    }

    /// Maps a key event to an intent, given whether a dictation is recording.
    pub fn on_key(&mut self, key: TriggerKey, pressed: bool, recording: bool) -> Option<Intent> {
        let intent = match (key, pressed) {
            (TriggerKey::Cancel, true) if recording => Some(Intent::Cancel),
            (TriggerKey::PasteLast, true) if !recording => Some(Intent::PasteLast),
            (TriggerKey::Latch, true) if recording && self.mode == TriggerMode::PushToTalk => {
                self.latched = true;
                Some(Intent::Latch)
            }
            (TriggerKey::Main, true) => match (self.mode, recording) {
                (_, false) => Some(Intent::Start),
                (TriggerMode::Toggle, true) => Some(Intent::Stop),
                (TriggerMode::PushToTalk, true) if self.latched => Some(Intent::Stop),
                (TriggerMode::PushToTalk, true) => None,
            },
            (TriggerKey::Main, false) => match self.mode {
                TriggerMode::PushToTalk if recording && !self.latched => Some(Intent::Stop),
                _ => None,
            },
            _ => None,
        };
        if matches!(intent, Some(Intent::Stop | Intent::Cancel | Intent::Start)) {
            self.latched = false;
        }
        intent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TriggerKey::*;

    #[test]
    fn push_to_talk_starts_on_press_and_stops_on_release() {
        let mut t = Trigger::new(TriggerMode::PushToTalk);
        assert_eq!(t.on_key(Main, true, false), Some(Intent::Start));
        assert_eq!(t.on_key(Main, false, true), Some(Intent::Stop));
        assert_eq!(t.on_key(Main, false, false), None);
    }

    #[test]
    fn hold_then_latch_keeps_recording_until_the_next_press() {
        let mut t = Trigger::new(TriggerMode::PushToTalk);
        t.on_key(Main, true, false);
        assert_eq!(t.on_key(Latch, true, true), Some(Intent::Latch));
        assert_eq!(t.on_key(Main, false, true), None, "release no longer stops");
        assert_eq!(t.on_key(Main, true, true), Some(Intent::Stop));
        assert_eq!(t.on_key(Main, false, false), None);
        // The next dictation is plain push-to-talk again.
        assert_eq!(t.on_key(Main, true, false), Some(Intent::Start));
        assert_eq!(t.on_key(Main, false, true), Some(Intent::Stop));
    }

    #[test]
    fn toggle_uses_presses_only() {
        let mut t = Trigger::new(TriggerMode::Toggle);
        assert_eq!(t.on_key(Main, true, false), Some(Intent::Start));
        assert_eq!(t.on_key(Main, false, true), None);
        assert_eq!(t.on_key(Main, true, true), Some(Intent::Stop));
    }

    #[test]
    fn cancel_only_while_recording_and_paste_last_only_when_idle() {
        let mut t = Trigger::new(TriggerMode::Toggle);
        assert_eq!(t.on_key(Cancel, true, false), None);
        assert_eq!(t.on_key(Cancel, true, true), Some(Intent::Cancel));
        assert_eq!(t.on_key(PasteLast, true, false), Some(Intent::PasteLast));
        assert_eq!(t.on_key(PasteLast, true, true), None);
    }
}
