//! Kaldi-style log mel filterbank (80 bins, 25 ms frames every 10 ms), the input CAM++ was
//! trained on: DC removal, pre-emphasis 0.97, Povey window, 512-point power spectrum,
//! triangular mel filters from 20 Hz to Nyquist, natural log. No dither, so the same
//! audio always gives the same features.

use std::sync::Arc;

use realfft::{RealFftPlanner, RealToComplex};

pub const MEL_BINS: usize = 80;
/// Samples between two feature frames (10 ms).
pub const HOP: usize = 160;
/// Samples in one feature frame (25 ms).
pub const FRAME: usize = 400;
const FFT: usize = 512;

/// A reusable filterbank extractor.
pub struct Fbank {
    fft: Arc<dyn RealToComplex<f32>>,
    window: Vec<f32>,
    /// Per mel bin: the first FFT bin it covers and its weights from there.
    filters: Vec<(usize, Vec<f32>)>,
}

impl Default for Fbank {
    fn default() -> Self {
        Self::new()
    }
}

impl Fbank {
    pub fn new() -> Self {
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(FFT);
        let window = (0..FRAME)
            .map(|i| {
                let hann =
                    0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / (FRAME - 1) as f64).cos();
                hann.powf(0.85) as f32
            })
            .collect();
        Self {
            fft,
            window,
            filters: mel_filters(),
        }
    }

    /// Number of frames for `samples` samples (Kaldi's snip-edges framing).
    pub fn frames(samples: usize) -> usize {
        if samples < FRAME {
            0
        } else {
            1 + (samples - FRAME) / HOP
        }
    }

    /// `(frames, MEL_BINS)` row-major log energies of `audio` (16 kHz).
    pub fn compute(&self, audio: &[f32]) -> Vec<f32> {
        let n = Self::frames(audio.len());
        let mut out = Vec::with_capacity(n * MEL_BINS);
        let mut buf = self.fft.make_input_vec();
        let mut spec = self.fft.make_output_vec();
        let mut power = vec![0.0f32; FFT / 2 + 1];
        for f in 0..n {
            let frame = &audio[f * HOP..f * HOP + FRAME];
            let mean = frame.iter().sum::<f32>() / FRAME as f32;
            buf.iter_mut().for_each(|v| *v = 0.0);
            let mut prev = frame[0] - mean;
            for (i, &s) in frame.iter().enumerate() {
                let s = s - mean;
                buf[i] = (s - 0.97 * prev) * self.window[i];
                prev = s;
            }
            // The planner's own buffers have the right lengths, so this cannot fail.
            let _ = self.fft.process(&mut buf, &mut spec);
            for (p, c) in power.iter_mut().zip(&spec) {
                *p = c.norm_sqr();
            }
            for (start, weights) in &self.filters {
                let e: f32 = weights
                    .iter()
                    .zip(&power[*start..])
                    .map(|(w, p)| w * p)
                    .sum();
                out.push(e.max(f32::EPSILON).ln());
            }
        }
        out
    }
}

fn mel(hz: f64) -> f64 {
    1127.0 * (1.0 + hz / 700.0).ln()
}

fn mel_filters() -> Vec<(usize, Vec<f32>)> {
    let (low, high) = (mel(20.0), mel(8000.0));
    let delta = (high - low) / (MEL_BINS + 1) as f64;
    let bin_hz = 16000.0 / FFT as f64;
    (0..MEL_BINS)
        .map(|b| {
            let left = low + b as f64 * delta;
            let center = left + delta;
            let right = center + delta;
            let weights: Vec<(usize, f32)> = (0..FFT / 2)
                .filter_map(|i| {
                    let m = mel(bin_hz * i as f64);
                    let w = ((m - left) / (center - left)).min((right - m) / (right - center));
                    (w > 0.0).then_some((i, w as f32))
                })
                .collect();
            let start = weights.first().map_or(0, |w| w.0);
            let mut dense = vec![0.0; weights.last().map_or(0, |w| w.0 + 1 - start)];
            for (i, w) in weights {
                dense[i - start] = w;
            }
            (start, dense)
        })
        .collect()
}
