//! The main window's lifecycle. Utter spends its day in the tray, and a
//! webview costs a WebKit web process (~100–200 MB PSS) even while hidden, so
//! the window exists only while it is open: closing it to the tray destroys
//! it, opening it builds it again from `tauri.conf.json` (where it is marked
//! `create: false`), and a `--hidden` start (autostart) builds none. The UI
//! reads everything it shows from the core when it loads (status, settings,
//! history, file jobs), so nothing is lost with the webview.

use tauri::{AppHandle, Manager, WebviewWindow, WebviewWindowBuilder};

pub const LABEL: &str = "main";

/// Shows the main window, building it if it is closed. Runs on the main
/// thread's event loop: callers include the single-instance hand-over's
/// thread, and building a window from a synchronous handler off the main
/// thread deadlocks on Windows (WebviewWindowBuilder::new, "Known issues").
pub fn open(app: &AppHandle) {
    let handle = app.clone();
    if let Err(e) = app.run_on_main_thread(move || open_now(&handle)) {
        tracing::warn!("cannot open the window: {e}");
    }
}

/// [`open`], on the main thread.
pub fn open_now(app: &AppHandle) {
    let window = match app.get_webview_window(LABEL) {
        Some(w) => w,
        None => match build(app) {
            Ok(w) => w,
            Err(e) => {
                tracing::error!("cannot create the window: {e}");
                return;
            }
        },
    };
    let _ = window.unminimize();
    let _ = window.show();
    let _ = window.set_focus();
}

fn build(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == LABEL)
        .ok_or_else(|| tauri::Error::WindowNotFound)?
        .clone();
    let started = std::time::Instant::now();
    let window = WebviewWindowBuilder::from_config(app, &config)?.build()?;
    tracing::info!("window created in {} ms", started.elapsed().as_millis());
    Ok(window)
}

/// Whether closing the window should keep Utter running in the tray (and
/// so let the window, and its webview, go).
pub fn closes_to_tray(app: &AppHandle) -> bool {
    crate::tray::available(app)
}
