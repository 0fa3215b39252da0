//! `cfg(desktop_linux)`: Linux and the other Unix desktops (X11, Wayland),
//! i.e. `all(unix, not(target_os = "macos"))`. The platform layer selects its
//! X11/Wayland code with this one name instead of repeating the condition.
//! Cargo.toml's `[target.'cfg(…)'.dependencies]` cannot use a build-script
//! cfg, so that table spells the same condition out once more.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(desktop_linux)");
    let unix = std::env::var_os("CARGO_CFG_UNIX").is_some();
    let macos = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "macos");
    if unix && !macos {
        println!("cargo::rustc-cfg=desktop_linux");
    }
}
