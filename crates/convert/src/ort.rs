//! A reader for ONNX Runtime's `.ort` model files: a FlatBuffer with the
//! schema `onnxruntime/core/flatbuffers/schema/ort.fbs`
//! (`InferenceSession → Model → Graph → {initializers, nodes}`).
//!
//! Only what a weight converter needs is read: every initializer (name,
//! dims, data type, raw bytes) and every node (name, op type, inputs), with
//! the subgraphs of `If`/`Loop` nodes walked too. A hand-written reader of a
//! few field slots is smaller than the generated bindings of the whole
//! schema, and every offset it follows is bounds-checked: a damaged file is
//! an error that says what was wrong, never a panic.

use std::collections::HashMap;

use super::ConvertError;

/// The FlatBuffer file identifier of `.ort` files (bytes 4..8).
pub const FILE_IDENTIFIER: &[u8; 4] = b"ORTM";

/// ONNX `TensorProto.DataType` values that weights come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrtDataType {
    F32,
    U8,
    I8,
    I32,
    I64,
    F16,
    /// Any other type (strings, doubles, bf16...): readable as bytes only.
    Other(i32),
}

impl OrtDataType {
    fn from_raw(raw: i32) -> Self {
        match raw {
            1 => Self::F32,
            2 => Self::U8,
            3 => Self::I8,
            6 => Self::I32,
            7 => Self::I64,
            10 => Self::F16,
            other => Self::Other(other),
        }
    }

    /// Bytes per element, for the types with a fixed size.
    fn size(self) -> Option<usize> {
        match self {
            Self::U8 | Self::I8 => Some(1),
            Self::F16 => Some(2),
            Self::F32 | Self::I32 => Some(4),
            Self::I64 => Some(8),
            Self::Other(_) => None,
        }
    }
}

/// One initializer (a constant tensor) of a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct OrtTensor<'a> {
    pub name: &'a str,
    /// ONNX (row-major) order.
    pub dims: Vec<usize>,
    pub data_type: OrtDataType,
    pub raw: &'a [u8],
}

impl OrtTensor<'_> {
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as f32 (integer types give their plain values).
    pub fn to_f32(&self) -> Result<Vec<f32>, ConvertError> {
        let size = self.data_type.size().ok_or_else(|| {
            ConvertError::Unsupported(format!(
                "tensor `{}` has ONNX data type {:?}, which is not a number type Utter reads",
                self.name, self.data_type
            ))
        })?;
        if self.raw.len() != self.len() * size {
            return Err(ConvertError::Format(format!(
                "tensor `{}`: {} bytes of data for dims {:?}",
                self.name,
                self.raw.len(),
                self.dims
            )));
        }
        let values = self.raw.chunks_exact(size);
        Ok(match self.data_type {
            OrtDataType::F32 => values
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect(),
            OrtDataType::F16 => values
                .map(|b| half::f16::from_le_bytes(b.try_into().expect("2 bytes")).to_f32())
                .collect(),
            OrtDataType::U8 => values.map(|b| f32::from(b[0])).collect(),
            OrtDataType::I8 => values.map(|b| f32::from(b[0] as i8)).collect(),
            OrtDataType::I32 => values
                .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")) as f32)
                .collect(),
            OrtDataType::I64 => values
                .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")) as f32)
                .collect(),
            OrtDataType::Other(_) => unreachable!("no size"),
        })
    }

    /// The single value of a scalar (or one-element) tensor.
    pub fn scalar(&self) -> Result<f32, ConvertError> {
        match self.to_f32()?.as_slice() {
            [v] => Ok(*v),
            values => Err(ConvertError::Format(format!(
                "tensor `{}` should hold one value, it holds {}",
                self.name,
                values.len()
            ))),
        }
    }
}

/// One node of a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrtNode<'a> {
    pub name: &'a str,
    pub op_type: &'a str,
    /// Input value names; an omitted optional input is an empty string.
    pub inputs: Vec<&'a str>,
}

impl<'a> OrtNode<'a> {
    /// Input `i`, which must be there (not omitted).
    pub fn input(&self, i: usize) -> Result<&'a str, ConvertError> {
        self.inputs
            .get(i)
            .copied()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| ConvertError::Format(format!("node `{}` has no input {i}", self.name)))
    }
}

/// Every initializer and node of a model, its subgraphs included. Where a
/// name repeats (the branches of a merged decoder), the first one is kept.
#[derive(Debug, Default)]
pub struct OrtModel<'a> {
    pub initializers: HashMap<&'a str, OrtTensor<'a>>,
    /// In file order, subgraphs after their parent's nodes.
    pub nodes: Vec<OrtNode<'a>>,
}

