//! ggml's block quantisation formats, written from f32 weights: the same
//! layouts and rounding as ggml's reference quantisers (`quantize_row_*_ref`
//! in ggml-quants.c), so the engine reads them as it reads whisper.cpp's own
//! quantised models. Every block holds 32 weights and one f16 scale (plus an
//! f16 minimum for q5_1).

use half::f16;

/// Weights per block, in every format here.
pub const BLOCK: usize = 32;

/// The formats a converted model's weight matrices can be written in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, ts_rs::TS,
)]
#[ts(export)]
pub enum Quant {
    /// Half precision: what the reference converters write.
    #[default]
    #[serde(rename = "f16")]
    F16,
    /// 8-bit, one scale per block (34 bytes per 32 weights).
    #[serde(rename = "q8_0")]
    Q8_0,
    /// 5-bit with a minimum per block (24 bytes).
    #[serde(rename = "q5_1")]
    Q5_1,
    /// 5-bit, symmetric (22 bytes).
    #[serde(rename = "q5_0")]
    Q5_0,
    /// 4-bit, symmetric (18 bytes).
    #[serde(rename = "q4_0")]
    Q4_0,
}

impl Quant {
    /// What a converted model is written in unless asked otherwise, by the
    /// numbers (docs/benchmarks.md, issue 15): the same words as f16 on the
    /// dense, sparse and single-window inputs, 0.90–0.98x its time, 56 % of its
    /// size and ~20 MB less memory. A model in this format is named plainly
    /// (`whisper-tiny.en`); other formats get a suffix (`whisper-tiny.en-f16`).
    pub const RECOMMENDED: Quant = Quant::Q8_0;

    pub const ALL: [Quant; 5] = [
        Quant::F16,
        Quant::Q8_0,
        Quant::Q5_1,
        Quant::Q5_0,
        Quant::Q4_0,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Quant::F16 => "f16",
            Quant::Q8_0 => "q8_0",
            Quant::Q5_1 => "q5_1",
            Quant::Q5_0 => "q5_0",
            Quant::Q4_0 => "q4_0",
        }
    }

    /// The `ftype` a whisper.cpp `.bin` header declares: `GGML_FTYPE_MOSTLY_*`,
    /// plus 1000 × the quantisation version (2) for quantised files.
    pub fn file_type(self) -> i32 {
        const QNT_VERSION: i32 = 2;
        match self {
            Quant::F16 => 1,
            Quant::Q4_0 => QNT_VERSION * 1000 + 2,
            Quant::Q8_0 => QNT_VERSION * 1000 + 7,
            Quant::Q5_0 => QNT_VERSION * 1000 + 8,
            Quant::Q5_1 => QNT_VERSION * 1000 + 9,
        }
    }
}

impl std::str::FromStr for Quant {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quant::ALL
            .into_iter()
            .find(|q| q.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Quant::ALL.iter().map(|q| q.name()).collect();
                format!("unknown quantisation `{s}` (one of: {})", names.join(", "))
            })
    }
}

impl std::fmt::Display for Quant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Quantises `values` (a whole number of blocks) into `quant`'s blocks.
/// `Quant::F16` gives plain half floats.
pub fn quantize(values: &[f32], quant: Quant) -> Vec<u8> {
    assert_eq!(values.len() % BLOCK, 0, "a whole number of blocks");
    let mut out = Vec::with_capacity(values.len() / BLOCK * block_bytes(quant));
    match quant {
        Quant::F16 => out.extend(values.iter().flat_map(|v| f16::from_f32(*v).to_le_bytes())),
        Quant::Q8_0 => values.chunks_exact(BLOCK).for_each(|b| q8_0(b, &mut out)),
        Quant::Q5_1 => values.chunks_exact(BLOCK).for_each(|b| q5_1(b, &mut out)),
        Quant::Q5_0 => values.chunks_exact(BLOCK).for_each(|b| q5_0(b, &mut out)),
        Quant::Q4_0 => values.chunks_exact(BLOCK).for_each(|b| q4_0(b, &mut out)),
    }
    out
}

