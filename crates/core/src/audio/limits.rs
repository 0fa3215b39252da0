//! What audio Utter accepts from outside, checked before anything is sized
//! from it. Every entry point that reads audio it did not record itself
//! (files given to the CLI or dropped on the app, uploads, Wyoming, import,
//! a capture device's format) goes through these checks, so a header that
//! lies costs a one-line refusal, not gigabytes.

use std::time::Duration;

/// The lowest sample rate accepted: below it a few bytes decode to hours
/// (a WAV at 1 Hz: 2 KB became 33 minutes of 16 kHz audio).
pub const MIN_RATE: u32 = 1_000;
/// The highest sample rate accepted (twice the highest studio rate).
pub const MAX_RATE: u32 = 768_000;
/// The most channels accepted (symphonia's channel mask holds 32).
pub const MAX_CHANNELS: usize = 32;
/// The widest sample accepted, in bits.
pub const MAX_BITS: u32 = 64;
/// The longest audio decoded from one file or stream unless the user says
/// otherwise (`--max-audio-minutes`, Settings): a day's meeting fits, a
/// 12 KB file claiming 100 hours does not.
pub const DEFAULT_MAX_AUDIO_MINUTES: u32 = 8 * 60;

/// A header field whose value no audio has. Its text names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {field} in its header is {value}, outside what Utter accepts ({allowed}): the file is damaged or not what it claims")]
pub struct BadHeader {
    pub field: &'static str,
    pub value: String,
    pub allowed: String,
}

pub fn check_rate(rate: u32) -> Result<(), BadHeader> {
    if (MIN_RATE..=MAX_RATE).contains(&rate) {
        return Ok(());
    }
    Err(BadHeader {
        field: "sample rate",
        value: format!("{rate} Hz"),
        allowed: format!("{MIN_RATE}–{MAX_RATE} Hz"),
    })
}

pub fn check_channels(channels: usize) -> Result<(), BadHeader> {
    if (1..=MAX_CHANNELS).contains(&channels) {
        return Ok(());
    }
    Err(BadHeader {
        field: "channel count",
        value: channels.to_string(),
        allowed: format!("1–{MAX_CHANNELS}"),
    })
}

pub fn check_bits(bits: u32) -> Result<(), BadHeader> {
    if (1..=MAX_BITS).contains(&bits) {
        return Ok(());
    }
    Err(BadHeader {
        field: "bits per sample",
        value: bits.to_string(),
        allowed: format!("1–{MAX_BITS}"),
    })
}

/// How much audio one file or stream may hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AudioLimits {
    /// Decoding stops with an error past this much audio.
    pub max_duration: Duration,
}

impl Default for AudioLimits {
    fn default() -> Self {
        Self::minutes(DEFAULT_MAX_AUDIO_MINUTES)
    }
}

impl AudioLimits {
    pub fn minutes(minutes: u32) -> Self {
        Self {
            max_duration: Duration::from_secs(u64::from(minutes.max(1)) * 60),
        }
    }

    pub fn max_secs(&self) -> f64 {
        self.max_duration.as_secs_f64()
    }

    /// The limit in the words of an error message: "8 h", "90 min".
    pub fn describe(&self) -> String {
        let minutes = self.max_duration.as_secs() / 60;
        if minutes >= 60 && minutes.is_multiple_of(60) {
            format!("{} h", minutes / 60)
        } else {
            format!("{minutes} min")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_names_its_field_and_the_range() {
        let rate = check_rate(4_294_967_291).unwrap_err().to_string();
        assert!(
            rate.contains("sample rate") && rate.contains("4294967291 Hz"),
            "{rate}"
        );
        assert!(rate.contains("1000–768000 Hz"), "{rate}");
        assert!(check_channels(0)
            .unwrap_err()
            .to_string()
            .contains("channel count in its header is 0"));
        assert!(check_channels(33).is_err());
        assert!(check_bits(0).is_err() && check_bits(65).is_err());
        for ok in [8_000, 16_000, 44_100, 48_000, 96_000, 192_000] {
            check_rate(ok).unwrap();
        }
        check_channels(2).unwrap();
        check_bits(24).unwrap();
    }

    #[test]
    fn limits_read_as_people_say_them() {
        assert_eq!(AudioLimits::default().describe(), "8 h");
        assert_eq!(AudioLimits::minutes(90).describe(), "90 min");
        assert_eq!(AudioLimits::minutes(0).max_secs(), 60.0);
    }
}
