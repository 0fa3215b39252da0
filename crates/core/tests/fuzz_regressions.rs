//! Inputs the fuzzers (`scripts/fuzz.sh`, `fuzz/fuzz_targets/`) found, kept
//! in the normal suite so their fixes stay fixed. Each must be a clean
//! error: no panic, no abort, no runaway allocation.

use std::path::PathBuf;

use utter_core::models::convert::ct2::Ct2Model;

fn found(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_found")
        .join(name)
}

/// A FLAC whose Vorbis comment claims 2.5 GB: symphonia would allocate it
/// before reading (an abort where memory is short).
#[test]
fn a_flac_comment_that_claims_gigabytes_is_a_decode_error() {
    let path = found("flac-comment-claims-2.5-GB.flac");
    let err = utter_core::audio::decode_file(&path, |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("claims more bytes than it holds"),
        "{err}"
    );
    assert_eq!(utter_core::audio::probe_duration_secs(&path), None);
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