impl<'a> OrtModel<'a> {
    /// Parses an `.ort` file held in memory. `what` names it in errors.
    pub fn parse(bytes: &'a [u8], what: &'a str) -> Result<Self, ConvertError> {
        let fb = FlatBuffer { bytes, what };
        if bytes.len() < 8 || &bytes[4..8] != FILE_IDENTIFIER {
            return Err(ConvertError::Format(format!(
                "{what}: not an ONNX Runtime .ort file (no `ORTM` identifier)"
            )));
        }
        let session = fb.root()?;
        let model = session
            .table(Slot::SESSION_MODEL)?
            .ok_or_else(|| fb.missing("model"))?;
        let graph = model
            .table(Slot::MODEL_GRAPH)?
            .ok_or_else(|| fb.missing("graph"))?;
        let mut out = OrtModel::default();
        out.add_graph(graph, 0)?;
        Ok(out)
    }

    pub fn node(&self, name: &str) -> Option<&OrtNode<'a>> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn initializer(&self, name: &str) -> Option<&OrtTensor<'a>> {
        self.initializers.get(name)
    }

    fn add_graph(&mut self, graph: Table<'a>, depth: usize) -> Result<(), ConvertError> {
        // Real models nest two or three levels (If inside Loop...); a file that
        // claims hundreds is damaged or hostile.
        if depth > 16 {
            return Err(graph.fb.format("subgraphs nested more than 16 deep"));
        }
        for tensor in graph.tables(Slot::GRAPH_INITIALIZERS)? {
            let tensor = read_tensor(tensor)?;
            self.initializers.entry(tensor.name).or_insert(tensor);
        }
        let mut subgraphs = Vec::new();
        for node in graph.tables(Slot::GRAPH_NODES)? {
            let name = node.string(Slot::NODE_NAME)?.unwrap_or("");
            let op_type = node.string(Slot::NODE_OP_TYPE)?.unwrap_or("");
            let inputs = node.strings(Slot::NODE_INPUTS)?;
            for attribute in node.tables(Slot::NODE_ATTRIBUTES)? {
                subgraphs.extend(attribute.table(Slot::ATTRIBUTE_GRAPH)?);
                subgraphs.extend(attribute.tables(Slot::ATTRIBUTE_GRAPHS)?);
            }
            if !self.nodes.iter().any(|n| n.name == name) || name.is_empty() {
                self.nodes.push(OrtNode {
                    name,
                    op_type,
                    inputs,
                });
            }
        }
        for subgraph in subgraphs {
            self.add_graph(subgraph, depth + 1)?;
        }
        Ok(())
    }
}

fn read_tensor<'a>(table: Table<'a>) -> Result<OrtTensor<'a>, ConvertError> {
    let name = table
        .string(Slot::TENSOR_NAME)?
        .ok_or_else(|| table.fb.missing("an initializer's name"))?;
    let dims = table
        .i64s(Slot::TENSOR_DIMS)?
        .into_iter()
        .map(|d| usize::try_from(d).map_err(|_| table.fb.format(&format!("`{name}` has dim {d}"))))
        .collect::<Result<Vec<_>, _>>()?;
    if dims
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(*d))
        .is_none()
    {
        return Err(table.fb.format(&format!("`{name}` has dims {dims:?}")));
    }
    let external = table.scalar_i64(Slot::TENSOR_EXTERNAL_DATA_OFFSET, -1)?;
    if external >= 0 {
        return Err(ConvertError::Unsupported(format!(
            "{}: tensor `{name}` keeps its data in a separate file, which Utter does not read",
            table.fb.what
        )));
    }
    Ok(OrtTensor {
        name,
        dims,
        data_type: OrtDataType::from_raw(table.scalar_i32(Slot::TENSOR_DATA_TYPE, 0)?),
        raw: table.bytes(Slot::TENSOR_RAW_DATA)?,
    })
}

/// Field slots (vtable byte offsets) of `ort.fbs`: field number n is at 4 + 2n.
struct Slot;

