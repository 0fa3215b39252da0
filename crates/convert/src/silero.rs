//! Silero VAD v6 safetensors (as shipped in the `silero-vad` Python package)
//! → the whisper.cpp-style Silero `.bin` the engine loads as arch `silero_vad`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use super::ggml::{GgmlTensor, GgmlType, GGML_MAGIC};
use super::ConvertError;

/// Architecture constants of the 16 kHz Silero v6 network, in the order the
/// loader reads them: window, context, STFT hop, STFT bins, then each encoder
/// conv's (in, out, kernel)... and the LSTM/decoder sizes.
const HPARAMS: [u32; 19] = [
    512, 64, 4, 129, 128, 3, 128, 64, 3, 64, 64, 3, 64, 128, 3, 128, 128, 128, 1,
];

/// (safetensors name, engine name, expected shape, reshape to)
const TENSORS: &[(&str, &str, &[usize], &[usize])] = &[
    (
        "stft_conv.weight",
        "_model.stft.forward_basis_buffer",
        &[258, 1, 256],
        &[258, 1, 256],
    ),
    (
        "conv1.weight",
        "_model.encoder.0.reparam_conv.weight",
        &[128, 129, 3],
        &[128, 129, 3],
    ),
    (
        "conv1.bias",
        "_model.encoder.0.reparam_conv.bias",
        &[128],
        &[128],
    ),
    (
        "conv2.weight",
        "_model.encoder.1.reparam_conv.weight",
        &[64, 128, 3],
        &[64, 128, 3],
    ),
    (
        "conv2.bias",
        "_model.encoder.1.reparam_conv.bias",
        &[64],
        &[64],
    ),
    (
        "conv3.weight",
        "_model.encoder.2.reparam_conv.weight",
        &[64, 64, 3],
        &[64, 64, 3],
    ),
    (
        "conv3.bias",
        "_model.encoder.2.reparam_conv.bias",
        &[64],
        &[64],
    ),
    (
        "conv4.weight",
        "_model.encoder.3.reparam_conv.weight",
        &[128, 64, 3],
        &[128, 64, 3],
    ),
    (
        "conv4.bias",
        "_model.encoder.3.reparam_conv.bias",
        &[128],
        &[128],
    ),
    (
        "lstm_cell.weight_ih",
        "_model.decoder.rnn.weight_ih",
        &[512, 128],
        &[512, 128],
    ),
    (
        "lstm_cell.weight_hh",
        "_model.decoder.rnn.weight_hh",
        &[512, 128],
        &[512, 128],
    ),
    (
        "lstm_cell.bias_ih",
        "_model.decoder.rnn.bias_ih",
        &[512],
        &[512],
    ),
    (
        "lstm_cell.bias_hh",
        "_model.decoder.rnn.bias_hh",
        &[512],
        &[512],
    ),
    (
        "final_conv.weight",
        "_model.decoder.decoder.2.weight",
        &[1, 128, 1],
        &[128],
    ),
    (
        "final_conv.bias",
        "_model.decoder.decoder.2.bias",
        &[1],
        &[],
    ),
];

/// A Silero model ready to write.
pub struct ConvertedSilero {
    pub tensors: Vec<GgmlTensor>,
}

