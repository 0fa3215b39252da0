//! A recorded meeting as one sound for the user to play: both sides mixed
//! (what the call sounded like), as WAV bytes for a player. Read a chunk at
//! a time; only the result is whole, so its length is bounded.

use std::io::Cursor;
use std::path::Path;

use super::transcribe::{Samples, WavChannel};
use super::{MeetingError, OTHERS_WAV, YOU_WAV};
use crate::audio::ENGINE_RATE;

/// The longest meeting mixed for playing here: an hour is 115 MB of WAV,
/// handed to the page whole.
pub const MAX_PLAY_MS: u64 = 60 * 60 * 1000;

/// Samples mixed at a time.
const CHUNK: usize = 60 * ENGINE_RATE as usize;

/// The meeting in `dir`, both sides mixed, as a 16 kHz mono 16-bit WAV.
/// A meeting longer than [`MAX_PLAY_MS`] is refused with where its two
/// recordings are, to open in a player of the user's own.
pub fn mixed_wav(dir: &Path) -> Result<Vec<u8>, MeetingError> {
    let mut you = WavChannel::open(&dir.join(YOU_WAV))?;
    let mut others = WavChannel::open(&dir.join(OTHERS_WAV))?;
    let total = you.len().max(others.len());
    let ms = crate::audio::samples_to_ms(total as u64);
    if ms > MAX_PLAY_MS {
        return Err(MeetingError::TooLongToPlay {
            minutes: ms / 60_000,
            dir: dir.to_path_buf(),
        });
    }
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: ENGINE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = Cursor::new(Vec::with_capacity(44 + total * 2));
    let bad = |e: hound::Error| MeetingError::NotAMeeting {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    };
    let mut wav = hound::WavWriter::new(&mut bytes, spec).map_err(bad)?;
    let mut start = 0;
    while start < total {
        let n = CHUNK.min(total - start);
        let (a, b) = (you.read(start, n), others.read(start, n));
        for (x, y) in a.iter().zip(&b) {
            let mixed = (x + y).clamp(-1.0, 1.0);
            wav.write_sample((mixed * f32::from(i16::MAX)) as i16)
                .map_err(bad)?;
        }
        start += n;
    }
    wav.finalize().map_err(bad)?;
    Ok(bytes.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::wav::WavRecorder;

    #[test]
    fn both_sides_are_mixed_into_one_wav_as_long_as_the_longer() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, pcm: &[f32]| {
            let mut w = WavRecorder::create(&dir.path().join(name)).unwrap();
            w.write(pcm).unwrap();
            w.finish().unwrap();
        };
        write(YOU_WAV, &vec![0.25; 16_000]);
        write(OTHERS_WAV, &vec![0.5; CHUNK + 8_000]);
        let bytes = mixed_wav(dir.path()).unwrap();
        let mut reader = hound::WavReader::new(Cursor::new(bytes)).unwrap();
        assert_eq!(reader.spec().sample_rate, ENGINE_RATE);
        let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
        assert_eq!(samples.len(), CHUNK + 8_000);
        let level = |s: i16| f32::from(s) / f32::from(i16::MAX);
        assert!(
            (level(samples[100]) - 0.75).abs() < 0.01,
            "both sides: {}",
            samples[100]
        );
        assert!(
            (level(samples[CHUNK + 100]) - 0.5).abs() < 0.01,
            "the others only"
        );
    }

    #[test]
    fn a_folder_without_the_recordings_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = mixed_wav(dir.path()).unwrap_err().to_string();
        assert!(err.contains(YOU_WAV), "{err}");
    }
}
