//! Silero VAD weights as safetensors, as `utter models import` reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use utter_convert::silero;

fuzz_target!(|data: &[u8]| {
    let _ = silero::read_safetensors(data);
    if let Ok(converted) = silero::convert(data) {
        let _ = converted.write_to(&mut std::io::sink());
    }
});
