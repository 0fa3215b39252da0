//! CAM++ (3D-Speaker's context-aware masking D-TDNN): mean-normalised 80-bin filterbank
//! frames in, one 192-d speaker embedding out.
//!
//! A 2-D convolutional front end (FCM: 32 channels, the frequency axis strided 80 → 10)
//! feeds a TDNN (stride 2 in time) and three densely connected blocks (12, 24 and 16
//! layers); each layer's output is gated by a mask computed from the utterance mean and
//! 100-frame segment means. Statistics pooling (mean, std) and a Linear + BatchNorm give the
//! embedding.

use std::path::Path;

use crate::checkpoint::Checkpoint;
use crate::error::DiarizeError;
use crate::fbank::MEL_BINS;
use crate::ops::{matmul, relu, sigmoid, Affine, Conv1d, Conv2d};

/// Embedding size.
pub const DIM: usize = 192;
const GROWTH: usize = 32;
const BOTTLENECK: usize = 128;
/// (layers, dilation) of the three dense blocks.
const BLOCKS: [(usize, usize); 3] = [(12, 1), (24, 2), (16, 2)];

struct ResBlock {
    conv1: Conv2d,
    bn1: Affine,
    conv2: Conv2d,
    bn2: Affine,
    shortcut: Option<(Conv2d, Affine)>,
}

struct DenseLayer {
    bn1: Affine,
    linear1: Conv1d,
    bn2: Affine,
    local: Conv1d,
    ctx1: Conv1d,
    ctx2: Conv1d,
}

struct Transit {
    bn: Affine,
    linear: Conv1d,
}

/// The embedding network's weights.
pub struct CamPlus {
    conv1: Conv2d,
    bn1: Affine,
    blocks: Vec<ResBlock>,
    conv2: Conv2d,
    bn2: Affine,
    tdnn: Conv1d,
    tdnn_bn: Affine,
    dense: Vec<(Vec<DenseLayer>, Transit)>,
    out_bn: Affine,
    embed: Vec<f32>,
    embed_bn: Affine,
}

fn conv1d(
    ck: &mut Checkpoint,
    name: &str,
    cout: usize,
    cin: usize,
    kernel: usize,
) -> Result<Conv1d, DiarizeError> {
    Ok(Conv1d {
        weight: ck.take(&format!("{name}.weight"), &[cout, cin, kernel])?,
        bias: None,
        cin,
        cout,
        kernel,
        stride: 1,
        dilation: 1,
        padding: 0,
    })
}

fn with_bias(ck: &mut Checkpoint, mut c: Conv1d, name: &str) -> Result<Conv1d, DiarizeError> {
    c.bias = Some(ck.take(&format!("{name}.bias"), &[c.cout])?);
    Ok(c)
}

fn conv2d(
    ck: &mut Checkpoint,
    name: &str,
    cin: usize,
    kernel: usize,
    stride_f: usize,
) -> Result<Conv2d, DiarizeError> {
    Ok(Conv2d {
        weight: ck.take(&format!("{name}.weight"), &[32, cin, kernel, kernel])?,
        cin,
        cout: 32,
        kernel,
        stride_f,
    })
}

fn batch_norm(
    ck: &mut Checkpoint,
    name: &str,
    c: usize,
    affine: bool,
) -> Result<Affine, DiarizeError> {
    let (w, b) = if affine {
        (
            Some(ck.take(&format!("{name}.weight"), &[c])?),
            Some(ck.take(&format!("{name}.bias"), &[c])?),
        )
    } else {
        (None, None)
    };
    let mean = ck.take(&format!("{name}.running_mean"), &[c])?;
    let var = ck.take(&format!("{name}.running_var"), &[c])?;
    Ok(Affine::batch_norm(w.as_deref(), b.as_deref(), &mean, &var))
}

