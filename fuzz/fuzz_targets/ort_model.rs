//! ONNX Runtime `.ort` files (Moonshine's), as `utter models import` reads
//! them: the FlatBuffer reader, then every initializer's values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use utter_convert::ort::OrtModel;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = OrtModel::parse(data, "fuzz.ort") {
        for tensor in model.initializers.values() {
            let _ = tensor.to_f32();
        }
        let _ = model.nodes.len();
    }
});
