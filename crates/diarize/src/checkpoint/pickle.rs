//! Just enough of Python's pickle format to read the tensor map of a `torch.save` file.
//!
//! The virtual machine builds plain values; any class it does not know (Lightning's
//! hyper-parameters, pyannote's task specifications) becomes an opaque object, so no Python
//! code is ever imitated. Only tensors (`torch._utils._rebuild_tensor_v2`) and the dicts and
//! tuples around them keep their content.

use std::cell::RefCell;
use std::rc::Rc;

/// A value on the pickle machine's stack.
// Scalars are kept for completeness of the stack; only tensors and containers are read.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub(crate) enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Tuple(Vec<Value>),
    List(Rc<RefCell<Vec<Value>>>),
    Dict(Rc<RefCell<Vec<(Value, Value)>>>),
    Global(String, String),
    /// A storage named by a persistent id: its file key and its element type.
    Storage {
        key: String,
        dtype: String,
    },
    Tensor(TensorRef),
    /// An instance of a class this reader does not model.
    Opaque,
    Mark,
}

/// Where a tensor's numbers are: a storage file, an offset and a strided shape.
#[derive(Debug, Clone)]
pub(crate) struct TensorRef {
    pub key: String,
    pub dtype: String,
    pub offset: usize,
    pub shape: Vec<usize>,
    pub stride: Vec<usize>,
}

/// Why a pickle program could not be run: it is cut short, malformed, or
/// builds a tensor this reader does not understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PickleError {
    #[error("the pickle ends early")]
    EndsEarly,
    #[error("pickle stack underflow")]
    StackUnderflow,
    #[error("pickle mark missing")]
    MarkMissing,
    #[error("unknown pickle memo key")]
    UnknownMemoKey(u32),
    #[error("STACK_GLOBAL without names")]
    StackGlobalWithoutNames,
    #[error("unsupported pickle opcode 0x{0:02x}")]
    UnsupportedOpcode(u8),
    #[error("persistent id is not a tuple")]
    PersistentIdNotTuple,
    #[error("unknown persistent id")]
    UnknownPersistentId,
    #[error("tensor without arguments")]
    TensorWithoutArguments,
    #[error("tensor with unexpected arguments")]
    TensorArguments,
    #[error("negative tensor dimension {0}")]
    NegativeDimension(i64),
    #[error("tensor dimension is not an integer")]
    DimensionNotInteger,
}

/// Runs the pickle program in `data` and returns the value it builds.
pub(crate) fn load(data: &[u8]) -> Result<Value, PickleError> {
    let mut m = Machine {
        data,
        pos: 0,
        stack: Vec::new(),
        memo: std::collections::HashMap::new(),
    };
    m.run()
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    stack: Vec<Value>,
    memo: std::collections::HashMap<u32, Value>,
}

impl Machine<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], PickleError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or(PickleError::EndsEarly)?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, PickleError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, PickleError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn line(&mut self) -> Result<String, PickleError> {
        let rest = &self.data[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(PickleError::EndsEarly)?;
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }
    fn text(&mut self, n: usize) -> Result<String, PickleError> {
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
    fn pop(&mut self) -> Result<Value, PickleError> {
        self.stack.pop().ok_or(PickleError::StackUnderflow)
    }
    fn top(&mut self) -> Result<&mut Value, PickleError> {
        self.stack.last_mut().ok_or(PickleError::StackUnderflow)
    }
    /// The values above the topmost mark, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<Value>, PickleError> {
        let at = self
            .stack
            .iter()
            .rposition(|v| matches!(v, Value::Mark))
            .ok_or(PickleError::MarkMissing)?;
        let items = self.stack.split_off(at + 1);
        self.stack.pop();
        Ok(items)
    }
    fn memo_get(&mut self, key: u32) -> Result<(), PickleError> {
        let v = self
            .memo
            .get(&key)
            .cloned()
            .ok_or(PickleError::UnknownMemoKey(key))?;
        self.stack.push(v);
        Ok(())
    }
    fn memo_put(&mut self, key: u32) -> Result<(), PickleError> {
        let v = self.top()?.clone();
        self.memo.insert(key, v);
        Ok(())
    }

