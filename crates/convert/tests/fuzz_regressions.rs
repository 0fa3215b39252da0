//! Inputs the fuzzers (`scripts/fuzz.sh`, `fuzz/fuzz_targets/`) found in the
//! converters, kept in the normal suite so their fixes stay fixed. Each must
//! be a clean error: no panic, no abort, no runaway allocation.

use std::path::PathBuf;

use utter_convert::ct2::Ct2Model;

fn found(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_found")
        .join(name)
}

/// A tensor shape whose element count overflows.
#[test]
fn a_ct2_shape_that_overflows_is_a_format_error() {
    let bytes = std::fs::read(found("ct2-shape-overflows.bin")).unwrap();
    let Err(err) = Ct2Model::parse(&bytes) else {
        panic!("parsed");
    };
    assert!(
        err.to_string().contains("more than fits in memory"),
        "{err}"
    );
}
