//! Writing tensors in the legacy ggml `.bin` layouts (whisper.cpp and its
//! Silero VAD files): header, dims reversed from numpy order, name, raw data.

use std::io::Write;

use super::quant::{self, Quant};

/// Element type of a tensor in a ggml `.bin` file (ggml's `ggml_type` ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GgmlType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
}

impl From<Quant> for GgmlType {
    fn from(q: Quant) -> Self {
        match q {
            Quant::F16 => GgmlType::F16,
            Quant::Q8_0 => GgmlType::Q8_0,
            Quant::Q5_1 => GgmlType::Q5_1,
            Quant::Q5_0 => GgmlType::Q5_0,
            Quant::Q4_0 => GgmlType::Q4_0,
        }
    }
}

/// A tensor ready to be written: `shape` is in numpy (row-major) order.
#[derive(Debug, Clone, PartialEq)]
pub struct GgmlTensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub ty: GgmlType,
    pub data: Vec<u8>,
}

impl GgmlTensor {
    pub fn from_f32(
        name: impl Into<String>,
        shape: Vec<usize>,
        values: &[f32],
        ty: GgmlType,
    ) -> Self {
        let data = match ty {
            GgmlType::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            GgmlType::F16 => values
                .iter()
                .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
                .collect(),
            GgmlType::Q8_0 => quant::quantize(values, Quant::Q8_0),
            GgmlType::Q5_1 => quant::quantize(values, Quant::Q5_1),
            GgmlType::Q5_0 => quant::quantize(values, Quant::Q5_0),
            GgmlType::Q4_0 => quant::quantize(values, Quant::Q4_0),
        };
        Self {
            name: name.into(),
            shape,
            ty,
            data,
        }
    }

    /// Writes the tensor record: `n_dims, name_len, type`, reversed dims, name, data.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(&(self.shape.len() as i32).to_le_bytes())?;
        out.write_all(&(self.name.len() as i32).to_le_bytes())?;
        out.write_all(&(self.ty as i32).to_le_bytes())?;
        for dim in self.shape.iter().rev() {
            out.write_all(&(*dim as i32).to_le_bytes())?;
        }
        out.write_all(self.name.as_bytes())?;
        out.write_all(&self.data)
    }
}

/// The ggml file magic (`"ggml"` as a little-endian u32).
pub const GGML_MAGIC: u32 = 0x6767_6d6c;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_written_in_reverse_numpy_order() {
        let t = GgmlTensor::from_f32("w", vec![2, 3], &[0.0; 6], GgmlType::F16);
        let mut out = Vec::new();
        t.write_to(&mut out).unwrap();
        let ints: Vec<i32> = out[..20]
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(ints, vec![2, 1, 1, 3, 2]); // n_dims, name_len, type f16, ne0=3, ne1=2
        assert_eq!(&out[20..21], b"w");
        assert_eq!(out.len(), 21 + 6 * 2);
    }
}
