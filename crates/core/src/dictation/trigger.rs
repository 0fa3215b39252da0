//! Turning control messages (hotkeys, `utter ptt`, the UI) into dictation
//! intents, per trigger mode. Pure: the service feeds each message with its
//! current [`Stage`], and acts on the intent.

use utter_ports::control::{Control, TriggerKey, TriggerMode};

/// What the service is doing, as far as the trigger is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Idle,
    /// The hotkey is held (or latched, or toggled on).
    Recording,
    /// Released: the post-roll runs or the engine finishes the text.
    Finishing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Start,
    /// Start recording a spoken command for the selected text.
    StartCommand,
    Stop,
    Cancel,
    /// Keep recording after the hotkey is released.
    Latch,
    PasteLast,
    /// Start or stop a meeting: the front end's to do.
    Meeting,
}

/// The trigger state machine.
#[derive(Debug)]
pub struct Trigger {
    mode: TriggerMode,
    latched: bool,
    /// The recording is a command: it ends when the command key is released.
    command: bool,
}

impl Trigger {
    pub fn new(mode: TriggerMode) -> Self {
        Self {
            mode,
            latched: false,
            command: false,
        }
    }

    /// What `control` means in `stage` (`Shutdown` stops a recording; the
    /// service itself ends once the text is out).
    pub fn on_control(&mut self, control: Control, stage: Stage) -> Option<Intent> {
        let recording = stage == Stage::Recording;
        let intent = match control {
            Control::Key { key, pressed } => return self.on_key(key, pressed, stage),
            Control::Start => (stage == Stage::Idle).then_some(Intent::Start),
            Control::Stop | Control::Shutdown => recording.then_some(Intent::Stop),
            Control::Toggle => Some(match recording {
                true => Intent::Stop,
                false => Intent::Start,
            }),
            Control::Cancel => (stage != Stage::Idle).then_some(Intent::Cancel),
            // The service leaves the dictation unfinished itself.
            Control::SessionEnded => None,
        };
        self.settle(intent)
    }

