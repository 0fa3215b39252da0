//! Streaming conversion to 16 kHz mono: downmix first (cheaper), then a
//! resampler from rubato. Output length matches the input duration exactly,
//! with the resampler's delay trimmed, so timestamps line up with the source.
//!
//! The FFT resampler's size is the rate divided by its common factor with
//! 16 kHz: 441 for 44.1 kHz, but the whole rate for a prime one (a header
//! claiming 4294967291 Hz asked for 17 GB). Rates with such a ratio go to a
//! sinc resampler, whose cost does not depend on the rate's factors.

use rubato::{
    FftFixedIn, SincFixedIn, SincInterpolationParameters, SincInterpolationType, VecResampler,
    WindowFunction,
};

use super::limits::{check_rate, BadHeader};
use super::ENGINE_RATE;

/// The largest FFT (in input samples per block) used for a rate: past it,
/// the sinc resampler. Every common rate is far below (44.1 kHz: 441).
const MAX_FFT_BLOCK: u32 = 4_096;

/// Averages interleaved frames of `channels` samples into mono.
pub fn downmix(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
    if channels <= 1 {
        out.extend_from_slice(interleaved);
        return;
    }
    let scale = 1.0 / channels as f32;
    out.extend(
        interleaved
            .chunks_exact(channels)
            .map(|frame| frame.iter().sum::<f32>() * scale),
    );
}

/// Resamples a mono stream pushed in arbitrary-sized pieces to 16 kHz.
pub struct StreamResampler {
    inner: Option<Box<dyn VecResampler<f32>>>,
    source_rate: u32,
    pending: Vec<f32>,
    /// One block of input, in the shape rubato's object-safe trait takes.
    block: Vec<Vec<f32>>,
    chunk: usize,
    delay_left: usize,
    total_in: u64,
    total_out: u64,
}

impl StreamResampler {
    /// A resampler from `source_rate`, which must be one audio can have
    /// ([`check_rate`]): the rate comes from a file's header or a device.
    pub fn new(source_rate: u32) -> Result<Self, BadHeader> {
        check_rate(source_rate)?;
        let chunk = 1024;
        let inner = (source_rate != ENGINE_RATE).then(|| resampler_for(source_rate, chunk));
        let delay_left = inner.as_ref().map_or(0, |r| r.output_delay());
        Ok(Self {
            inner,
            source_rate,
            pending: Vec::with_capacity(chunk * 2),
            block: vec![Vec::with_capacity(chunk)],
            chunk,
            delay_left,
            total_in: 0,
            total_out: 0,
        })
    }

    /// Samples of output owed for the input so far.
    fn expected_out(&self) -> u64 {
        (self.total_in * ENGINE_RATE as u64).div_ceil(self.source_rate as u64)
    }

    fn emit(&mut self, produced: &[f32], out: &mut Vec<f32>) {
        let skip = self.delay_left.min(produced.len());
        self.delay_left -= skip;
        let produced = &produced[skip..];
        let room = self.expected_out().saturating_sub(self.total_out) as usize;
        let take = produced.len().min(room);
        out.extend_from_slice(&produced[..take]);
        self.total_out += take as u64;
    }

    /// Appends 16 kHz output for `input` (mono, source rate) to `out`.
    pub fn push(&mut self, input: &[f32], out: &mut Vec<f32>) {
        self.total_in += input.len() as u64;
        let Some(resampler) = self.inner.as_mut() else {
            out.extend_from_slice(input);
            self.total_out += input.len() as u64;
            return;
        };
        self.pending.extend_from_slice(input);
        let mut produced = Vec::new();
        let mut consumed = 0;
        while self.pending.len() - consumed >= self.chunk {
            self.block[0].clear();
            self.block[0].extend_from_slice(&self.pending[consumed..consumed + self.chunk]);
            let result = resampler
                .process(&self.block, None)
                .expect("fixed-size block");
            produced.extend_from_slice(&result[0]);
            consumed += self.chunk;
        }
        self.pending.drain(..consumed);
        self.emit(&produced, out);
    }

    /// Flushes the tail; the total output then equals the input duration at 16 kHz.
    pub fn finish(&mut self, out: &mut Vec<f32>) {
        let expected = self.expected_out();
        let (already, delay) = (self.total_out, self.delay_left as u64);
        if let Some(resampler) = self.inner.as_mut() {
            let tail = vec![std::mem::take(&mut self.pending)];
            let mut produced = resampler
                .process_partial(Some(&tail), None)
                .expect("partial block")
                .remove(0);
            // Drain the filter's delay line until the owed output is there.
            for _ in 0..8 {
                if already + (produced.len() as u64).saturating_sub(delay) >= expected {
                    break;
                }
                let flushed = resampler
                    .process_partial(None, None)
                    .expect("flush")
                    .remove(0);
                produced.extend_from_slice(&flushed);
            }
            self.emit(&produced, out);
        }
        let missing = expected.saturating_sub(self.total_out) as usize;
        out.extend(std::iter::repeat_n(0.0, missing));
        self.total_out += missing as u64;
    }
}

