//! Streaming conversion to 16 kHz mono: downmix first (cheaper), then an FFT
//! resampler from rubato. Output length matches the input duration exactly,
//! with the resampler's delay trimmed, so timestamps line up with the source.

use rubato::{FftFixedIn, Resampler};

use super::ENGINE_RATE;

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
    inner: Option<FftFixedIn<f32>>,
    source_rate: u32,
    pending: Vec<f32>,
    chunk: usize,
    delay_left: usize,
    total_in: u64,
    total_out: u64,
}

impl StreamResampler {
    pub fn new(source_rate: u32) -> Self {
        let chunk = 1024;
        let inner = (source_rate != ENGINE_RATE).then(|| {
            FftFixedIn::<f32>::new(source_rate as usize, ENGINE_RATE as usize, chunk, 2, 1)
                .expect("valid resampler parameters")
        });
        let delay_left = inner.as_ref().map_or(0, |r| r.output_delay());
        Self {
            inner,
            source_rate,
            pending: Vec::with_capacity(chunk * 2),
            chunk,
            delay_left,
            total_in: 0,
            total_out: 0,
        }
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
            let block = [&self.pending[consumed..consumed + self.chunk]];
            let result = resampler.process(&block, None).expect("fixed-size block");
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
            let tail = std::mem::take(&mut self.pending);
            let mut produced = resampler
                .process_partial(Some(&[&tail[..]]), None)
                .expect("partial block")
                .remove(0);
            // Drain the filter's delay line until the owed output is there.
            for _ in 0..8 {
                if already + (produced.len() as u64).saturating_sub(delay) >= expected {
                    break;
                }
                let flushed = resampler
                    .process_partial::<&[f32]>(None, None)
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
        let mut r = StreamResampler::new(rate);
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

    #[test]
    fn passthrough_at_16k() {
        let input = sine(16_000, 300.0, 0.5);
        assert_eq!(run(16_000, &input, 100), input);
    }
}
