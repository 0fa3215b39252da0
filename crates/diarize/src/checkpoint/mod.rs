//! Reads the float tensors of a PyTorch checkpoint (`torch.save`'s zip format) by name.
//!
//! Both files we load are zip archives holding `*/data.pkl` (the pickled tensor map) and
//! one raw little-endian file per storage under `*/data/`. A Lightning checkpoint keeps the
//! map under `state_dict`; a plain `state_dict` file is the map itself.

mod pickle;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::DiarizeError;
pub use pickle::PickleError;
use pickle::Value;

/// A dense float tensor in row-major order.
#[derive(Debug, Clone)]
pub(crate) struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// The float tensors of one checkpoint; taken out one by one with their expected shapes.
pub(crate) struct Checkpoint {
    path: PathBuf,
    tensors: HashMap<String, Tensor>,
}

impl Checkpoint {
    pub(crate) fn open(path: &Path) -> Result<Self, DiarizeError> {
        let io = |source| DiarizeError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let not_ckpt = |reason: String| DiarizeError::NotACheckpoint {
            path: path.to_owned(),
            reason,
        };
        let corrupt = |reason: String| DiarizeError::Corrupt {
            path: path.to_owned(),
            reason,
        };
        let mut zip = zip::ZipArchive::new(file).map_err(|e| not_ckpt(e.to_string()))?;
        let pkl_name = (0..zip.len())
            .filter_map(|i| zip.name_for_index(i).map(str::to_owned))
            .find(|n| n.ends_with("data.pkl"))
            .ok_or_else(|| not_ckpt("no data.pkl inside".into()))?;
        let prefix = pkl_name.trim_end_matches("data.pkl").to_owned();
        let pkl = read_entry(&mut zip, &pkl_name).map_err(corrupt)?;
        let root = pickle::load(&pkl).map_err(|source| DiarizeError::BadTensorMap {
            path: path.to_owned(),
            source,
        })?;
        let map = state_dict(&root).ok_or_else(|| not_ckpt("no tensor map in data.pkl".into()))?;

        let mut storages: HashMap<String, Vec<u8>> = HashMap::new();
        let mut tensors = HashMap::new();
        for (name, t) in map {
            // Integer buffers (BatchNorm's num_batches_tracked) are not used.
            if t.dtype != "Float" {
                continue;
            }
            if !storages.contains_key(&t.key) {
                let bytes = read_entry(&mut zip, &format!("{prefix}data/{}", t.key))
                    .map_err(|e| corrupt(format!("tensor {name}: {e}")))?;
                storages.insert(t.key.clone(), bytes);
            }
            let data = gather(&storages[&t.key], &t)
                .ok_or_else(|| corrupt(format!("tensor {name} runs past its storage")))?;
            tensors.insert(
                name,
                Tensor {
                    shape: t.shape.clone(),
                    data,
                },
            );
        }
        Ok(Self {
            path: path.to_owned(),
            tensors,
        })
    }

    /// Takes the tensor `name`, which must have exactly `shape`.
    pub(crate) fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, DiarizeError> {
        let t = self
            .tensors
            .remove(name)
            .ok_or_else(|| DiarizeError::MissingTensor {
                path: self.path.clone(),
                name: name.to_owned(),
            })?;
        if t.shape != shape {
            return Err(DiarizeError::WrongShape {
                path: self.path.clone(),
                name: name.to_owned(),
                expected: shape.to_vec(),
                found: t.shape,
            });
        }
        Ok(t.data)
    }
}

fn read_entry(zip: &mut zip::ZipArchive<std::fs::File>, name: &str) -> Result<Vec<u8>, String> {
    let mut entry = zip.by_name(name).map_err(|e| format!("{name}: {e}"))?;
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{name}: {e}"))?;
    Ok(bytes)
}

/// The name → tensor map: the root dict, or its `state_dict` entry (Lightning).
fn state_dict(root: &Value) -> Option<Vec<(String, pickle::TensorRef)>> {
    let Value::Dict(d) = root else { return None };
    let d = d.borrow();
    for (k, v) in d.iter() {
        if matches!(k, Value::Str(s) if s == "state_dict") {
            return state_dict(v);
        }
    }
    let tensors: Vec<_> = d
        .iter()
        .filter_map(|(k, v)| match (k, v) {
            (Value::Str(name), Value::Tensor(t)) => Some((name.clone(), t.clone())),
            _ => None,
        })
        .collect();
    (!tensors.is_empty()).then_some(tensors)
}

/// Copies a (possibly strided) float32 tensor out of its storage bytes.
fn gather(storage: &[u8], t: &pickle::TensorRef) -> Option<Vec<f32>> {
    let numel: usize = t.shape.iter().product();
    let at = |i: usize| -> Option<f32> {
        let b = storage.get(i * 4..i * 4 + 4)?;
        Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut out = Vec::with_capacity(numel);
    let mut index = vec![0usize; t.shape.len()];
    for _ in 0..numel {
        let pos = t.offset
            + index
                .iter()
                .zip(&t.stride)
                .map(|(i, s)| i * s)
                .sum::<usize>();
        out.push(at(pos)?);
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < t.shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Some(out)
}
