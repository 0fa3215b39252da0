//! Hands-free stop: a dictation the user is not holding a key for (toggle
//! mode, a latched or tapped push-to-talk) ends by itself once the user has
//! been quiet for a while after speaking, and is cancelled when nothing was
//! said at all within a limit. Pure: the service asks after each chunk of
//! audio, with what the voice detector heard.

use std::time::Duration;

/// The rule, as the settings or `--stop-on-silence` give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SilenceStop {
    /// Silence after speech that ends the dictation.
    pub after: Duration,
    /// A dictation with no speech by then is cancelled.
    pub no_speech_within: Duration,
}

/// The silence a user may choose (the settings': `settings::defaults`).
pub use crate::settings::defaults::STOP_ON_SILENCE_RANGE_MS as AFTER_RANGE_MS;
/// Nothing said by then: the press was a mistake, or the microphone hears
/// nothing (the user is told which is likelier).
pub const NO_SPEECH_WITHIN: Duration = Duration::from_secs(10);

impl SilenceStop {
    pub fn after(after: Duration) -> Self {
        Self {
            after,
            no_speech_within: NO_SPEECH_WITHIN,
        }
    }
}

/// What the voice detector has heard so far in a dictation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// No speech yet.
    Nothing,
    Speaking,
    /// Quiet since this point of the dictation's audio (ms from its start).
    QuietSince {
        ms: u64,
    },
    /// The model streams without the voice detector: no pauses are known.
    Unknown,
}

/// What the dictation should do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SilenceVerdict {
    GoOn,
    /// Quiet after speech: it stops in `left_ms` unless the user speaks.
    CountingDown {
        left_ms: u64,
    },
    Stop,
    /// Nothing was said within the limit.
    Cancel,
}

impl SilenceStop {
    /// The verdict after `audio_ms` of the dictation's audio.
    pub fn verdict(&self, audio_ms: u64, heard: Heard) -> SilenceVerdict {
        let ms = |d: Duration| d.as_millis() as u64;
        match heard {
            Heard::Speaking | Heard::Unknown => SilenceVerdict::GoOn,
            Heard::Nothing if audio_ms >= ms(self.no_speech_within) => SilenceVerdict::Cancel,
            Heard::Nothing => SilenceVerdict::GoOn,
            Heard::QuietSince { ms: since } => {
                let quiet = audio_ms.saturating_sub(since);
                match ms(self.after).checked_sub(quiet) {
                    Some(left) if left > 0 => SilenceVerdict::CountingDown { left_ms: left },
                    _ => SilenceVerdict::Stop,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: SilenceStop = SilenceStop {
        after: Duration::from_millis(1500),
        no_speech_within: Duration::from_secs(10),
    };

    #[test]
    fn silence_after_speech_counts_down_then_stops() {
        assert_eq!(RULE.verdict(3000, Heard::Speaking), SilenceVerdict::GoOn);
        assert_eq!(
            RULE.verdict(3500, Heard::QuietSince { ms: 3000 }),
            SilenceVerdict::CountingDown { left_ms: 1000 }
        );
        assert_eq!(
            RULE.verdict(4500, Heard::QuietSince { ms: 3000 }),
            SilenceVerdict::Stop
        );
        assert_eq!(
            RULE.verdict(9000, Heard::QuietSince { ms: 3000 }),
            SilenceVerdict::Stop
        );
    }

    #[test]
    fn nothing_said_within_the_limit_cancels() {
        assert_eq!(RULE.verdict(9_999, Heard::Nothing), SilenceVerdict::GoOn);
        assert_eq!(RULE.verdict(10_000, Heard::Nothing), SilenceVerdict::Cancel);
        // Once something was said, the limit no longer applies.
        assert_eq!(
            RULE.verdict(10_400, Heard::QuietSince { ms: 10_000 }),
            SilenceVerdict::CountingDown { left_ms: 1100 }
        );
    }

    #[test]
    fn a_streaming_model_never_stops_on_silence() {
        assert_eq!(RULE.verdict(60_000, Heard::Unknown), SilenceVerdict::GoOn);
    }
}