impl CamPlus {
    pub fn load(path: &Path) -> Result<Self, DiarizeError> {
        let mut ck = Checkpoint::open(path)?;
        let ck = &mut ck;
        let conv1 = conv2d(ck, "head.conv1", 1, 3, 1)?;
        let bn1 = batch_norm(ck, "head.bn1", 32, true)?;
        let mut blocks = Vec::new();
        for layer in 1..=2 {
            for i in 0..2 {
                let p = format!("head.layer{layer}.{i}");
                let stride = if i == 0 { 2 } else { 1 };
                let shortcut = if stride != 1 {
                    Some((
                        conv2d(ck, &format!("{p}.shortcut.0"), 32, 1, stride)?,
                        batch_norm(ck, &format!("{p}.shortcut.1"), 32, true)?,
                    ))
                } else {
                    None
                };
                blocks.push(ResBlock {
                    conv1: conv2d(ck, &format!("{p}.conv1"), 32, 3, stride)?,
                    bn1: batch_norm(ck, &format!("{p}.bn1"), 32, true)?,
                    conv2: conv2d(ck, &format!("{p}.conv2"), 32, 3, 1)?,
                    bn2: batch_norm(ck, &format!("{p}.bn2"), 32, true)?,
                    shortcut,
                });
            }
        }
        let conv2 = conv2d(ck, "head.conv2", 32, 3, 2)?;
        let bn2 = batch_norm(ck, "head.bn2", 32, true)?;
        let head_out = 32 * MEL_BINS / 8;
        let mut tdnn = conv1d(ck, "xvector.tdnn.linear", 128, head_out, 5)?;
        tdnn.stride = 2;
        tdnn.padding = 2;
        let tdnn_bn = batch_norm(ck, "xvector.tdnn.nonlinear.batchnorm", 128, true)?;
        let mut channels = 128;
        let mut dense = Vec::new();
        for (b, &(layers, dilation)) in BLOCKS.iter().enumerate() {
            let mut block = Vec::new();
            for l in 0..layers {
                let p = format!("xvector.block{}.tdnnd{}", b + 1, l + 1);
                let cin = channels + l * GROWTH;
                let mut local = conv1d(
                    ck,
                    &format!("{p}.cam_layer.linear_local"),
                    GROWTH,
                    BOTTLENECK,
                    3,
                )?;
                local.dilation = dilation;
                local.padding = dilation;
                let ctx1 = conv1d(
                    ck,
                    &format!("{p}.cam_layer.linear1"),
                    BOTTLENECK / 2,
                    BOTTLENECK,
                    1,
                )?;
                let ctx2 = conv1d(
                    ck,
                    &format!("{p}.cam_layer.linear2"),
                    GROWTH,
                    BOTTLENECK / 2,
                    1,
                )?;
                block.push(DenseLayer {
                    bn1: batch_norm(ck, &format!("{p}.nonlinear1.batchnorm"), cin, true)?,
                    linear1: conv1d(ck, &format!("{p}.linear1"), BOTTLENECK, cin, 1)?,
                    bn2: batch_norm(ck, &format!("{p}.nonlinear2.batchnorm"), BOTTLENECK, true)?,
                    local,
                    ctx1: with_bias(ck, ctx1, &format!("{p}.cam_layer.linear1"))?,
                    ctx2: with_bias(ck, ctx2, &format!("{p}.cam_layer.linear2"))?,
                });
            }
            channels += layers * GROWTH;
            let t = format!("xvector.transit{}", b + 1);
            let transit = Transit {
                bn: batch_norm(ck, &format!("{t}.nonlinear.batchnorm"), channels, true)?,
                linear: conv1d(ck, &format!("{t}.linear"), channels / 2, channels, 1)?,
            };
            channels /= 2;
            dense.push((block, transit));
        }
        let out_bn = batch_norm(ck, "xvector.out_nonlinear.batchnorm", channels, true)?;
        let embed = ck.take("xvector.dense.linear.weight", &[DIM, channels * 2, 1])?;
        let embed_bn = batch_norm(ck, "xvector.dense.nonlinear.batchnorm", DIM, false)?;
        Ok(Self {
            conv1,
            bn1,
            blocks,
            conv2,
            bn2,
            tdnn,
            tdnn_bn,
            dense,
            out_bn,
            embed,
            embed_bn,
        })
    }

