//! pyannote's segmentation-3.0 (PyanNet): 10 s of 16 kHz audio in, for each of its 589
//! frames which of up to three local speakers talk (two at once at most).
//!
//! SincNet (80 parametric band-pass filters, 251 taps, stride 10, then two plain
//! convolutions, each followed by max-pool 3, instance norm and leaky ReLU) → four
//! bidirectional LSTM layers (128 per direction) → two Linear 128 → seven "powerset"
//! classes: nobody, each speaker alone, each pair. Decoding takes the most likely class.

use std::path::Path;

use crate::checkpoint::Checkpoint;
use crate::error::DiarizeError;
use crate::ops::{matmul_bt, Conv1d};

/// Samples in one window (10 s at 16 kHz).
pub const WINDOW_SAMPLES: usize = 160_000;
/// Frames the model gives for one window.
pub const FRAMES: usize = 589;
/// Samples between two frames (the product of the strides: 10 × 3 × 3 × 3).
pub const FRAME_STEP: usize = 270;
/// Sample at the centre of frame 0's receptive field (991 samples wide).
pub const FRAME_CENTER0: usize = 495;
/// Local speakers per window.
pub const LOCAL_SPEAKERS: usize = 3;

const SINC_FILTERS: usize = 80;
const SINC_TAPS: usize = 251;
const HIDDEN: usize = 128;
const LAYERS: usize = 4;
const CLASSES: usize = 7;
/// The powerset classes as speaker sets (bit k: local speaker k talks).
const POWERSET: [u8; CLASSES] = [0b000, 0b001, 0b010, 0b100, 0b011, 0b101, 0b110];

struct InstanceNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl InstanceNorm {
    /// Normalises each channel of `(channels, len)` over time, then the affine map.
    fn apply(&self, x: &mut [f32], len: usize) {
        for (c, row) in x.chunks_mut(len).enumerate() {
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / len as f64;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / len as f64;
            let inv = 1.0 / (var + 1e-5).sqrt();
            let (w, b) = (self.weight[c], self.bias[c]);
            for v in row {
                *v = ((*v as f64 - mean) * inv) as f32 * w + b;
            }
        }
    }
}

struct LstmDirection {
    w_ih: Vec<f32>,
    w_hh: Vec<f32>,
    bias: Vec<f32>,
}

/// The segmentation network's weights.
pub struct Segmentation {
    wav_norm: InstanceNorm,
    convs: [Conv1d; 3],
    norms: [InstanceNorm; 3],
    lstm: Vec<[LstmDirection; 2]>,
    linear: [(Vec<f32>, Vec<f32>); 2],
    classifier: (Vec<f32>, Vec<f32>),
}

