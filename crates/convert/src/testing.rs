//! Test fixtures built in memory: small `.ort` files, for this crate's
//! tests and the core's import tests (feature `test-support`).

use crate::ort::FILE_IDENTIFIER;

/// Builds small `.ort`-shaped FlatBuffers for tests, back to front as
/// FlatBuffers are (offsets are unsigned: a child lies after its
/// parent). A position is the distance from an object's start to the
/// end of the buffer, which does not change as more is prepended.
#[derive(Default)]
struct Builder {
    tail: Vec<u8>,
}

/// A field value of a table being written.
enum Field {
    /// An offset to an object already written.
    Offset(usize),
    I32(i32),
}

impl Builder {
    fn prepend(&mut self, bytes: &[u8]) -> usize {
        self.tail.splice(0..0, bytes.iter().copied());
        self.tail.len()
    }

    fn bytes(&mut self, data: &[u8]) -> usize {
        let mut v = (data.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(data);
        self.prepend(&v)
    }

    fn string(&mut self, s: &str) -> usize {
        let mut v = (s.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.prepend(&v)
    }

    fn i64s(&mut self, values: &[i64]) -> usize {
        let mut v = (values.len() as u32).to_le_bytes().to_vec();
        for x in values {
            v.extend_from_slice(&x.to_le_bytes());
        }
        self.prepend(&v)
    }

    fn offsets(&mut self, targets: &[usize]) -> usize {
        let start = self.tail.len() + 4 + 4 * targets.len();
        let mut v = (targets.len() as u32).to_le_bytes().to_vec();
        for (i, t) in targets.iter().enumerate() {
            let elem = start - 4 - 4 * i;
            v.extend_from_slice(&((elem - t) as u32).to_le_bytes());
        }
        self.prepend(&v)
    }

    /// A table with `fields` at vtable slots 4, 6, 8... (`None` = absent),
    /// its vtable just before it.
    fn table(&mut self, fields: &[Option<Field>]) -> usize {
        let present = fields.iter().flatten().count();
        let table_len = 4 + 4 * present;
        let start = self.tail.len() + table_len;
        let vtable_len = 4 + 2 * fields.len();
        let mut body = (vtable_len as i32).to_le_bytes().to_vec();
        let mut slots = Vec::new();
        for field in fields {
            match field {
                None => slots.push(0u16),
                Some(Field::I32(x)) => {
                    slots.push(body.len() as u16);
                    body.extend_from_slice(&x.to_le_bytes());
                }
                Some(Field::Offset(target)) => {
                    let here = start - body.len();
                    slots.push(body.len() as u16);
                    body.extend_from_slice(&((here - target) as u32).to_le_bytes());
                }
            }
        }
        let mut vtable = (vtable_len as u16).to_le_bytes().to_vec();
        vtable.extend_from_slice(&(table_len as u16).to_le_bytes());
        for s in slots {
            vtable.extend_from_slice(&s.to_le_bytes());
        }
        vtable.extend_from_slice(&body);
        self.prepend(&vtable) - vtable_len
    }

    fn finish(mut self, root: usize) -> Vec<u8> {
        let len = self.tail.len() + 8;
        let mut head = ((len - root) as u32).to_le_bytes().to_vec();
        head.extend_from_slice(FILE_IDENTIFIER);
        self.prepend(&head);
        self.tail
    }
}

/// An `.ort` file of one graph with `initializers` (name, dims, type, raw)
/// and `nodes` (name, op type, inputs).
pub fn ort_file(
    initializers: &[(&str, &[i64], i32, &[u8])],
    nodes: &[(&str, &str, &[&str])],
) -> Vec<u8> {
    let mut b = Builder::default();
    let mut node_tables = Vec::new();
    for (name, op, inputs) in nodes {
        let input_strings: Vec<usize> = inputs.iter().map(|s| b.string(s)).collect();
        let inputs = b.offsets(&input_strings);
        let op = b.string(op);
        let name = b.string(name);
        let mut fields: Vec<Option<Field>> = (0..11).map(|_| None).collect();
        fields[0] = Some(Field::Offset(name));
        fields[5] = Some(Field::Offset(op));
        fields[8] = Some(Field::Offset(inputs));
        node_tables.push(b.table(&fields));
    }
    let mut tensor_tables = Vec::new();
    for (name, dims, data_type, raw) in initializers {
        let raw = b.bytes(raw);
        let dims = b.i64s(dims);
        let name = b.string(name);
        tensor_tables.push(b.table(&[
            Some(Field::Offset(name)),
            None,
            Some(Field::Offset(dims)),
            Some(Field::I32(*data_type)),
            Some(Field::Offset(raw)),
        ]));
    }
    let nodes = b.offsets(&node_tables);
    let inits = b.offsets(&tensor_tables);
    let graph = b.table(&[Some(Field::Offset(inits)), None, Some(Field::Offset(nodes))]);
    let mut model_fields: Vec<Option<Field>> = (0..8).map(|_| None).collect();
    model_fields[7] = Some(Field::Offset(graph));
    let model = b.table(&model_fields);
    let session = b.table(&[None, Some(Field::Offset(model))]);
    b.finish(session)
}