impl ConvertedSilero {
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(&GGML_MAGIC.to_le_bytes())?;
        let arch = b"silero-16k";
        out.write_all(&(arch.len() as u32).to_le_bytes())?;
        out.write_all(arch)?;
        for v in [6u32, 2, 0].iter().chain(HPARAMS.iter()) {
            out.write_all(&v.to_le_bytes())?;
        }
        for t in &self.tensors {
            t.write_to(out)?;
        }
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct SafetensorEntry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// A tensor's shape and values.
pub type Tensor = (Vec<usize>, Vec<f32>);

/// Parses a safetensors file into name → (shape, f32 values). Only F32 is
/// accepted: that is what the Silero package ships.
pub fn read_safetensors(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>, ConvertError> {
    if bytes.len() < 8 {
        return Err(ConvertError::Truncated(
            "safetensors file is shorter than its 8-byte header length".into(),
        ));
    }
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header_end = 8usize
        .checked_add(header_len)
        .filter(|end| *end <= bytes.len())
        .ok_or_else(|| {
            ConvertError::Truncated(format!(
                "safetensors header of {header_len} bytes runs past the end of the file"
            ))
        })?;
    let header: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&bytes[8..header_end])
        .map_err(|e| ConvertError::Format(format!("safetensors header is not valid JSON: {e}")))?;
    let data = &bytes[header_end..];
    let mut out = BTreeMap::new();
    for (name, value) in header {
        if name == "__metadata__" {
            continue;
        }
        let entry: SafetensorEntry = serde_json::from_value(value)
            .map_err(|e| ConvertError::Format(format!("tensor `{name}`: {e}")))?;
        if entry.dtype != "F32" {
            return Err(ConvertError::Unsupported(format!(
                "tensor `{name}` has dtype {}, expected F32",
                entry.dtype
            )));
        }
        let [start, end] = entry.data_offsets;
        let n = entry.shape.iter().product::<usize>();
        if end > data.len() || start > end {
            return Err(ConvertError::Truncated(format!(
                "tensor `{name}` data runs past the end of the file"
            )));
        }
        if end - start != n * 4 {
            return Err(ConvertError::Format(format!(
                "tensor `{name}` has {} bytes for shape {:?}",
                end - start,
                entry.shape
            )));
        }
        let values = data[start..end]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        out.insert(name, (entry.shape, values));
    }
    Ok(out)
}

pub fn convert_file(path: &Path) -> Result<ConvertedSilero, ConvertError> {
    let bytes = std::fs::read(path).map_err(|e| ConvertError::io(path, e))?;
    convert(&bytes)
}

pub fn convert(bytes: &[u8]) -> Result<ConvertedSilero, ConvertError> {
    let mut tensors_in = read_safetensors(bytes)?;
    let mut tensors = Vec::with_capacity(TENSORS.len());
    for (src, dst, shape, reshape) in TENSORS {
        let (got_shape, values) = tensors_in.remove(*src).ok_or_else(|| {
            ConvertError::Unsupported(format!(
                "no tensor `{src}`: not a Silero VAD v6 16 kHz model (expected silero_vad_16k.safetensors)"
            ))
        })?;
        if got_shape != *shape {
            return Err(ConvertError::Unsupported(format!(
                "tensor `{src}` has shape {got_shape:?}, Silero VAD v6 has {shape:?}"
            )));
        }
        tensors.push(GgmlTensor::from_f32(
            *dst,
            reshape.to_vec(),
            &values,
            GgmlType::F32,
        ));
    }
    Ok(ConvertedSilero { tensors })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safetensors(tensors: &[(&str, &[usize])]) -> Vec<u8> {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, shape) in tensors {
            let n: usize = shape.iter().product();
            let start = data.len();
            data.extend((0..n).flat_map(|i| (i as f32).to_le_bytes()));
            header.insert(
                name.to_string(),
                serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
            );
        }
        let header = serde_json::to_vec(&header).unwrap();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header);
        out.extend(data);
        out
    }

    fn full_model() -> Vec<u8> {
        let list: Vec<(&str, &[usize])> = TENSORS
            .iter()
            .map(|(s, _, shape, _)| (*s, *shape))
            .collect();
        safetensors(&list)
    }

    #[test]
    fn renames_and_reshapes_the_decoder_head() {
        let c = convert(&full_model()).unwrap();
        assert_eq!(c.tensors.len(), 15);
        let w = c
            .tensors
            .iter()
            .find(|t| t.name == "_model.decoder.decoder.2.weight")
            .unwrap();
        assert_eq!(w.shape, vec![128]);
        let b = c
            .tensors
            .iter()
            .find(|t| t.name == "_model.decoder.decoder.2.bias")
            .unwrap();
        assert!(b.shape.is_empty(), "bias is a 0-d scalar");
        assert_eq!(b.data.len(), 4);
        assert!(c.tensors.iter().all(|t| t.ty == GgmlType::F32));
    }

    #[test]
    fn header_layout() {
        let mut out = Vec::new();
        convert(&full_model()).unwrap().write_to(&mut out).unwrap();
        assert_eq!(&out[..4], &GGML_MAGIC.to_le_bytes());
        assert_eq!(u32::from_le_bytes(out[4..8].try_into().unwrap()), 10);
        assert_eq!(&out[8..18], b"silero-16k");
        let words: Vec<u32> = out[18..18 + 22 * 4]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(&words[..3], &[6, 2, 0]);
        assert_eq!(&words[3..], &HPARAMS);
    }

    #[test]
    fn wrong_model_and_truncation_are_clear() {
        let err = convert(&safetensors(&[("foo", &[2])]))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not a Silero VAD v6"), "{err}");
        let bytes = full_model();
        let err = convert(&bytes[..bytes.len() - 100])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("truncated"), "{err}");
        let err = convert(b"hello").err().unwrap().to_string();
        assert!(err.contains("truncated"), "{err}");
    }
}
