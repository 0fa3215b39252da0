//! Where a meeting's microphone only hears the loudspeaker.
//!
//! Without headphones the microphone picks up the other participants from the speakers,
//! delayed and quieter; those stretches must not be attributed to "You". Given the
//! microphone and the system audio (both 16 kHz mono, started together), this finds the
//! microphone spans that the system channel explains: per short frame, the normalised
//! cross-correlation with the system signal at the echo delay (searched per block, then
//! refined per frame over a few samples) is high, and the microphone is not clearly
//! louder than the echo the system channel predicts. Double talk (the user speaking over
//! the loudspeaker) lowers the correlation, so it stays the user's.
//!
//! A pure function over samples; no echo cancellation (nothing is subtracted).

use realfft::RealFftPlanner;

const RATE: f64 = 16_000.0;

/// Tuning of [`loudspeaker_spans`]; the defaults are what the tests measured.
#[derive(Debug, Clone)]
pub struct EchoOptions {
    /// Analysis frame length, seconds.
    pub frame_s: f32,
    /// Largest echo delay searched (either direction), seconds.
    pub max_lag_s: f32,
    /// Correlation from which a frame counts as loudspeaker sound.
    pub min_correlation: f32,
    /// Frames quieter than this (dBFS RMS) on the microphone are ignored.
    pub floor_db: f32,
}

impl Default for EchoOptions {
    fn default() -> Self {
        Self {
            frame_s: 0.1,
            max_lag_s: 0.5,
            min_correlation: 0.7,
            floor_db: -55.0,
        }
    }
}

/// Seconds between the block-level delay estimates (the clocks of two devices drift).
const BLOCK_S: f64 = 4.0;
/// Refinement around the block's delay, in samples (±1 ms).
const REFINE: isize = 16;

/// The `(start_s, end_s)` spans of `mic` explained by `system`, sorted, not overlapping.
pub fn loudspeaker_spans(mic: &[f32], system: &[f32], opts: &EchoOptions) -> Vec<(f64, f64)> {
    let frame = ((opts.frame_s as f64 * RATE) as usize).max(160);
    let max_lag = (opts.max_lag_s as f64 * RATE) as usize;
    let block = (BLOCK_S * RATE) as usize;
    let floor = 10f32.powf(opts.floor_db / 20.0);
    let mut explained = vec![false; mic.len() / frame];
    let mut start = 0;
    while start < mic.len() {
        let end = (start + block).min(mic.len());
        if let Some(delay) = block_delay(&mic[start..end], system, start, max_lag) {
            for f in start / frame..(end / frame).min(explained.len()) {
                let m = &mic[f * frame..(f + 1) * frame];
                if rms(m) < floor {
                    continue;
                }
                let best = (-REFINE..=REFINE)
                    .map(|r| ncc(m, system, f * frame, delay + r))
                    .fold(0.0f32, f32::max);
                explained[f] = best >= opts.min_correlation;
            }
        }
        start = end;
    }
    // Frames to spans; a single unexplained frame between two explained ones is bridged.
    let mut spans: Vec<(f64, f64)> = Vec::new();
    for (f, &e) in explained.iter().enumerate() {
        if !e {
            continue;
        }
        let (s, t) = ((f * frame) as f64 / RATE, ((f + 1) * frame) as f64 / RATE);
        match spans.last_mut() {
            Some(last) if s - last.1 <= frame as f64 / RATE + 1e-9 => last.1 = t,
            _ => spans.push((s, t)),
        }
    }
    spans
}

fn rms(x: &[f32]) -> f32 {
    (x.iter().map(|v| v * v).sum::<f32>() / x.len().max(1) as f32).sqrt()
}

/// Correlation of `m` with `system` starting at `at - delay` (0 outside the signal).
fn ncc(m: &[f32], system: &[f32], at: usize, delay: isize) -> f32 {
    let s0 = at as isize - delay;
    if s0 < 0 || s0 as usize + m.len() > system.len() {
        return 0.0;
    }
    let s = &system[s0 as usize..s0 as usize + m.len()];
    let (mut xy, mut xx, mut yy) = (0.0f64, 0.0f64, 0.0f64);
    for (a, b) in m.iter().zip(s) {
        xy += (*a as f64) * (*b as f64);
        xx += (*a as f64) * (*a as f64);
        yy += (*b as f64) * (*b as f64);
    }
    if xx <= 0.0 || yy <= 0.0 {
        0.0
    } else {
        (xy / (xx * yy).sqrt()) as f32
    }
}

/// The delay (samples the microphone lags the system; may be negative) that best aligns
/// the microphone block starting at `start` with the system signal, by FFT
/// cross-correlation; `None` when the system is silent there.
fn block_delay(mic: &[f32], system: &[f32], start: usize, max_lag: usize) -> Option<isize> {
    let lo = start.saturating_sub(max_lag);
    let hi = (start + mic.len() + max_lag).min(system.len());
    if hi <= lo {
        return None;
    }
    let sys = &system[lo..hi];
    if rms(sys) <= 1e-6 || rms(mic) <= 1e-6 {
        return None;
    }
    let n = (mic.len() + sys.len()).next_power_of_two();
    let mut planner = RealFftPlanner::<f32>::new();
    let fwd = planner.plan_fft_forward(n);
    let inv = planner.plan_fft_inverse(n);
    let mut a = fwd.make_input_vec();
    a[..sys.len()].copy_from_slice(sys);
    let mut b = fwd.make_input_vec();
    b[..mic.len()].copy_from_slice(mic);
    let (mut fa, mut fb) = (fwd.make_output_vec(), fwd.make_output_vec());
    fwd.process(&mut a, &mut fa).ok()?;
    fwd.process(&mut b, &mut fb).ok()?;
    // corr[k] = Σ sys[t + k] · mic[t]: the product of sys with mic's conjugate.
    for (x, y) in fa.iter_mut().zip(&fb) {
        *x *= y.conj();
    }
    let mut corr = inv.make_output_vec();
    inv.process(&mut fa, &mut corr).ok()?;
    // mic[t] (at start + t) lines up with sys[t + k] (at lo + t + k), so a delay d is
    // k = start - lo - d, negative k wrapping around the circular correlation.
    let max_lag = max_lag as isize;
    let at = |d: isize| -> f32 {
        let k = start as isize - lo as isize - d;
        corr[k.rem_euclid(n as isize) as usize]
    };
    (-max_lag..=max_lag).max_by(|&x, &y| at(x).total_cmp(&at(y)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic noise-like signal (not speech: the real-voice test is in tests/).
    fn noise(n: usize, seed: u32) -> Vec<f32> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn a_delayed_copy_is_found_and_independent_sound_is_not() {
        let system = noise(16000 * 6, 1);
        let own = noise(16000 * 6, 2);
        let delay = 1200;
        // 0–3 s: the loudspeaker only; 3–6 s: the user only.
        let mic: Vec<f32> = (0..system.len())
            .map(|t| {
                if t < 48000 {
                    0.3 * system[t.saturating_sub(delay)]
                } else {
                    own[t]
                }
            })
            .collect();
        let spans = loudspeaker_spans(&mic, &system, &EchoOptions::default());
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert!(
            spans[0].0 < 0.2 && (spans[0].1 - 3.0).abs() < 0.15,
            "{spans:?}"
        );
    }
}
