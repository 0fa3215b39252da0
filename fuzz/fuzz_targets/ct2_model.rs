//! A CTranslate2 `model.bin` as `utter models import` reads it, then the
//! conversion to the engine's format (quantised, to cover that path too).
#![no_main]

use libfuzzer_sys::fuzz_target;
use utter_convert::{ct2::Ct2Model, quant::Quant, whisper_bin};

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = Ct2Model::parse(data) {
        let pieces: Vec<String> = (0..64).map(|i| format!("t{i}")).collect();
        if let Ok(converted) = whisper_bin::convert(&model, &pieces, Quant::Q8_0) {
            let _ = converted.write_to(&mut std::io::sink());
        }
    }
});
