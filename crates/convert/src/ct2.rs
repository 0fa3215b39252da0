//! Reader for CTranslate2 `model.bin` files (format versions 5 and 6), the
//! format faster-whisper models ship in. It only parses; mapping the variables
//! onto another format is the job of [`super::whisper_bin`].

use std::collections::BTreeMap;
use std::path::Path;

use super::ConvertError;

/// Element type of a CTranslate2 variable (the `u8` code in the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ct2Dtype {
    F32,
    I8,
    I16,
    I32,
    F16,
}

impl Ct2Dtype {
    fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::F32,
            1 => Self::I8,
            2 => Self::I16,
            3 => Self::I32,
            4 => Self::F16,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            Self::I8 => 1,
            Self::I16 | Self::F16 => 2,
            Self::F32 | Self::I32 => 4,
        }
    }
}

/// One named tensor (or scalar, when `shape` is empty).
#[derive(Debug, Clone)]
pub struct Ct2Variable {
    pub shape: Vec<usize>,
    pub dtype: Ct2Dtype,
    pub data: Vec<u8>,
}

impl Ct2Variable {
    pub fn element_count(&self) -> usize {
        self.shape.iter().product()
    }

    /// The values widened to f32; integer scalars/tensors are converted too.
    pub fn to_f32(&self) -> Vec<f32> {
        match self.dtype {
            Ct2Dtype::F32 => self
                .data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Ct2Dtype::F16 => self
                .data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            Ct2Dtype::I8 => self.data.iter().map(|&b| b as i8 as f32).collect(),
            Ct2Dtype::I16 => self
                .data
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32)
                .collect(),
            Ct2Dtype::I32 => self
                .data
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32)
                .collect(),
        }
    }

    /// A scalar integer value (e.g. `encoder/num_heads`).
    pub fn scalar_i64(&self) -> Option<i64> {
        if self.element_count() != 1 {
            return None;
        }
        self.to_f32().first().map(|v| *v as i64)
    }
}

/// A parsed CTranslate2 model: spec name plus its variables and aliases.
#[derive(Debug)]
pub struct Ct2Model {
    pub version: u32,
    pub spec_name: String,
    pub spec_revision: u32,
    pub variables: BTreeMap<String, Ct2Variable>,
    pub aliases: BTreeMap<String, String>,
}

impl Ct2Model {
    pub fn open(path: &Path) -> Result<Self, ConvertError> {
        let bytes = std::fs::read(path).map_err(|e| ConvertError::io(path, e))?;
        Self::parse(&bytes)
    }

    pub fn parse(bytes: &[u8]) -> Result<Self, ConvertError> {
        let mut r = Reader { bytes, pos: 0 };
        let version = r.u32("format version")?;
        if !(5..=6).contains(&version) {
            return Err(ConvertError::Format(format!(
                "CTranslate2 model.bin format version {version} is not supported (expected 5 or 6)"
            )));
        }
        let spec_name = r.string("spec name")?;
        let spec_revision = r.u32("spec revision")?;
        let n_variables = r.u32("variable count")?;
        let mut variables = BTreeMap::new();
        for _ in 0..n_variables {
            let name = r.string("variable name")?;
            let rank = r.u8(&name)? as usize;
            let mut shape = Vec::with_capacity(rank);
            for _ in 0..rank {
                shape.push(r.u32(&name)? as usize);
            }
            let code = r.u8(&name)?;
            let dtype = Ct2Dtype::from_code(code).ok_or_else(|| {
                ConvertError::Format(format!("variable `{name}` has unknown dtype code {code}"))
            })?;
            let n_bytes = r.u32(&name)? as usize;
            // Checked: a corrupt shape must be an error, not an overflow.
            let expected = shape
                .iter()
                .try_fold(dtype.size(), |n, &dim| n.checked_mul(dim));
            if expected != Some(n_bytes) {
                let needs = expected.map_or("more than fits in memory".into(), |n| n.to_string());
                return Err(ConvertError::Format(format!(
                    "variable `{name}` declares {n_bytes} bytes but its shape {shape:?} of {dtype:?} needs {needs}"
                )));
            }
            let data = r.take(n_bytes, &name)?.to_vec();
            variables.insert(name, Ct2Variable { shape, dtype, data });
        }
        let mut aliases = BTreeMap::new();
        // Aliases are optional at the very end of the file.
        if r.remaining() >= 4 {
            let n_aliases = r.u32("alias count")?;
            for _ in 0..n_aliases {
                let alias = r.string("alias")?;
                let target = r.string("alias target")?;
                aliases.insert(alias, target);
            }
        }
        Ok(Self {
            version,
            spec_name,
            spec_revision,
            variables,
            aliases,
        })
    }

