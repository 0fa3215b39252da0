//! Audio files of every container Utter opens (and the WAV recordings it
//! recovers after a crash): the first byte picks the file extension, the rest
//! is the file. A panic inside a demuxer is contained by `decode_file` (the
//! file's error, by design), so what this target finds is what containment
//! cannot cover: hangs, runaway allocations and crashes outside it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;

const EXTENSIONS: [&str; 12] = [
    "wav", "flac", "mp3", "ogg", "opus", "m4a", "mp4", "mkv", "webm", "aac", "mp2", "caf",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let ext = EXTENSIONS[pick as usize % EXTENSIONS.len()];
    let mut file = tempfile::Builder::new()
        .suffix(&format!(".{ext}"))
        .tempfile()
        .unwrap();
    file.write_all(bytes).unwrap();
    let _ = utter_core::audio::probe_duration_secs(file.path());
    let mut samples = 0usize;
    let _ = utter_core::audio::decode_file(file.path(), |pcm| samples += pcm.len());
});