impl Slot {
    const SESSION_MODEL: u16 = 6;
    const MODEL_GRAPH: u16 = 18;
    const GRAPH_INITIALIZERS: u16 = 4;
    const GRAPH_NODES: u16 = 8;
    const NODE_NAME: u16 = 4;
    const NODE_OP_TYPE: u16 = 14;
    const NODE_INPUTS: u16 = 20;
    const NODE_ATTRIBUTES: u16 = 24;
    const ATTRIBUTE_GRAPH: u16 = 18;
    const ATTRIBUTE_GRAPHS: u16 = 28;
    const TENSOR_NAME: u16 = 4;
    const TENSOR_DIMS: u16 = 8;
    const TENSOR_DATA_TYPE: u16 = 10;
    const TENSOR_RAW_DATA: u16 = 12;
    const TENSOR_EXTERNAL_DATA_OFFSET: u16 = 16;
}

/// A FlatBuffer with bounds-checked reads.
#[derive(Clone, Copy)]
struct FlatBuffer<'a> {
    bytes: &'a [u8],
    what: &'a str,
}

impl<'a> FlatBuffer<'a> {
    fn format(&self, detail: &str) -> ConvertError {
        ConvertError::Format(format!("{}: damaged .ort file ({detail})", self.what))
    }

    fn missing(&self, field: &str) -> ConvertError {
        ConvertError::Format(format!("{}: the .ort file has no {field}", self.what))
    }

    fn slice(&self, at: usize, len: usize) -> Result<&'a [u8], ConvertError> {
        at.checked_add(len)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or_else(|| {
                ConvertError::Truncated(format!(
                    "{}: {len} bytes at offset {at} are past the end of the file ({} bytes)",
                    self.what,
                    self.bytes.len()
                ))
            })
    }

    fn u16(&self, at: usize) -> Result<u16, ConvertError> {
        Ok(u16::from_le_bytes(
            self.slice(at, 2)?.try_into().expect("2"),
        ))
    }

    fn u32(&self, at: usize) -> Result<u32, ConvertError> {
        Ok(u32::from_le_bytes(
            self.slice(at, 4)?.try_into().expect("4"),
        ))
    }

    /// Follows the unsigned offset stored at `at`.
    fn follow(&self, at: usize) -> Result<usize, ConvertError> {
        let target = at
            .checked_add(self.u32(at)? as usize)
            .filter(|t| *t < self.bytes.len())
            .ok_or_else(|| {
                ConvertError::Truncated(format!(
                    "{}: offset at {at} points past the end of the file ({} bytes): it is cut short or damaged",
                    self.what,
                    self.bytes.len()
                ))
            })?;
        Ok(target)
    }

    fn root(self) -> Result<Table<'a>, ConvertError> {
        self.table_at(self.follow(0)?)
    }

    fn table_at(self, pos: usize) -> Result<Table<'a>, ConvertError> {
        let soffset = i32::from_le_bytes(self.slice(pos, 4)?.try_into().expect("4"));
        let vtable = (pos as i64 - i64::from(soffset))
            .try_into()
            .ok()
            .filter(|v: &usize| v.checked_add(4).is_some_and(|e| e <= self.bytes.len()))
            .ok_or_else(|| self.format(&format!("table at {pos} has a bad vtable")))?;
        let vtable_len = self.u16(vtable)?;
        self.slice(vtable, usize::from(vtable_len))?;
        Ok(Table {
            fb: self,
            pos,
            vtable,
            vtable_len,
        })
    }

    /// A vector at `pos`: (first element, count), checked to fit.
    fn vector(&self, pos: usize, elem_size: usize) -> Result<(usize, usize), ConvertError> {
        let count = self.u32(pos)? as usize;
        let len = count
            .checked_mul(elem_size)
            .ok_or_else(|| self.format("vector length overflows"))?;
        self.slice(pos + 4, len)?;
        Ok((pos + 4, count))
    }

    fn string_at(&self, pos: usize) -> Result<&'a str, ConvertError> {
        let (start, len) = self.vector(pos, 1)?;
        std::str::from_utf8(self.slice(start, len)?)
            .map_err(|_| self.format(&format!("string at {pos} is not UTF-8")))
    }
}

#[derive(Clone, Copy)]
struct Table<'a> {
    fb: FlatBuffer<'a>,
    pos: usize,
    vtable: usize,
    vtable_len: u16,
}

impl<'a> Table<'a> {
    /// Where field `slot` is stored, if present.
    fn field(&self, slot: u16) -> Result<Option<usize>, ConvertError> {
        if slot + 2 > self.vtable_len {
            return Ok(None);
        }
        match self.fb.u16(self.vtable + usize::from(slot))? {
            0 => Ok(None),
            offset => Ok(Some(self.pos + usize::from(offset))),
        }
    }