/// Bytes per block of 32 weights.
pub fn block_bytes(quant: Quant) -> usize {
    match quant {
        Quant::F16 => 2 * BLOCK,
        Quant::Q8_0 => 2 + BLOCK,
        Quant::Q5_1 => 2 + 2 + 4 + BLOCK / 2,
        Quant::Q5_0 => 2 + 4 + BLOCK / 2,
        Quant::Q4_0 => 2 + BLOCK / 2,
    }
}

fn push_f16(out: &mut Vec<u8>, v: f32) {
    out.extend(f16::from_f32(v).to_le_bytes());
}

fn inverse(d: f32) -> f32 {
    if d != 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

/// The value of largest magnitude, with its sign (the symmetric formats map
/// it to their most negative level, as ggml does).
fn signed_max(block: &[f32]) -> f32 {
    block
        .iter()
        .copied()
        .fold(0.0f32, |max, v| if v.abs() > max.abs() { v } else { max })
}

fn q8_0(block: &[f32], out: &mut Vec<u8>) {
    let amax = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = inverse(d);
    push_f16(out, d);
    out.extend(block.iter().map(|v| (v * id).round() as i8 as u8));
}

/// Packs 32 five-bit levels: low nibbles two per byte (element j with j+16),
/// the fifth bits in a 32-bit mask.
fn push_5bit(levels: &[u8; BLOCK], out: &mut Vec<u8>) {
    let mut high = 0u32;
    for (j, level) in levels.iter().enumerate() {
        high |= u32::from((level >> 4) & 1) << j;
    }
    out.extend(high.to_le_bytes());
    push_nibbles(levels, out);
}

fn push_nibbles(levels: &[u8; BLOCK], out: &mut Vec<u8>) {
    let half = BLOCK / 2;
    out.extend((0..half).map(|j| (levels[j] & 0x0F) | ((levels[half + j] & 0x0F) << 4)));
}

fn q5_1(block: &[f32], out: &mut Vec<u8>) {
    let min = block.iter().copied().fold(f32::INFINITY, f32::min);
    let max = block.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let d = (max - min) / 31.0;
    let id = inverse(d);
    push_f16(out, d);
    push_f16(out, min);
    let mut levels = [0u8; BLOCK];
    for (level, v) in levels.iter_mut().zip(block) {
        *level = ((v - min) * id + 0.5) as u8;
    }
    push_5bit(&levels, out);
}

fn q5_0(block: &[f32], out: &mut Vec<u8>) {
    let d = signed_max(block) / -16.0;
    let id = inverse(d);
    push_f16(out, d);
    let mut levels = [0u8; BLOCK];
    for (level, v) in levels.iter_mut().zip(block) {
        *level = ((v * id + 16.5) as i8).min(31) as u8;
    }
    push_5bit(&levels, out);
}

fn q4_0(block: &[f32], out: &mut Vec<u8>) {
    let d = signed_max(block) / -8.0;
    let id = inverse(d);
    push_f16(out, d);
    let mut levels = [0u8; BLOCK];
    for (level, v) in levels.iter_mut().zip(block) {
        *level = ((v * id + 8.5) as i8).min(15) as u8;
    }
    push_nibbles(&levels, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16_at(bytes: &[u8], at: usize) -> f32 {
        f16::from_le_bytes([bytes[at], bytes[at + 1]]).to_f32()
    }

    /// ggml's reference dequantisers, written from the block layouts.
    fn dequantize(bytes: &[u8], quant: Quant) -> Vec<f32> {
        let mut out = Vec::new();
        for b in bytes.chunks_exact(block_bytes(quant)) {
            let low = |qs: &[u8], j: usize| {
                if j < 16 {
                    qs[j] & 0x0F
                } else {
                    qs[j - 16] >> 4
                }
            };
            match quant {
                Quant::F16 => out.extend(b.chunks_exact(2).map(|h| f16_at(h, 0))),
                Quant::Q8_0 => {
                    let d = f16_at(b, 0);
                    out.extend(b[2..].iter().map(|q| *q as i8 as f32 * d));
                }
                Quant::Q5_1 => {
                    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
                    let high = u32::from_le_bytes(b[4..8].try_into().unwrap());
                    out.extend((0..BLOCK).map(|j| {
                        let q = low(&b[8..], j) as u32 | (((high >> j) & 1) << 4);
                        q as f32 * d + m
                    }));
                }
                Quant::Q5_0 => {
                    let d = f16_at(b, 0);
                    let high = u32::from_le_bytes(b[2..6].try_into().unwrap());
                    out.extend((0..BLOCK).map(|j| {
                        let q = low(&b[6..], j) as u32 | (((high >> j) & 1) << 4);
                        (q as i32 - 16) as f32 * d
                    }));
                }
                Quant::Q4_0 => {
                    let d = f16_at(b, 0);
                    out.extend((0..BLOCK).map(|j| (low(&b[2..], j) as i32 - 8) as f32 * d));
                }
            }
        }
        out
    }

    /// Weights shaped like a model's: mostly small, some outliers, both signs.
    fn weights(n: usize) -> Vec<f32> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5;
                if i % 97 == 0 {
                    u * 2.0
                } else {
                    u * 0.1
                }
            })
            .collect()
    }

    #[test]
    fn every_format_has_its_block_size_and_round_trips_within_its_step() {
        let values = weights(BLOCK * 64);
        for quant in Quant::ALL {
            let bytes = quantize(&values, quant);
            assert_eq!(bytes.len(), 64 * block_bytes(quant), "{quant}");
            let back = dequantize(&bytes, quant);
            for (block, back) in values.chunks(BLOCK).zip(back.chunks(BLOCK)) {
                let (lo, hi) = block
                    .iter()
                    .fold((f32::MAX, f32::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
                let amax = lo.abs().max(hi.abs());
                // Half a quantisation step, plus f16 rounding of the scale.
                let step = match quant {
                    Quant::F16 => amax / 1024.0,
                    Quant::Q8_0 => amax / 127.0,
                    Quant::Q5_1 => (hi - lo) / 31.0,
                    Quant::Q5_0 => amax / 16.0,
                    Quant::Q4_0 => amax / 8.0,
                };
                // The symmetric formats have one level fewer on the side
                // opposite the largest magnitude (-16..15): values there may
                // clip by up to a whole step, as in ggml.
                let tolerance = match quant {
                    Quant::Q5_0 | Quant::Q4_0 => step,
                    _ => step * 0.5,
                } + amax * 2e-3;
                for (v, b) in block.iter().zip(back) {
                    assert!(
                        (v - b).abs() <= tolerance,
                        "{quant}: {v} came back as {b} (step {step})"
                    );
                }
            }
        }
    }

    #[test]
    fn more_bits_lose_less() {
        let values = weights(BLOCK * 256);
        let error = |quant| {
            let back = dequantize(&quantize(&values, quant), quant);
            values
                .iter()
                .zip(back)
                .map(|(v, b)| (v - b).powi(2))
                .sum::<f32>()
        };
        let errors: Vec<f32> = [Quant::F16, Quant::Q8_0, Quant::Q5_1, Quant::Q4_0]
            .into_iter()
            .map(error)
            .collect();
        assert!(errors.windows(2).all(|w| w[0] < w[1]), "{errors:?}");
        assert!(error(Quant::Q5_0) < error(Quant::Q4_0));
    }

    #[test]
    fn a_block_of_zeros_stays_zero() {
        for quant in Quant::ALL {
            let back = dequantize(&quantize(&[0.0; BLOCK], quant), quant);
            assert!(back.iter().all(|v| *v == 0.0), "{quant}: {back:?}");
        }
    }

    #[test]
    fn names_parse_back_and_unknown_ones_list_the_choices() {
        for quant in Quant::ALL {
            assert_eq!(quant.name().parse::<Quant>(), Ok(quant));
        }
        assert_eq!("Q8_0".parse::<Quant>(), Ok(Quant::Q8_0));
        let err = "int8".parse::<Quant>().unwrap_err();
        assert!(err.contains("q8_0") && err.contains("f16"), "{err}");
    }
}