impl Segmentation {
    pub fn load(path: &Path) -> Result<Self, DiarizeError> {
        let mut ck = Checkpoint::open(path)?;
        let half = SINC_FILTERS / 2;
        let low = ck.take("sincnet.conv1d.0.filterbank.low_hz_", &[half, 1])?;
        let band = ck.take("sincnet.conv1d.0.filterbank.band_hz_", &[half, 1])?;
        let window = ck.take("sincnet.conv1d.0.filterbank.window_", &[SINC_TAPS / 2])?;
        let n = ck.take("sincnet.conv1d.0.filterbank.n_", &[1, SINC_TAPS / 2])?;
        let sinc = Conv1d {
            weight: sinc_filters(&low, &band, &window, &n),
            bias: None,
            cin: 1,
            cout: SINC_FILTERS,
            kernel: SINC_TAPS,
            stride: 10,
            dilation: 1,
            padding: 0,
        };
        let mut conv = |i: usize, cin: usize| -> Result<Conv1d, DiarizeError> {
            Ok(Conv1d {
                weight: ck.take(&format!("sincnet.conv1d.{i}.weight"), &[60, cin, 5])?,
                bias: Some(ck.take(&format!("sincnet.conv1d.{i}.bias"), &[60])?),
                cin,
                cout: 60,
                kernel: 5,
                stride: 1,
                dilation: 1,
                padding: 0,
            })
        };
        let convs = [sinc, conv(1, 80)?, conv(2, 60)?];
        let mut norm = |name: &str, c: usize| -> Result<InstanceNorm, DiarizeError> {
            Ok(InstanceNorm {
                weight: ck.take(&format!("{name}.weight"), &[c])?,
                bias: ck.take(&format!("{name}.bias"), &[c])?,
            })
        };
        let wav_norm = norm("sincnet.wav_norm1d", 1)?;
        let norms = [
            norm("sincnet.norm1d.0", 80)?,
            norm("sincnet.norm1d.1", 60)?,
            norm("sincnet.norm1d.2", 60)?,
        ];
        let mut lstm = Vec::new();
        for layer in 0..LAYERS {
            let input = if layer == 0 { 60 } else { 2 * HIDDEN };
            let mut dir = |suffix: &str| -> Result<LstmDirection, DiarizeError> {
                let g = 4 * HIDDEN;
                let b_ih = ck.take(&format!("lstm.bias_ih_l{layer}{suffix}"), &[g])?;
                let b_hh = ck.take(&format!("lstm.bias_hh_l{layer}{suffix}"), &[g])?;
                Ok(LstmDirection {
                    w_ih: ck.take(&format!("lstm.weight_ih_l{layer}{suffix}"), &[g, input])?,
                    w_hh: ck.take(&format!("lstm.weight_hh_l{layer}{suffix}"), &[g, HIDDEN])?,
                    bias: b_ih.iter().zip(&b_hh).map(|(a, b)| a + b).collect(),
                })
            };
            lstm.push([dir("")?, dir("_reverse")?]);
        }
        let mut lin =
            |name: &str, out: usize, inp: usize| -> Result<(Vec<f32>, Vec<f32>), DiarizeError> {
                Ok((
                    ck.take(&format!("{name}.weight"), &[out, inp])?,
                    ck.take(&format!("{name}.bias"), &[out])?,
                ))
            };
        let linear = [lin("linear.0", 128, 256)?, lin("linear.1", 128, 128)?];
        let classifier = lin("classifier", CLASSES, 128)?;
        Ok(Self {
            wav_norm,
            convs,
            norms,
            lstm,
            linear,
            classifier,
        })
    }

    /// Local speaker activity of one window: `FRAMES` bytes, bit k set when speaker k talks.
    /// `audio` must be `WINDOW_SAMPLES` long (zero-padded by the caller at the end).
    pub fn run(&self, audio: &[f32]) -> Vec<u8> {
        debug_assert_eq!(audio.len(), WINDOW_SAMPLES);
        let mut x = audio.to_vec();
        let n = x.len();
        self.wav_norm.apply(&mut x, n);
        let mut len = x.len();
        for (i, (conv, norm)) in self.convs.iter().zip(&self.norms).enumerate() {
            let mut y = conv.forward(&x, len);
            let ylen = conv.out_len(len);
            if i == 0 {
                y.iter_mut().for_each(|v| *v = v.abs());
            }
            let (mut p, plen) = max_pool3(&y, conv.cout, ylen);
            norm.apply(&mut p, plen);
            p.iter_mut().for_each(|v| *v = leaky_relu(*v));
            x = p;
            len = plen;
        }
        // (channels, time) → (time, channels) for the recurrent layers.
        let channels = x.len() / len;
        let mut seq = vec![0.0; len * channels];
        for c in 0..channels {
            for t in 0..len {
                seq[t * channels + c] = x[c * len + t];
            }
        }
        let mut width = channels;
        for layer in &self.lstm {
            seq = bilstm(layer, &seq, len, width);
            width = 2 * HIDDEN;
        }
        for (w, b) in &self.linear {
            let out = b.len();
            let mut y = vec![0.0; len * out];
            matmul_bt(len, width, out, &seq, w, &mut y);
            for row in y.chunks_mut(out) {
                for (v, b) in row.iter_mut().zip(b) {
                    *v = leaky_relu(*v + b);
                }
            }
            seq = y;
            width = out;
        }
        let (w, b) = &self.classifier;
        let mut logits = vec![0.0; len * CLASSES];
        matmul_bt(len, width, CLASSES, &seq, w, &mut logits);
        logits
            .chunks(CLASSES)
            .map(|row| {
                let best = (0..CLASSES)
                    .max_by(|&i, &j| (row[i] + b[i]).total_cmp(&(row[j] + b[j])))
                    .unwrap_or(0);
                POWERSET[best]
            })
            .collect()
    }
}

