//! What the app gives back once no web view is left (Linux): WebKit's
//! network process and the pages of the libraries only a web view ran.

use std::time::Duration;

use tauri::{AppHandle, Manager};

use crate::{library_pages, webkit_network};

/// How long after the last web view went this happens: long enough for a
/// window closed and opened again at once (a second launch) not to pay for a
/// new network process, and for WebKit to finish writing what the pages left
/// (the UI keeps nothing in web storage, but WebKit's own caches).
const GRACE: Duration = Duration::from_secs(5);

/// Called when a window was destroyed: after [`GRACE`], if no web view is
/// left by then, ends the network process and pages out WebKit's libraries.
pub fn after_window_destroyed(app: &AppHandle) {
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(GRACE).await;
        let app = handle.clone();
        // Checked and done on the main thread, where web views are made: none
        // can appear between the look and the work.
        let _ = handle.run_on_main_thread(move || {
            if app.webview_windows().is_empty() {
                webkit_network::end();
                let advised = library_pages::page_out_webview_libraries();
                tracing::info!(
                    "no web view left: paged out {} MB of WebKit's and Mesa's library mappings",
                    advised / (1 << 20)
                );
            }
        });
    });
}
