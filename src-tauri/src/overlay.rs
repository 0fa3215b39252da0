//! The recording overlay: a small always-on-top window near the bottom of the
//! screen while recording or transcribing. It is created on first use and
//! destroyed once it has been hidden for [`LINGER`] (each webview costs a
//! WebKit web process, ~100 MB PSS, so none while Utter only sits in the
//! tray; kept between dictations in a row so it shows at once). It is
//! unfocusable and only ever shown, never focused, so the app being dictated
//! into keeps focus.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tauri::{
    AppHandle, Manager, PhysicalPosition, WebviewUrl, WebviewWindow, WebviewWindowBuilder,
};
use utter_app_core::{App, AppState, Status};

const LABEL: &str = "overlay";
/// How long a hidden overlay is kept for the next dictation before it goes.
const LINGER: Duration = Duration::from_secs(60);
/// Counts the overlay's hides and shows: a destroy scheduled at a hide
/// happens only if nothing showed or hid it since.
static GENERATION: AtomicU64 = AtomicU64::new(0);

fn create(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App("overlay.html".into()))
        .title("Utter overlay")
        // Wide enough for two lines of live text (~45 characters each).
        .inner_size(400.0, 56.0)
        .decorations(false)
        .transparent(true)
        .always_on_top(true)
        .skip_taskbar(true)
        .resizable(false)
        .shadow(false)
        .visible(false)
        .focused(false)
        .focusable(false)
        .build()
}

/// Shows or hides the overlay for `status`. The window work runs on the main
/// thread's event loop, so the dictation thread that reported the status
/// never waits for a window to be created.
pub fn follow(app: &AppHandle, status: &Status) {
    let wanted = matches!(status.state, AppState::Recording | AppState::Transcribing)
        && app.state::<App>().settings().show_overlay;
    let handle = app.clone();
    if let Err(e) = app.run_on_main_thread(move || apply(&handle, wanted)) {
        tracing::warn!("overlay: {e}");
    }
}

fn apply(app: &AppHandle, wanted: bool) {
    let window = match app.get_webview_window(LABEL) {
        Some(w) => w,
        None if wanted => match create(app) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("cannot create the overlay: {e}");
                return;
            }
        },
        None => return,
    };
    let visible = window.is_visible().unwrap_or(false);
    if wanted && !visible {
        if let Ok(Some(monitor)) = window.primary_monitor() {
            let (area, size) = (monitor.size(), window.outer_size().unwrap_or_default());
            let x = monitor.position().x + (area.width as i32 - size.width as i32) / 2;
            let y = monitor.position().y + area.height as i32 - size.height as i32 - 96;
            let _ = window.set_position(PhysicalPosition::new(x, y));
        }
        GENERATION.fetch_add(1, Ordering::SeqCst);
        let _ = window.show();
    } else if !wanted && visible {
        let _ = window.hide();
        destroy_later(app);
    }
}

/// Destroys the hidden overlay after [`LINGER`] unless it was shown meanwhile.
fn destroy_later(app: &AppHandle) {
    let hidden_at = GENERATION.fetch_add(1, Ordering::SeqCst) + 1;
    let handle = app.clone();
    // A timer on Tauri's async runtime, not a thread asleep per hide (a soak
    // of dictations every 2 s kept 45 such threads).
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(LINGER).await;
        let app = handle.clone();
        let _ = handle.run_on_main_thread(move || {
            if GENERATION.load(Ordering::SeqCst) != hidden_at {
                return;
            }
            if let Some(window) = app.get_webview_window(LABEL) {
                if let Err(e) = window.destroy() {
                    tracing::warn!("cannot destroy the overlay: {e}");
                }
            }
        });
    });
}
