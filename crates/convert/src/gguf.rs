//! Writing GGUF v3 files (the format of ggml's model files): a header, typed
//! key/value metadata, tensor descriptions, then the aligned tensor data.

use std::io::Write;

use super::ggml::{GgmlTensor, GgmlType};

/// `general.alignment`'s default: every tensor's data starts at a multiple of it.
pub const ALIGNMENT: usize = 32;

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    ArrU32(Vec<u32>),
    ArrI32(Vec<i32>),
    ArrF32(Vec<f32>),
    ArrStr(Vec<String>),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::Str(s.to_string())
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Self::U32(v)
    }
}

impl From<f32> for Value {
    fn from(v: f32) -> Self {
        Self::F32(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

// GGUF value type ids.
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_F32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;

/// A GGUF file being put together: metadata in insertion order, then tensors.
#[derive(Debug, Default)]
pub struct GgufFile {
    pub metadata: Vec<(String, Value)>,
    pub tensors: Vec<GgmlTensor>,
}

impl GgufFile {
    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.metadata.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.metadata.push((key.to_string(), value)),
        }
    }

    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        // The header (metadata and tensor descriptions) is small next to the
        // data: built in memory, so its length gives the data's padding.
        let mut header = Vec::new();
        header.extend_from_slice(b"GGUF");
        header.extend_from_slice(&3u32.to_le_bytes());
        header.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        header.extend_from_slice(&(self.metadata.len() as u64).to_le_bytes());
        for (key, value) in &self.metadata {
            header.extend(encode_string(key));
            header.extend(encode_value(value));
        }
        let mut offset = 0usize;
        for t in &self.tensors {
            header.extend(encode_string(&t.name));
            header.extend_from_slice(&(t.shape.len() as u32).to_le_bytes());
            // ggml order: the innermost (last numpy) dimension first.
            for dim in t.shape.iter().rev() {
                header.extend_from_slice(&(*dim as u64).to_le_bytes());
            }
            header.extend_from_slice(&(t.ty as u32).to_le_bytes());
            header.extend_from_slice(&(offset as u64).to_le_bytes());
            offset = padded(offset + t.data.len());
        }
        header.resize(padded(header.len()), 0);
        out.write_all(&header)?;
        for t in &self.tensors {
            out.write_all(&t.data)?;
            out.write_all(&vec![0u8; padded(t.data.len()) - t.data.len()])?;
        }
        Ok(())
    }
}

fn padded(n: usize) -> usize {
    n.div_ceil(ALIGNMENT) * ALIGNMENT
}

fn encode_string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u64).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

fn encode_value(value: &Value) -> Vec<u8> {
    fn array<T>(ty: u32, items: &[T], each: impl Fn(&T) -> Vec<u8>) -> Vec<u8> {
        let mut v = T_ARRAY.to_le_bytes().to_vec();
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&(items.len() as u64).to_le_bytes());
        for item in items {
            v.extend(each(item));
        }
        v
    }
    let scalar = |ty: u32, bytes: &[u8]| {
        let mut v = ty.to_le_bytes().to_vec();
        v.extend_from_slice(bytes);
        v
    };
    match value {
        Value::U32(x) => scalar(T_U32, &x.to_le_bytes()),
        Value::I32(x) => scalar(T_I32, &x.to_le_bytes()),
        Value::F32(x) => scalar(T_F32, &x.to_le_bytes()),
        Value::Bool(x) => scalar(T_BOOL, &[u8::from(*x)]),
        Value::Str(s) => scalar(T_STRING, &encode_string(s)),
        Value::ArrU32(xs) => array(T_U32, xs, |x| x.to_le_bytes().to_vec()),
        Value::ArrI32(xs) => array(T_I32, xs, |x| x.to_le_bytes().to_vec()),
        Value::ArrF32(xs) => array(T_F32, xs, |x| x.to_le_bytes().to_vec()),
        Value::ArrStr(xs) => array(T_STRING, xs, |s| encode_string(s)),
    }
}

/// A tensor from f32 values: matrices in `matrix_type`, vectors (and
/// anything that is not 2-D or wider) in f32, as ggml's kernels expect.
pub fn weight(name: &str, shape: Vec<usize>, values: &[f32], matrix_type: GgmlType) -> GgmlTensor {
    let ty = if shape.iter().filter(|d| **d > 1).count() >= 2 {
        matrix_type
    } else {
        GgmlType::F32
    };
    GgmlTensor::from_f32(name, shape, values, ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_gguf_v3_with_aligned_data() {
        let mut f = GgufFile::default();
        f.set("general.architecture", "moonshine");
        f.set("n", 3u32);
        f.set("n", 4u32); // replaces
        f.set("langs", Value::ArrStr(vec!["en".into()]));
        f.tensors.push(GgmlTensor::from_f32(
            "a",
            vec![2, 3],
            &[1.0; 6],
            GgmlType::F32,
        ));
        f.tensors
            .push(GgmlTensor::from_f32("b", vec![1], &[2.0], GgmlType::F32));
        let mut out = Vec::new();
        f.write_to(&mut out).unwrap();
        assert_eq!(&out[..4], b"GGUF");
        assert_eq!(u32::from_le_bytes(out[4..8].try_into().unwrap()), 3);
        assert_eq!(u64::from_le_bytes(out[8..16].try_into().unwrap()), 2);
        assert_eq!(u64::from_le_bytes(out[16..24].try_into().unwrap()), 3);
        // The data section: `a` (24 bytes) padded to 32, then `b`.
        let data_start = out.len() - 32 - 32;
        assert_eq!(data_start % ALIGNMENT, 0);
        assert_eq!(&out[data_start..data_start + 4], &1.0f32.to_le_bytes());
        assert_eq!(
            &out[data_start + 32..data_start + 36],
            &2.0f32.to_le_bytes()
        );
        // `a`'s dims are written innermost first: 3 then 2.
        let name_at = out
            .windows(9)
            .position(|w| w == b"\x01\0\0\0\0\0\0\0a")
            .unwrap();
        let dims = &out[name_at + 9..name_at + 9 + 4 + 16];
        assert_eq!(u32::from_le_bytes(dims[..4].try_into().unwrap()), 2);
        assert_eq!(u64::from_le_bytes(dims[4..12].try_into().unwrap()), 3);
        assert_eq!(u64::from_le_bytes(dims[12..20].try_into().unwrap()), 2);
    }

    #[test]
    fn vectors_stay_f32_and_matrices_take_the_asked_type() {
        assert_eq!(
            weight("v", vec![8], &[0.0; 8], GgmlType::F16).ty,
            GgmlType::F32
        );
        assert_eq!(
            weight("c", vec![8, 1, 3], &[0.0; 24], GgmlType::F16).ty,
            GgmlType::F16
        );
        assert_eq!(
            weight("m", vec![2, 4], &[0.0; 8], GgmlType::F16).ty,
            GgmlType::F16
        );
    }
}
