//! The portable build (`--features dynamic-backends`) links the engine as a
//! shared library with its CPU modules beside it. The binary finds them
//! through its rpath: next to itself (the portable folder of
//! scripts/build-portable.sh), in `../lib/Utter` (where the app's .deb and
//! .rpm install them), and where the build put them (so `cargo run` and the
//! tests work in place). A static build, the default, needs none of this.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TRANSCRIBE_CPP_RUNTIME_DIR");
    let dynamic = std::env::var_os("CARGO_FEATURE_DYNAMIC_BACKENDS").is_some();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if !dynamic || os != "linux" {
        return;
    }
    let mut rpath = String::from("$ORIGIN:$ORIGIN/../lib/Utter");
    if let Ok(built) = std::env::var("DEP_TRANSCRIBE_CPP_RUNTIME_DIR") {
        rpath.push(':');
        rpath.push_str(&built);
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
}
