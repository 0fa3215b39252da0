//! Shared helpers for tests that need the real models and real speech.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use utter_models::ModelStore;

/// Real LibriVox speech from Debian's `pocketsphinx-testdata`.
pub const LIBRIVOX: &str = "/usr/share/pocketsphinx/test/data/librivox";

pub fn store() -> ModelStore {
    let store = ModelStore::new(utter_base::paths::models_dir());
    assert!(
        store.resolve_speech(None).is_ok() && store.vad().unwrap().is_some(),
        "the default models are not installed in {}: run `npm test` (it provisions them) or `utter models install-default`",
        store.dir().display()
    );
    store
}

/// The model the tests' expected texts come from: whisper tiny.en, named
/// (a new installation dictates with another model, see `models::starter`).
pub const TEST_MODEL: &str = "whisper-tiny.en";

pub fn speech_model() -> PathBuf {
    store().resolve_speech(Some(TEST_MODEL)).unwrap().1
}

pub fn vad_model() -> PathBuf {
    let s = store();
    s.path_of(&s.vad().unwrap().unwrap())
}

/// (clip path, reference transcript) for each LibriVox clip.
pub fn librivox_clips() -> Vec<(PathBuf, String)> {
    let truth = std::fs::read_to_string(Path::new(LIBRIVOX).join("transcription"))
        .expect("pocketsphinx-testdata is installed (apt install pocketsphinx-testdata)");
    truth
        .lines()
        .filter_map(|line| {
            let (text, id) = line.rsplit_once(" (")?;
            let id = id.trim_end_matches(')');
            let text = text.replace("<s>", "").replace("</s>", "");
            Some((
                Path::new(LIBRIVOX).join(format!("{id}.wav")),
                text.trim().to_string(),
            ))
        })
        .collect()
}

/// Decodes a file to 16 kHz mono.
pub fn load_pcm(path: &Path) -> Vec<f32> {
    let mut pcm = Vec::new();
    utter_core::audio::decode_file(path, |p| pcm.extend_from_slice(p)).unwrap();
    pcm
}
