//! Inputs the fuzzers (`scripts/fuzz.sh`, `fuzz/fuzz_targets/`) found, kept
//! in the normal suite so their fixes stay fixed. Each must be a clean
//! error: no panic, no abort, no runaway allocation. (The model converters'
//! are in crates/convert/tests/fuzz_regressions.rs.)

use std::path::PathBuf;

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