    /// Maps a key event to an intent in `stage`.
    pub fn on_key(&mut self, key: TriggerKey, pressed: bool, stage: Stage) -> Option<Intent> {
        let recording = stage == Stage::Recording;
        let intent = match (key, pressed) {
            // Cancel works until the text is out: while recording, in the
            // post-roll and while the engine finishes.
            (TriggerKey::Cancel, true) if stage != Stage::Idle => Some(Intent::Cancel),
            (TriggerKey::PasteLast, true) if !recording => Some(Intent::PasteLast),
            // A meeting is the app's, whatever a dictation is doing.
            (TriggerKey::Meeting, true) => Some(Intent::Meeting),
            // A command is always held: press to speak it, release to send.
            (TriggerKey::Command, true) if stage == Stage::Idle => Some(Intent::StartCommand),
            (TriggerKey::Command, false) if recording && self.command => Some(Intent::Stop),
            (TriggerKey::Command, _) => None,
            // The main key neither starts nor ends a command's recording.
            (TriggerKey::Main, _) if recording && self.command => None,
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
        self.settle(intent)
    }

    /// Whether a key is held down for the recording in hand (push-to-talk
    /// not latched, or a command): a hands-free stop then waits for its release.
    pub fn key_held(&self) -> bool {
        self.command || (self.mode == TriggerMode::PushToTalk && !self.latched)
    }

    /// Latches the recording in hand (a push-to-talk tap with hands-free
    /// stop on): the release does not stop it.
    pub fn latch(&mut self) {
        self.latched = true;
    }

    /// A latch (and a command) lasts one recording.
    fn settle(&mut self, intent: Option<Intent>) -> Option<Intent> {
        if matches!(
            intent,
            Some(Intent::Stop | Intent::Cancel | Intent::Start | Intent::StartCommand)
        ) {
            self.latched = false;
            self.command = intent == Some(Intent::StartCommand);
        }
        intent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Stage::{Finishing, Idle, Recording};
    use TriggerKey::*;

    #[test]
    fn push_to_talk_starts_on_press_and_stops_on_release() {
        let mut t = Trigger::new(TriggerMode::PushToTalk);
        assert_eq!(t.on_key(Main, true, Idle), Some(Intent::Start));
        assert_eq!(t.on_key(Main, false, Recording), Some(Intent::Stop));
        assert_eq!(t.on_key(Main, false, Idle), None);
    }

    #[test]
    fn hold_then_latch_keeps_recording_until_the_next_press() {
        let mut t = Trigger::new(TriggerMode::PushToTalk);
        t.on_key(Main, true, Idle);
        assert_eq!(t.on_key(Latch, true, Recording), Some(Intent::Latch));
        assert_eq!(
            t.on_key(Main, false, Recording),
            None,
            "release no longer stops"
        );
        assert_eq!(t.on_key(Main, true, Recording), Some(Intent::Stop));
        assert_eq!(t.on_key(Main, false, Idle), None);
        // The next dictation is plain push-to-talk again.
        assert_eq!(t.on_key(Main, true, Idle), Some(Intent::Start));
        assert_eq!(t.on_key(Main, false, Recording), Some(Intent::Stop));
    }

    #[test]
    fn toggle_uses_presses_only() {
        let mut t = Trigger::new(TriggerMode::Toggle);
        assert_eq!(t.on_key(Main, true, Idle), Some(Intent::Start));
        assert_eq!(t.on_key(Main, false, Recording), None);
        assert_eq!(t.on_key(Main, true, Recording), Some(Intent::Stop));
    }

    #[test]
    fn cancel_until_the_text_is_out_and_paste_last_only_when_not_recording() {
        let mut t = Trigger::new(TriggerMode::Toggle);
        assert_eq!(t.on_key(Cancel, true, Idle), None);
        assert_eq!(t.on_key(Cancel, true, Recording), Some(Intent::Cancel));
        assert_eq!(t.on_key(Cancel, true, Finishing), Some(Intent::Cancel));
        assert_eq!(t.on_key(PasteLast, true, Idle), Some(Intent::PasteLast));
        assert_eq!(t.on_key(PasteLast, true, Recording), None);
    }

    #[test]
    fn commands_from_the_ui_and_ptt_follow_the_stage() {
        let mut t = Trigger::new(TriggerMode::PushToTalk);
        assert_eq!(t.on_control(Control::Start, Idle), Some(Intent::Start));
        assert_eq!(t.on_control(Control::Start, Finishing), None, "busy");
        assert_eq!(t.on_control(Control::Stop, Idle), None);
        assert_eq!(t.on_control(Control::Stop, Recording), Some(Intent::Stop));
        assert_eq!(t.on_control(Control::Toggle, Idle), Some(Intent::Start));
        assert_eq!(t.on_control(Control::Toggle, Recording), Some(Intent::Stop));
        assert_eq!(t.on_control(Control::Cancel, Idle), None);
        assert_eq!(
            t.on_control(Control::Cancel, Finishing),
            Some(Intent::Cancel)
        );
        assert_eq!(
            t.on_control(Control::Shutdown, Recording),
            Some(Intent::Stop)
        );
        assert_eq!(t.on_control(Control::Shutdown, Finishing), None);
        let key = |key, pressed| Control::Key { key, pressed };
        assert_eq!(t.on_control(key(Main, true), Idle), Some(Intent::Start));
        assert_eq!(
            t.on_control(key(Latch, true), Recording),
            Some(Intent::Latch)
        );
        assert_eq!(t.on_control(key(Main, false), Recording), None, "latched");
    }

    #[test]
    fn the_command_key_is_held_to_speak_an_instruction() {
        for mode in [TriggerMode::PushToTalk, TriggerMode::Toggle] {
            let mut t = Trigger::new(mode);
            assert_eq!(t.on_key(Command, true, Idle), Some(Intent::StartCommand));
            assert_eq!(t.on_key(Main, true, Recording), None, "{mode:?}");
            assert_eq!(t.on_key(Main, false, Recording), None, "{mode:?}");
            assert_eq!(t.on_key(Command, false, Recording), Some(Intent::Stop));
            assert_eq!(t.on_key(Command, true, Finishing), None, "busy");
            // The next recording is a dictation again.
            assert_eq!(t.on_key(Main, true, Idle), Some(Intent::Start));
            assert_eq!(t.on_key(Command, false, Recording), None);
        }
    }

    #[test]
    fn the_meeting_key_is_passed_on_in_any_stage_and_leaves_dictation_alone() {
        let mut t = Trigger::new(TriggerMode::PushToTalk);
        for stage in [Idle, Recording, Finishing] {
            assert_eq!(t.on_key(Meeting, true, stage), Some(Intent::Meeting));
            assert_eq!(t.on_key(Meeting, false, stage), None);
        }
        assert_eq!(t.on_key(Main, true, Idle), Some(Intent::Start));
        assert_eq!(t.on_key(Meeting, true, Recording), Some(Intent::Meeting));
        assert_eq!(
            t.on_key(Main, false, Recording),
            Some(Intent::Stop),
            "still push-to-talk"
        );
    }
}