    fn run(&mut self) -> Result<Value, PickleError> {
        loop {
            let op = self.u8()?;
            match op {
                0x80 => {
                    self.u8()?; // PROTO
                }
                0x95 => {
                    self.take(8)?; // FRAME
                }
                b'.' => return self.pop(), // STOP
                b'}' => self.stack.push(Value::Dict(Default::default())),
                b']' => self.stack.push(Value::List(Default::default())),
                b')' => self.stack.push(Value::Tuple(Vec::new())),
                b'(' => self.stack.push(Value::Mark),
                b'N' => self.stack.push(Value::None),
                0x88 => self.stack.push(Value::Bool(true)),
                0x89 => self.stack.push(Value::Bool(false)),
                b'K' => {
                    let v = self.u8()?;
                    self.stack.push(Value::Int(v.into()))
                }
                b'M' => {
                    let v = self.u16()?;
                    self.stack.push(Value::Int(v.into()))
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.stack.push(Value::Int(v.into()))
                }
                0x8a => {
                    // LONG1: little-endian two's complement of n bytes.
                    let n = self.u8()? as usize;
                    let b = self.take(n)?;
                    let mut v: i64 = 0;
                    for (i, &x) in b.iter().enumerate().take(8) {
                        v |= (x as i64) << (8 * i);
                    }
                    if n > 0 && n < 8 && b[n - 1] & 0x80 != 0 {
                        v -= 1i64 << (8 * n);
                    }
                    self.stack.push(Value::Int(v))
                }
                b'G' => {
                    let b = self.take(8)?;
                    let v = f64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
                    self.stack.push(Value::Float(v))
                }
                b'X' => {
                    let n = self.u32()? as usize;
                    let s = self.text(n)?;
                    self.stack.push(Value::Str(s))
                }
                0x8c => {
                    let n = self.u8()? as usize;
                    let s = self.text(n)?;
                    self.stack.push(Value::Str(s))
                }
                b'U' => {
                    let n = self.u8()? as usize;
                    let b = self.take(n)?.to_vec();
                    self.stack.push(Value::Bytes(b))
                }
                b'T' | b'B' => {
                    let n = self.u32()? as usize;
                    let b = self.take(n)?.to_vec();
                    self.stack.push(Value::Bytes(b))
                }
                b'C' => {
                    let n = self.u8()? as usize;
                    let b = self.take(n)?.to_vec();
                    self.stack.push(Value::Bytes(b))
                }
                b'q' => {
                    let k = self.u8()?.into();
                    self.memo_put(k)?
                }
                b'r' => {
                    let k = self.u32()?;
                    self.memo_put(k)?
                }
                0x94 => {
                    let k = self.memo.len() as u32; // MEMOIZE
                    self.memo_put(k)?
                }
                b'h' => {
                    let k = self.u8()?.into();
                    self.memo_get(k)?
                }
                b'j' => {
                    let k = self.u32()?;
                    self.memo_get(k)?
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.stack.push(Value::Global(module, name))
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    match (module, name) {
                        (Value::Str(m), Value::Str(n)) => self.stack.push(Value::Global(m, n)),
                        _ => return Err(PickleError::StackGlobalWithoutNames),
                    }
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::Tuple(items))
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    if self.stack.len() < n {
                        return Err(PickleError::StackUnderflow);
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.stack.push(Value::Tuple(items))
                }
                b'l' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::List(Rc::new(RefCell::new(items))))
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    let dict = Value::Dict(Default::default());
                    set_items(&dict, items);
                    self.stack.push(dict)
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    let top = self.top()?.clone();
                    set_items(&top, vec![k, v]);
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let top = self.top()?.clone();
                    set_items(&top, items);
                }
                b'a' => {
                    let v = self.pop()?;
                    if let Value::List(l) = self.top()? {
                        l.borrow_mut().push(v);
                    }
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    if let Value::List(l) = self.top()? {
                        l.borrow_mut().extend(items);
                    }
                }
                b'Q' => {
                    let pid = self.pop()?;
                    self.stack.push(persistent(pid)?)
                }
                b'R' => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    self.stack.push(reduce(callable, args)?)
                }
                0x81 => {
                    self.pop()?; // NEWOBJ: args, class
                    self.pop()?;
                    self.stack.push(Value::Opaque)
                }
                0x92 => {
                    self.pop()?; // NEWOBJ_EX: kwargs, args, class
                    self.pop()?;
                    self.pop()?;
                    self.stack.push(Value::Opaque)
                }
                b'b' => {
                    self.pop()?; // BUILD: the state of an object we keep opaque
                }
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let v = self.top()?.clone();
                    self.stack.push(v)
                }
                0x8f => self.stack.push(Value::Opaque), // EMPTY_SET
                0x90 => {
                    self.pop_mark()?; // ADDITEMS
                }
                0x91 => {
                    self.pop_mark()?; // FROZENSET
                    self.stack.push(Value::Opaque)
                }
                _ => return Err(PickleError::UnsupportedOpcode(op)),
            }
        }
    }
}

