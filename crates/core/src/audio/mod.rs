//! Audio in: decoding files of any common container/codec, downmixing and
//! resampling to the 16 kHz mono f32 the engine wants.

pub mod decode;
mod flac_guard;
pub mod limits;
pub mod resample;
pub mod wav;

/// The sample rate every model and the VAD expect.
pub use utter_engine::ENGINE_RATE;

/// Samples of [`ENGINE_RATE`] audio in one millisecond.
const SAMPLES_PER_MS: u64 = ENGINE_RATE as u64 / 1000;

/// The length of `samples` of 16 kHz audio, in whole milliseconds.
pub const fn samples_to_ms(samples: u64) -> u64 {
    samples / SAMPLES_PER_MS
}

/// How many 16 kHz samples `ms` milliseconds hold.
pub const fn ms_to_samples(ms: u64) -> u64 {
    ms * SAMPLES_PER_MS
}

pub use decode::{decode_file, decode_file_within, probe_duration_secs, AudioError, DecodeReport};
pub use limits::AudioLimits;
pub use resample::StreamResampler;