    fn table(&self, slot: u16) -> Result<Option<Table<'a>>, ConvertError> {
        match self.field(slot)? {
            Some(at) => Ok(Some(self.fb.table_at(self.fb.follow(at)?)?)),
            None => Ok(None),
        }
    }

    fn string(&self, slot: u16) -> Result<Option<&'a str>, ConvertError> {
        match self.field(slot)? {
            Some(at) => Ok(Some(self.fb.string_at(self.fb.follow(at)?)?)),
            None => Ok(None),
        }
    }

    fn offsets(&self, slot: u16) -> Result<Vec<usize>, ConvertError> {
        let Some(at) = self.field(slot)? else {
            return Ok(Vec::new());
        };
        let (start, count) = self.fb.vector(self.fb.follow(at)?, 4)?;
        (0..count).map(|i| self.fb.follow(start + 4 * i)).collect()
    }

    fn tables(&self, slot: u16) -> Result<Vec<Table<'a>>, ConvertError> {
        self.offsets(slot)?
            .into_iter()
            .map(|pos| self.fb.table_at(pos))
            .collect()
    }

    fn strings(&self, slot: u16) -> Result<Vec<&'a str>, ConvertError> {
        self.offsets(slot)?
            .into_iter()
            .map(|pos| self.fb.string_at(pos))
            .collect()
    }

    fn bytes(&self, slot: u16) -> Result<&'a [u8], ConvertError> {
        let Some(at) = self.field(slot)? else {
            return Ok(&[]);
        };
        let (start, count) = self.fb.vector(self.fb.follow(at)?, 1)?;
        self.fb.slice(start, count)
    }

    fn i64s(&self, slot: u16) -> Result<Vec<i64>, ConvertError> {
        let Some(at) = self.field(slot)? else {
            return Ok(Vec::new());
        };
        let (start, count) = self.fb.vector(self.fb.follow(at)?, 8)?;
        let bytes = self.fb.slice(start, count * 8)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8")))
            .collect())
    }

    fn scalar_i32(&self, slot: u16, default: i32) -> Result<i32, ConvertError> {
        match self.field(slot)? {
            Some(at) => Ok(i32::from_le_bytes(
                self.fb.slice(at, 4)?.try_into().expect("4"),
            )),
            None => Ok(default),
        }
    }

    fn scalar_i64(&self, slot: u16, default: i64) -> Result<i64, ConvertError> {
        match self.field(slot)? {
            Some(at) => Ok(i64::from_le_bytes(
                self.fb.slice(at, 8)?.try_into().expect("8"),
            )),
            None => Ok(default),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ort_file;

    #[test]
    fn reads_initializers_and_nodes() {
        let raw: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let file = ort_file(
            &[("w", &[2], 1, &raw), ("q", &[1, 2], 2, &[7, 9])],
            &[("/a/MatMul", "MatMul", &["x", "w"])],
        );
        let model = OrtModel::parse(&file, "t.ort").unwrap();
        let w = model.initializer("w").unwrap();
        assert_eq!(w.dims, vec![2]);
        assert_eq!(w.to_f32().unwrap(), vec![1.5, -2.0]);
        assert_eq!(
            model.initializer("q").unwrap().to_f32().unwrap(),
            vec![7.0, 9.0]
        );
        let node = model.node("/a/MatMul").unwrap();
        assert_eq!(node.op_type, "MatMul");
        assert_eq!(node.inputs, vec!["x", "w"]);
    }

    #[test]
    fn rejects_a_file_without_the_identifier() {
        let err = OrtModel::parse(b"\x08\0\0\0NOPE0000", "x.ort").unwrap_err();
        assert!(
            err.to_string().contains("not an ONNX Runtime .ort file"),
            "{err}"
        );
    }

    #[test]
    fn every_truncation_of_a_file_is_an_error_not_a_panic() {
        let raw: Vec<u8> = [1.0f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let file = ort_file(&[("w", &[4], 1, &raw)], &[("n", "Add", &["w", "x"])]);
        // (The last byte is a string's NUL terminator, which no reader needs.)
        for len in 0..file.len() - 1 {
            assert!(
                OrtModel::parse(&file[..len], "t.ort").is_err(),
                "cut at {len}"
            );
        }
    }

    #[test]
    fn data_that_does_not_match_the_dims_is_named() {
        let file = ort_file(&[("w", &[3], 1, &[0u8; 8])], &[]);
        let model = OrtModel::parse(&file, "t.ort").unwrap();
        let err = model.initializer("w").unwrap().to_f32().unwrap_err();
        assert!(err.to_string().contains("tensor `w`: 8 bytes"), "{err}");
    }
}