    /// Looks a variable up by name, following aliases.
    pub fn get(&self, name: &str) -> Option<&Ct2Variable> {
        self.variables.get(name).or_else(|| {
            self.aliases
                .get(name)
                .and_then(|target| self.variables.get(target))
        })
    }

    pub fn require(&self, name: &str) -> Result<&Ct2Variable, ConvertError> {
        self.get(name)
            .ok_or_else(|| ConvertError::Format(format!("missing variable `{name}`")))
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ConvertError> {
        if self.remaining() < n {
            return Err(ConvertError::Truncated(format!(
                "file ends inside {what} (needs {n} bytes at offset {}, {} left)",
                self.pos,
                self.remaining()
            )));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, ConvertError> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, ConvertError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, ConvertError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `u16` length + bytes, NUL-padded.
    fn string(&mut self, what: &str) -> Result<String, ConvertError> {
        let len = self.u16(what)? as usize;
        let raw = self.take(len, what)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        String::from_utf8(raw[..end].to_vec())
            .map_err(|_| ConvertError::Format(format!("{what} is not UTF-8")))
    }
}

/// Writes a CTranslate2 file; used by tests to build small models.
#[cfg(test)]
pub(crate) fn write_ct2(spec: &str, vars: &[(&str, Vec<usize>, u8, Vec<u8>)]) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&((s.len() + 1) as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    let mut out = Vec::new();
    out.extend_from_slice(&6u32.to_le_bytes());
    string(&mut out, spec);
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(vars.len() as u32).to_le_bytes());
    for (name, shape, code, data) in vars {
        string(&mut out, name);
        out.push(shape.len() as u8);
        for d in shape {
            out.extend_from_slice(&(*d as u32).to_le_bytes());
        }
        out.push(*code);
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn parses_variables_and_nul_padded_names() {
        let bytes = write_ct2(
            "WhisperSpec",
            &[
                ("a/b", vec![2], 0, f32_bytes(&[1.0, 2.0])),
                ("n", vec![], 3, 6i32.to_le_bytes().to_vec()),
            ],
        );
        let m = Ct2Model::parse(&bytes).unwrap();
        assert_eq!(m.spec_name, "WhisperSpec");
        assert_eq!(m.require("a/b").unwrap().to_f32(), vec![1.0, 2.0]);
        assert_eq!(m.require("n").unwrap().scalar_i64(), Some(6));
    }

    #[test]
    fn f16_widens_exactly() {
        let data: Vec<u8> = [0.5f32, -2.0]
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
            .collect();
        let bytes = write_ct2("WhisperSpec", &[("x", vec![2], 4, data)]);
        let m = Ct2Model::parse(&bytes).unwrap();
        assert_eq!(m.require("x").unwrap().to_f32(), vec![0.5, -2.0]);
    }

    #[test]
    fn unknown_dtype_is_named() {
        let bytes = write_ct2("WhisperSpec", &[("w", vec![1], 9, vec![0])]);
        let err = Ct2Model::parse(&bytes).unwrap_err().to_string();
        assert!(err.contains("unknown dtype code 9"), "{err}");
        assert!(err.contains("`w`"), "{err}");
    }

    #[test]
    fn truncated_file_is_reported() {
        let bytes = write_ct2("WhisperSpec", &[("w", vec![4], 0, f32_bytes(&[1.0; 4]))]);
        let err = Ct2Model::parse(&bytes[..bytes.len() - 9])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("file ends inside `w`") || err.contains("file ends inside w"),
            "{err}"
        );
    }

    #[test]
    fn byte_count_must_match_shape() {
        let bytes = write_ct2("WhisperSpec", &[("w", vec![3], 0, f32_bytes(&[1.0; 2]))]);
        let err = Ct2Model::parse(&bytes).unwrap_err().to_string();
        assert!(err.contains("declares 8 bytes"), "{err}");
    }
}