fn set_items(target: &Value, items: Vec<Value>) {
    if let Value::Dict(d) = target {
        let mut d = d.borrow_mut();
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            d.push((k, v));
        }
    }
}

/// torch.save's persistent ids: ('storage', <class FloatStorage>, key, location, numel).
fn persistent(pid: Value) -> Result<Value, PickleError> {
    let Value::Tuple(items) = pid else {
        return Err(PickleError::PersistentIdNotTuple);
    };
    match items.as_slice() {
        [Value::Str(kind), Value::Global(_, class), Value::Str(key), ..] if kind == "storage" => {
            let dtype = class.trim_end_matches("Storage").to_string();
            Ok(Value::Storage {
                key: key.clone(),
                dtype,
            })
        }
        _ => Err(PickleError::UnknownPersistentId),
    }
}

fn reduce(callable: Value, args: Value) -> Result<Value, PickleError> {
    let Value::Global(module, name) = &callable else {
        return Ok(Value::Opaque);
    };
    match (module.as_str(), name.as_str()) {
        ("torch._utils", "_rebuild_tensor_v2") | ("torch._utils", "_rebuild_tensor") => {
            let Value::Tuple(a) = args else {
                return Err(PickleError::TensorWithoutArguments);
            };
            match a.as_slice() {
                [Value::Storage { key, dtype }, Value::Int(offset), Value::Tuple(size), Value::Tuple(stride), ..] => {
                    Ok(Value::Tensor(TensorRef {
                        key: key.clone(),
                        dtype: dtype.clone(),
                        offset: non_negative(*offset)?,
                        shape: ints(size)?,
                        stride: ints(stride)?,
                    }))
                }
                _ => Err(PickleError::TensorArguments),
            }
        }
        ("collections", "OrderedDict") => Ok(Value::Dict(Default::default())),
        _ => Ok(Value::Opaque),
    }
}

fn non_negative(v: i64) -> Result<usize, PickleError> {
    usize::try_from(v).map_err(|_| PickleError::NegativeDimension(v))
}

fn ints(values: &[Value]) -> Result<Vec<usize>, PickleError> {
    values
        .iter()
        .map(|v| match v {
            Value::Int(i) => non_negative(*i),
            _ => Err(PickleError::DimensionNotInteger),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_dict_is_read() {
        // protocol 2: {"a": 1}
        let value = load(b"\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s.").unwrap();
        let Value::Dict(d) = value else {
            panic!("not a dict: {value:?}")
        };
        assert!(matches!(&d.borrow()[..], [(Value::Str(k), Value::Int(1))] if k == "a"));
    }

    #[test]
    fn a_bad_pickle_says_what_is_wrong() {
        assert_eq!(
            load(b"\x80\x02}X\x05\x00").unwrap_err(),
            PickleError::EndsEarly
        );
        assert_eq!(load(b"\x80").unwrap_err(), PickleError::EndsEarly);
        assert_eq!(load(b".").unwrap_err(), PickleError::StackUnderflow);
        assert_eq!(load(b"t").unwrap_err(), PickleError::MarkMissing);
        let err = load(b"\xff").unwrap_err();
        assert_eq!(err, PickleError::UnsupportedOpcode(0xff));
        assert_eq!(err.to_string(), "unsupported pickle opcode 0xff");
        assert_eq!(load(b"h\x07").unwrap_err(), PickleError::UnknownMemoKey(7));
    }
}
