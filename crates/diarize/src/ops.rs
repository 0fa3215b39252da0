//! The few tensor operations the two networks need, on channel-first `(channels, time)`
//! buffers in row-major order. Matrix products go through `matrixmultiply`'s sgemm;
//! convolutions are an im2col copy followed by one product.

/// `c (m×n) = a (m×k) · b (k×n)` (+ `c` when `accumulate`), all row-major.
pub(crate) fn matmul(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    accumulate: bool,
) {
    debug_assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    let beta = if accumulate { 1.0 } else { 0.0 };
    // SAFETY: the slices hold at least m×k, k×n and m×n elements (checked above in debug
    // builds, and by construction in every caller), with the row-major strides given.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// `c (m×n) = a (m×k) · bᵀ` where `b` is `n×k` row-major (a PyTorch Linear weight).
pub(crate) fn matmul_bt(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= n * k && c.len() >= m * n);
    // SAFETY: sizes asserted above; b is read through transposed strides.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            1,
            k as isize,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// A 1-D convolution's weights `(out, in, kernel)` and geometry.
pub(crate) struct Conv1d {
    pub weight: Vec<f32>,
    pub bias: Option<Vec<f32>>,
    pub cin: usize,
    pub cout: usize,
    pub kernel: usize,
    pub stride: usize,
    pub dilation: usize,
    pub padding: usize,
}

impl Conv1d {
    pub(crate) fn out_len(&self, t: usize) -> usize {
        let span = self.dilation * (self.kernel - 1) + 1;
        (t + 2 * self.padding).saturating_sub(span) / self.stride + 1
    }

    /// `x` is `(cin, t)`; returns `(cout, out_len(t))`.
    pub(crate) fn forward(&self, x: &[f32], t: usize) -> Vec<f32> {
        let tout = self.out_len(t);
        let mut y = vec![0.0; self.cout * tout];
        if self.kernel == 1 && self.stride == 1 && self.padding == 0 {
            matmul(self.cout, self.cin, t, &self.weight, x, &mut y, false);
        } else {
            let rows = self.cin * self.kernel;
            let mut cols = vec![0.0; rows * tout];
            for c in 0..self.cin {
                let xc = &x[c * t..(c + 1) * t];
                for k in 0..self.kernel {
                    let row = &mut cols[(c * self.kernel + k) * tout..][..tout];
                    for (o, v) in row.iter_mut().enumerate() {
                        let pos =
                            (o * self.stride + k * self.dilation) as isize - self.padding as isize;
                        if pos >= 0 && (pos as usize) < t {
                            *v = xc[pos as usize];
                        }
                    }
                }
            }
            matmul(self.cout, rows, tout, &self.weight, &cols, &mut y, false);
        }
        if let Some(b) = &self.bias {
            for (row, &b) in y.chunks_mut(tout).zip(b) {
                row.iter_mut().for_each(|v| *v += b);
            }
        }
        y
    }
}

/// A 3×3 2-D convolution over `(channels, freq, time)`, padding 1, stride `(sf, 1)`, or a
/// 1×1 one (padding 0), without bias (CAM++'s head; its BatchNorm follows).
pub(crate) struct Conv2d {
    pub weight: Vec<f32>,
    pub cin: usize,
    pub cout: usize,
    pub kernel: usize,
    pub stride_f: usize,
}

impl Conv2d {
    /// `x` is `(cin, f, t)`; returns `(cout, fout, t)` and `fout`.
    pub(crate) fn forward(&self, x: &[f32], f: usize, t: usize) -> (Vec<f32>, usize) {
        let pad = self.kernel / 2;
        let fout = (f + 2 * pad - self.kernel) / self.stride_f + 1;
        let rows = self.cin * self.kernel * self.kernel;
        let n = fout * t;
        let mut cols = vec![0.0; rows * n];
        for c in 0..self.cin {
            for kf in 0..self.kernel {
                for kt in 0..self.kernel {
                    let row = &mut cols[((c * self.kernel + kf) * self.kernel + kt) * n..][..n];
                    for fo in 0..fout {
                        let fi = (fo * self.stride_f + kf) as isize - pad as isize;
                        if fi < 0 || fi as usize >= f {
                            continue;
                        }
                        let src = &x[(c * f + fi as usize) * t..][..t];
                        let dst = &mut row[fo * t..][..t];
                        // Time stride is 1: the row is the input row shifted by kt - pad.
                        let shift = kt as isize - pad as isize;
                        for (to, d) in dst.iter_mut().enumerate() {
                            let ti = to as isize + shift;
                            if ti >= 0 && (ti as usize) < t {
                                *d = src[ti as usize];
                            }
                        }
                    }
                }
            }
        }
        let mut y = vec![0.0; self.cout * n];
        matmul(self.cout, rows, n, &self.weight, &cols, &mut y, false);
        (y, fout)
    }
}

/// Inference BatchNorm folded into a per-channel scale and shift.
pub(crate) struct Affine {
    pub scale: Vec<f32>,
    pub shift: Vec<f32>,
}

impl Affine {
    pub(crate) fn batch_norm(
        weight: Option<&[f32]>,
        bias: Option<&[f32]>,
        mean: &[f32],
        var: &[f32],
    ) -> Self {
        let eps = 1e-5;
        let scale: Vec<f32> = (0..mean.len())
            .map(|c| weight.map_or(1.0, |w| w[c]) / (var[c] + eps).sqrt())
            .collect();
        let shift = (0..mean.len())
            .map(|c| bias.map_or(0.0, |b| b[c]) - mean[c] * scale[c])
            .collect();
        Self { scale, shift }
    }

    /// Applies the affine map to `(channels, len)`, then ReLU when `relu`.
    pub(crate) fn apply(&self, x: &mut [f32], len: usize, relu: bool) {
        for (c, row) in x.chunks_mut(len).enumerate() {
            let (s, b) = (self.scale[c], self.shift[c]);
            for v in row {
                *v = *v * s + b;
                if relu && *v < 0.0 {
                    *v = 0.0;
                }
            }
        }
    }
}

pub(crate) fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

pub(crate) fn sigmoid(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}
