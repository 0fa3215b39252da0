//! The Slaney-normalised mel filterbank whisper uses (librosa
//! `mel(sr, n_fft, n_mels, htk=False, norm="slaney")`), embedded in
//! whisper.cpp `.bin` files.

const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;
const MIN_LOG_MEL: f64 = MIN_LOG_HZ / F_SP;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

fn hz_to_mel(hz: f64) -> f64 {
    if hz >= MIN_LOG_HZ {
        MIN_LOG_MEL + (hz / MIN_LOG_HZ).ln() / log_step()
    } else {
        hz / F_SP
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    if mel >= MIN_LOG_MEL {
        MIN_LOG_HZ * (log_step() * (mel - MIN_LOG_MEL)).exp()
    } else {
        F_SP * mel
    }
}

/// `n_mels × (n_fft/2 + 1)` weights, row-major, from 0 Hz to Nyquist.
pub fn mel_filterbank(sample_rate: u32, n_fft: usize, n_mels: usize) -> Vec<f32> {
    let n_bins = n_fft / 2 + 1;
    let nyquist = sample_rate as f64 / 2.0;
    let fft_freqs: Vec<f64> = (0..n_bins)
        .map(|i| nyquist * i as f64 / (n_bins - 1) as f64)
        .collect();
    let (mel_lo, mel_hi) = (hz_to_mel(0.0), hz_to_mel(nyquist));
    let edges: Vec<f64> = (0..n_mels + 2)
        .map(|i| mel_to_hz(mel_lo + (mel_hi - mel_lo) * i as f64 / (n_mels + 1) as f64))
        .collect();
    let mut weights = vec![0f32; n_mels * n_bins];
    for m in 0..n_mels {
        let (left, center, right) = (edges[m], edges[m + 1], edges[m + 2]);
        let norm = 2.0 / (right - left);
        for (k, &f) in fft_freqs.iter().enumerate() {
            let lower = (f - left) / (center - left);
            let upper = (right - f) / (right - center);
            weights[m * n_bins + k] = (lower.min(upper).max(0.0) * norm) as f32;
        }
    }
    weights
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from librosa 0.10 / openai-whisper's `mel_filters.npz` (80 mels).
    #[test]
    fn matches_librosa_slaney_reference() {
        let w = mel_filterbank(16000, 400, 80);
        assert_eq!(w.len(), 80 * 201);
        let at = |m: usize, k: usize| w[m * 201 + k];
        for (m, k, expected) in REFERENCE {
            let got = at(*m, *k);
            assert!(
                (got - expected).abs() < 1e-6,
                "mel {m} bin {k}: got {got}, want {expected}"
            );
        }
    }

    #[test]
    fn every_filter_is_non_negative_and_non_empty() {
        for n_mels in [80, 128] {
            let w = mel_filterbank(16000, 400, n_mels);
            for m in 0..n_mels {
                let row = &w[m * 201..(m + 1) * 201];
                assert!(row.iter().all(|v| *v >= 0.0));
                assert!(row.iter().any(|v| *v > 0.0), "empty filter {m} of {n_mels}");
            }
        }
    }

    // Printed by numpy with 10 significant digits; compared at 1e-6.
    #[allow(clippy::excessive_precision)]
    const REFERENCE: &[(usize, usize, f32)] = &[
        (0, 1, 2.486259490e-02),
        (0, 2, 0.0),
        (1, 2, 2.287177183e-02),
        (10, 10, 1.990821771e-02),
        (10, 11, 4.954374861e-03),
        (40, 43, 1.473556645e-02),
        (40, 44, 6.518189795e-03),
        (79, 190, 2.232054947e-03),
        (79, 192, 3.164711874e-03),
        (79, 199, 4.487590049e-04),
    ];
}