fn leaky_relu(v: f32) -> f32 {
    if v < 0.0 {
        0.01 * v
    } else {
        v
    }
}

fn max_pool3(x: &[f32], channels: usize, len: usize) -> (Vec<f32>, usize) {
    let out = len / 3;
    let mut y = Vec::with_capacity(channels * out);
    for row in x.chunks(len).take(channels) {
        y.extend(row.chunks_exact(3).map(|w| w[0].max(w[1]).max(w[2])));
    }
    (y, out)
}

/// One bidirectional LSTM layer over `(len, width)`; returns `(len, 2 × HIDDEN)`.
fn bilstm(layer: &[LstmDirection; 2], x: &[f32], len: usize, width: usize) -> Vec<f32> {
    let g = 4 * HIDDEN;
    let mut out = vec![0.0; len * 2 * HIDDEN];
    for (d, dir) in layer.iter().enumerate() {
        // The input projection of every step at once; only the recurrence is sequential.
        let mut pre = vec![0.0; len * g];
        matmul_bt(len, width, g, x, &dir.w_ih, &mut pre);
        let mut h = vec![0.0f32; HIDDEN];
        let mut c = vec![0.0f32; HIDDEN];
        let mut gates = vec![0.0f32; g];
        for step in 0..len {
            let t = if d == 0 { step } else { len - 1 - step };
            let p = &pre[t * g..(t + 1) * g];
            for (j, gate) in gates.iter_mut().enumerate() {
                let w = &dir.w_hh[j * HIDDEN..(j + 1) * HIDDEN];
                *gate = p[j] + dir.bias[j] + dot(w, &h);
            }
            for k in 0..HIDDEN {
                let i = sigmoid(gates[k]);
                let f = sigmoid(gates[HIDDEN + k]);
                let gg = gates[2 * HIDDEN + k].tanh();
                let o = sigmoid(gates[3 * HIDDEN + k]);
                c[k] = f * c[k] + i * gg;
                h[k] = o * c[k].tanh();
            }
            out[t * 2 * HIDDEN + d * HIDDEN..][..HIDDEN].copy_from_slice(&h);
        }
    }
    out
}

fn sigmoid(v: f32) -> f32 {
    crate::ops::sigmoid(v)
}

/// A dot product in eight independent lanes, so the compiler vectorises it.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    for (ca, cb) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for i in 0..8 {
            acc[i] += ca[i] * cb[i];
        }
    }
    acc.iter().sum()
}

/// The band-pass filters of asteroid's ParamSincFB: 40 cosine ("even") then 40 sine
/// ("odd") filters, built from the learned low cut-offs and bandwidths.
fn sinc_filters(low_hz: &[f32], band_hz: &[f32], window: &[f32], n: &[f32]) -> Vec<f32> {
    let (min_low, min_band, nyquist) = (50.0f32, 50.0f32, 8000.0f32);
    let half = window.len();
    let filters = low_hz.len();
    let mut cos_f = Vec::with_capacity(filters * SINC_TAPS);
    let mut sin_f = Vec::with_capacity(filters * SINC_TAPS);
    for f in 0..filters {
        let low = min_low + low_hz[f].abs();
        let high = (low + min_band + band_hz[f].abs()).clamp(min_low, nyquist);
        let band = high - low;
        let norm = 2.0 * band;
        let cos_left: Vec<f32> = (0..half)
            .map(|i| ((high * n[i]).sin() - (low * n[i]).sin()) / (n[i] / 2.0) * window[i])
            .collect();
        let sin_left: Vec<f32> = (0..half)
            .map(|i| ((low * n[i]).cos() - (high * n[i]).cos()) / (n[i] / 2.0) * window[i])
            .collect();
        cos_f.extend(cos_left.iter().map(|v| v / norm));
        cos_f.push(2.0 * band / norm);
        cos_f.extend(cos_left.iter().rev().map(|v| v / norm));
        sin_f.extend(sin_left.iter().map(|v| v / norm));
        sin_f.push(0.0);
        sin_f.extend(sin_left.iter().rev().map(|v| -v / norm));
    }
    cos_f.extend(sin_f);
    cos_f
}
