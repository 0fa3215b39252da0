//! The model catalog (`UTTER_CATALOG`) and the models directory's
//! manifest.json: the first byte picks which, the rest is the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use utter_core::models::{Catalog, ModelStore};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    if pick % 2 == 0 {
        let path = dir.path().join("catalog.json");
        std::fs::write(&path, bytes).unwrap();
        if let Ok(catalog) = Catalog::load(Some(&path)) {
            for model in &catalog.models {
                if let Some(file) = model.file(None) {
                    let _ = catalog.urls(model, file, &["https://mirror.example".into()]);
                }
            }
        }
    } else {
        std::fs::write(dir.path().join("manifest.json"), bytes).unwrap();
        let store = ModelStore::new(dir.path());
        let _ = store.list();
        let _ = store.default_speech();
        let _ = store.vad();
    }
});
