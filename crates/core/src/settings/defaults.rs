//! The defaults, written once: the settings file, the dictation service and
//! the CLI's flags all start from these.

/// The push-to-talk (or toggle) hotkey.
pub const HOTKEY: &str = "ctrl+shift+space";
/// Pressed while the hotkey is held: hands-free until the next press.
pub const LATCH_KEY: &str = "ctrl+shift+l";
/// Discards the recording in progress (grabbed only while recording).
pub const CANCEL_KEY: &str = "escape";
/// Held to speak an instruction for the selected text (with the AI rewrite on).
pub const COMMAND_KEY: &str = "ctrl+shift+e";
/// Silence that ends a segment.
pub const SILENCE_MS: u32 = 600;
/// Audio kept after the key is released, so the last word is not cut.
pub const POST_ROLL_MS: u64 = 400;
/// Idle time after which the engine gives its memory back (10 minutes).
pub const IDLE_UNLOAD_SECS: u64 = 600;
/// Finished recordings whose audio the CLI keeps (the app's History keeps
/// them by age instead).
pub const KEEP_RECORDINGS: usize = 500;

/// The local server's port: where VoiceMode and whisper.cpp users already
/// point their clients (`utter serve` uses it too).
pub const SERVER_PORT: u16 = 2022;
/// Wyoming's usual port (Home Assistant, wyoming-faster-whisper).
pub const WYOMING_PORT: u16 = 10300;

/// The shortest and longest hands-free silence a user may choose: shorter
/// ends a dictation at a breath (the voice detector itself needs a few
/// hundred ms to call a pause); longer is no longer hands-free.
pub const STOP_ON_SILENCE_RANGE_MS: std::ops::RangeInclusive<u64> = 500..=30_000;

/// The words that, said alone as a dictation's last sentence, send it
/// (English, German, French, Spanish, Italian, Portuguese, Dutch).
pub const SPOKEN_SUBMIT_WORDS: &[&str] = &[
    "send",
    "send it",
    "senden",
    "abschicken",
    "envoyer",
    "envoie",
    "enviar",
    "envíalo",
    "invia",
    "invialo",
    "verstuur",
    "versturen",
];
