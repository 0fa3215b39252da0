//! settings.json as the app and the CLI load it at start; a bad file is kept
//! aside and defaults are used, so loading must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, data).unwrap();
    let loaded = utter_core::settings::load(&path);
    let _ = loaded.settings.validate();
    let _ = loaded.settings.text_rules();
    let _ = loaded.settings.output_config();
    let _ = loaded.settings.trigger_mode();
});