    /// The embedding of `frames` filterbank frames (`(frames, MEL_BINS)` row-major,
    /// already mean-normalised). Needs at least 2 frames.
    pub fn embed(&self, feats: &[f32], frames: usize) -> Vec<f32> {
        let t = frames;
        // (time, freq) → (1, freq, time).
        let mut x = vec![0.0; MEL_BINS * t];
        for (ti, row) in feats.chunks(MEL_BINS).enumerate().take(t) {
            for (f, &v) in row.iter().enumerate() {
                x[f * t + ti] = v;
            }
        }
        let (mut x, mut f) = self.conv1.forward(&x, MEL_BINS, t);
        self.bn1.apply(&mut x, f * t, true);
        for b in &self.blocks {
            let (mut y, fo) = b.conv1.forward(&x, f, t);
            b.bn1.apply(&mut y, fo * t, true);
            let (mut y, _) = b.conv2.forward(&y, fo, t);
            b.bn2.apply(&mut y, fo * t, false);
            match &b.shortcut {
                Some((conv, bn)) => {
                    let (mut s, _) = conv.forward(&x, f, t);
                    bn.apply(&mut s, fo * t, false);
                    y.iter_mut().zip(&s).for_each(|(a, b)| *a += b);
                }
                None => y.iter_mut().zip(&x).for_each(|(a, b)| *a += b),
            }
            relu(&mut y);
            x = y;
            f = fo;
        }
        let (mut x, f) = self.conv2.forward(&x, f, t);
        self.bn2.apply(&mut x, f * t, true);
        // (32, f, t) is already (32·f, t) in memory.
        let mut len = self.tdnn.out_len(t);
        let mut x = {
            let mut y = self.tdnn.forward(&x, t);
            self.tdnn_bn.apply(&mut y, len, true);
            y
        };
        for (block, transit) in &self.dense {
            for layer in block {
                let out = layer.forward(&x, len);
                x.extend_from_slice(&out);
            }
            let mut h = x;
            transit.bn.apply(&mut h, len, true);
            x = transit.linear.forward(&h, len);
        }
        self.out_bn.apply(&mut x, len, true);
        len = len.max(1);
        let channels = x.len() / len;
        let mut stats = vec![0.0f32; 2 * channels];
        for (c, row) in x.chunks(len).enumerate() {
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / len as f64;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>()
                / (len.max(2) - 1) as f64;
            stats[c] = mean as f32;
            stats[channels + c] = var.sqrt() as f32;
        }
        let mut e = vec![0.0; DIM];
        matmul(DIM, 2 * channels, 1, &self.embed, &stats, &mut e, false);
        self.embed_bn.apply(&mut e, 1, false);
        e
    }
}

impl DenseLayer {
    /// One densely connected layer: returns its `GROWTH` new channels of length `len`.
    fn forward(&self, x: &[f32], len: usize) -> Vec<f32> {
        let mut h = x.to_vec();
        self.bn1.apply(&mut h, len, true);
        let mut h = self.linear1.forward(&h, len);
        self.bn2.apply(&mut h, len, true);
        let local = self.local.forward(&h, len);
        // Context: the utterance mean plus the mean of the 100-frame segment of each frame.
        let mut ctx = vec![0.0; BOTTLENECK * len];
        for (c, row) in h.chunks(len).enumerate() {
            let mean = row.iter().sum::<f32>() / len as f32;
            for (s, seg) in row.chunks(100).enumerate() {
                let seg_mean = seg.iter().sum::<f32>() / seg.len() as f32;
                let dst = &mut ctx[c * len + s * 100..][..seg.len()];
                dst.iter_mut().for_each(|v| *v = mean + seg_mean);
            }
        }
        let mut m = self.ctx1.forward(&ctx, len);
        relu(&mut m);
        let m = self.ctx2.forward(&m, len);
        local.iter().zip(&m).map(|(l, m)| l * sigmoid(*m)).collect()
    }
}
