//! Audio in: decoding files of any common container/codec, downmixing and
//! resampling to the 16 kHz mono f32 the engine wants.

pub mod capture;
pub mod decode;
pub mod resample;
pub mod wav;

/// The sample rate every model and the VAD expect.
pub const ENGINE_RATE: u32 = 16_000;

pub use decode::{decode_file, probe_duration_secs, AudioError, DecodeReport};
pub use resample::StreamResampler;
