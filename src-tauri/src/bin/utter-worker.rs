//! The desktop app's engine and voice detector workers, in a binary of their
//! own. `utter-app` links WebKit and GTK, and a worker started from it mapped
//! them for nothing (~20 MB PSS in each worker: relocated library pages,
//! WebKit's speech voices); this one links the engine alone. The app starts
//! its workers from this file when it lies beside it — Tauri bundles every
//! binary of this package with the app — and from itself otherwise.

// No console window on Windows, as the app.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    let Some(code) = utter_engine::worker::serve_if_worker() else {
        eprintln!("utter-worker runs Utter's engine for the Utter app, which starts it");
        std::process::exit(2);
    };
    std::process::exit(i32::from(code));
}
