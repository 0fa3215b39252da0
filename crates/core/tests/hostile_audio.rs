//! WAV headers mutated field by field (rate, channels, bits, block size,
//! declared lengths, format tag), decoded with the default limits: a fixed
//! budget of structural fuzzing that runs in every `npm test` (the coverage-
//! guided targets in fuzz/ need nightly; scripts/fuzz.sh runs them longer).
//! Every input must end in a result or an error, quickly, with the audio
//! delivered bounded by what the bytes can hold at the lowest rate accepted.

use std::time::{Duration, Instant};

use utter_core::audio::limits::MIN_RATE;
use utter_core::audio::{decode_file_within, AudioLimits};

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// One header field's value: mostly a sane one (so that the other fields'
/// mutations reach the decoder), else an edge or noise.
fn field_u32(rng: &mut Rng, sane: &[u32]) -> u32 {
    match rng.next() % 12 {
        0 => rng.pick(&[
            0,
            1,
            2,
            999,
            1_000,
            768_000,
            768_001,
            u32::MAX,
            u32::MAX - 4,
        ]),
        1 => rng.next() as u32,
        _ => rng.pick(sane),
    }
}

fn field_u16(rng: &mut Rng, sane: &[u16]) -> u16 {
    match rng.next() % 12 {
        0 => rng.pick(&[0, 1, 3, 33, 255, 256, u16::MAX]),
        1 => rng.next() as u16,
        _ => rng.pick(sane),
    }
}

fn mutated_wav(rng: &mut Rng) -> Vec<u8> {
    let rate = field_u32(
        rng,
        &[
            8_000, 16_000, 22_050, 44_100, 48_000, 96_000, 44_101, 383_987,
        ],
    );
    let channels = field_u16(rng, &[1, 2, 6]);
    let bits = field_u16(rng, &[8, 16, 24, 32]);
    let format = field_u16(rng, &[1, 3, 0xFFFE]);
    let block = field_u16(rng, &[channels.wrapping_mul(bits / 8)]);
    let data_len = (rng.next() % 20_000) as usize;
    let declared = field_u32(rng, &[data_len as u32]);
    let mut w = Vec::new();
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&field_u32(rng, &[declared.wrapping_add(36)]).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&field_u32(rng, &[16]).to_le_bytes());
    w.extend_from_slice(&format.to_le_bytes());
    w.extend_from_slice(&channels.to_le_bytes());
    w.extend_from_slice(&rate.to_le_bytes());
    w.extend_from_slice(&rate.wrapping_mul(u32::from(block)).to_le_bytes());
    w.extend_from_slice(&block.to_le_bytes());
    w.extend_from_slice(&bits.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&declared.to_le_bytes());
    w.extend((0..data_len).map(|_| rng.next() as u8));
    w
}

#[test]
fn mutated_wav_headers_end_in_a_result_or_an_error_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.wav");
    let mut rng = Rng(0x5EED_0057);
    let limits = AudioLimits::default();
    let (mut refused, mut decoded) = (0, 0);
    let budget = Instant::now();
    for case in 0..3_000 {
        let bytes = mutated_wav(&mut rng);
        std::fs::write(&path, &bytes).unwrap();
        let started = Instant::now();
        let mut samples = 0usize;
        let result = decode_file_within(&path, &limits, |pcm| {
            samples += pcm.len();
            true
        });
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "case {case}: {took:?} for {} bytes",
            bytes.len()
        );
        // At the lowest rate accepted, each input byte is at most one frame:
        // 16 kHz out per MIN_RATE in, plus the resampler's last block.
        let bound = bytes.len() * (16_000 / MIN_RATE as usize) + 16_000;
        assert!(
            samples <= bound,
            "case {case}: {samples} samples from {} bytes",
            bytes.len()
        );
        match result {
            Ok(_) => decoded += 1,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                refused += 1;
            }
        }
    }
    eprintln!(
        "{decoded} decoded, {refused} refused in {:.1} s",
        budget.elapsed().as_secs_f64()
    );
    assert!(
        decoded > 20 && refused > 20,
        "{decoded} decoded, {refused} refused"
    );
}
