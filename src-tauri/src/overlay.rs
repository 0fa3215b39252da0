//! The recording overlay: a small always-on-top window near the bottom of the
//! screen while recording or transcribing. It is created unfocusable and is
//! only ever shown, never focused, so the app being dictated into keeps focus.

use tauri::{AppHandle, Manager, PhysicalPosition};
use utter_core::app::{App, AppState, Status};

pub fn follow(app: &AppHandle, status: &Status) {
    let Some(window) = app.get_webview_window("overlay") else {
        return;
    };
    let wanted = matches!(status.state, AppState::Recording | AppState::Transcribing)
        && app.state::<App>().settings().show_overlay;
    let visible = window.is_visible().unwrap_or(false);
    if wanted && !visible {
        if let Ok(Some(monitor)) = window.primary_monitor() {
            let (area, size) = (monitor.size(), window.outer_size().unwrap_or_default());
            let x = monitor.position().x + (area.width as i32 - size.width as i32) / 2;
            let y = monitor.position().y + area.height as i32 - size.height as i32 - 96;
            let _ = window.set_position(PhysicalPosition::new(x, y));
        }
        let _ = window.show();
    } else if !wanted && visible {
        let _ = window.hide();
    }
}