/// The FFT resampler where the rate's ratio to 16 kHz is small (every common
/// rate), else a sinc resampler of the same quality class.
fn resampler_for(source_rate: u32, chunk: usize) -> Box<dyn VecResampler<f32>> {
    let gcd = num_gcd(source_rate, ENGINE_RATE);
    if source_rate / gcd <= MAX_FFT_BLOCK {
        return Box::new(
            FftFixedIn::<f32>::new(source_rate as usize, ENGINE_RATE as usize, chunk, 2, 1)
                .expect("valid resampler parameters"),
        );
    }
    let params = SincInterpolationParameters {
        sinc_len: 128,
        f_cutoff: 0.925,
        oversampling_factor: 128,
        interpolation: SincInterpolationType::Linear,
        window: WindowFunction::BlackmanHarris2,
    };
    Box::new(
        SincFixedIn::<f32>::new(
            f64::from(ENGINE_RATE) / f64::from(source_rate),
            1.0,
            params,
            chunk,
            1,
        )
        .expect("valid resampler parameters"),
    )
}

fn num_gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(rate: u32, hz: f32, secs: f32) -> Vec<f32> {
        (0..(rate as f32 * secs) as usize)
            .map(|i| (2.0 * std::f32::consts::PI * hz * i as f32 / rate as f32).sin() * 0.5)
            .collect()
    }

    /// Index of the strongest of a few probe frequencies, via correlation.
    fn dominant(signal: &[f32], candidates: &[f32]) -> f32 {
        let power = |hz: f32| {
            let (mut re, mut im) = (0.0f64, 0.0f64);
            for (i, s) in signal.iter().enumerate() {
                let ph = 2.0 * std::f64::consts::PI * hz as f64 * i as f64 / 16000.0;
                re += *s as f64 * ph.cos();
                im += *s as f64 * ph.sin();
            }
            re * re + im * im
        };
        *candidates
            .iter()
            .max_by(|a, b| power(**a).total_cmp(&power(**b)))
            .unwrap()
    }

    fn run(rate: u32, input: &[f32], piece: usize) -> Vec<f32> {
        let mut r = StreamResampler::new(rate).unwrap();
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            r.push(chunk, &mut out);
        }
        r.finish(&mut out);
        out
    }

    #[test]
    fn stereo_44k1_and_48k_become_16k_mono_of_the_same_length_and_pitch() {
        for rate in [44_100u32, 48_000, 22_050, 8_000] {
            let mono = sine(rate, 440.0, 2.0);
            let stereo: Vec<f32> = mono.iter().flat_map(|s| [*s, *s]).collect();
            let mut down = Vec::new();
            downmix(&stereo, 2, &mut down);
            assert_eq!(down, mono);
            let out = run(rate, &down, 777);
            assert_eq!(out.len(), 32_000, "rate {rate}");
            assert_eq!(
                dominant(&out[4000..28000], &[220.0, 440.0, 880.0, 1000.0]),
                440.0
            );
            // The delay is trimmed: the sine starts at sample 0, not later.
            let start_energy: f32 = out[..200].iter().map(|s| s * s).sum();
            assert!(
                start_energy > 1.0,
                "rate {rate}: start energy {start_energy}"
            );
        }
    }

    /// Rates whose ratio to 16 kHz has a large prime factor take the sinc
    /// resampler: same length, same pitch, and no FFT the size of the rate.
    #[test]
    fn a_prime_rate_is_resampled_without_a_rate_sized_fft() {
        for rate in [44_101u32, 383_987, 7_919] {
            let input = sine(rate, 440.0, 1.0);
            let started = std::time::Instant::now();
            let out = run(rate, &input, 4000);
            assert_eq!(out.len(), 16_000, "rate {rate}");
            assert_eq!(
                dominant(&out[2000..14000], &[220.0, 440.0, 880.0, 1000.0]),
                440.0,
                "rate {rate}"
            );
            // Generous: it takes milliseconds; an FFT of the rate's size took seconds.
            assert!(started.elapsed().as_secs() < 20, "rate {rate}");
        }
    }

    #[test]
    fn rates_no_audio_has_are_refused_with_the_field_named() {
        for rate in [0u32, 1, 999, 4_294_967_291, 20_000_000] {
            let err = StreamResampler::new(rate).err().expect("refused");
            assert!(err.to_string().contains("sample rate"), "{err}");
        }
    }

    #[test]
    fn passthrough_at_16k() {
        let input = sine(16_000, 300.0, 0.5);
        assert_eq!(run(16_000, &input, 100), input);
    }
}
