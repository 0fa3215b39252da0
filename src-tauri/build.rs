fn main() {
    engine_rpath();
    tauri_build::build()
}

/// A portable build (`dynamic-backends`) links the engine as a shared library
/// with its CPU modules: the app finds them next to itself (Windows, and the
/// build folder), in `../lib/Utter` (where the .deb and .rpm install
/// resources), or where the engine's build put them (`cargo run`).
fn engine_rpath() {
    println!("cargo:rerun-if-env-changed=DEP_TRANSCRIBE_CPP_RUNTIME_DIR");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if linux && std::env::var_os("CARGO_FEATURE_DYNAMIC_BACKENDS").is_some() {
        let built = std::env::var("DEP_TRANSCRIBE_CPP_RUNTIME_DIR").unwrap_or_default();
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN:$ORIGIN/../lib/Utter:{built}");
    }
}
