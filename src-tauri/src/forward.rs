//! Core events → UI events (names and payloads of docs/ipc.md), plus the
//! tray and overlay, which follow the status.

use serde_json::json;
use tauri::{AppHandle, Emitter};
use utter_app_core::{AppEvent, Level};

use crate::{overlay, tray};

pub fn event(app: &AppHandle, event: AppEvent) {
    let sent = match event {
        AppEvent::Status(status) => {
            tray::update(app, &status);
            overlay::follow(app, &status);
            app.emit("status", status)
        }
        AppEvent::Level(rms) => app.emit("level", Level { rms }),
        AppEvent::Dictation(e) => app.emit("dictation", e),
        AppEvent::FileJob(job) => app.emit("file-job", job),
        AppEvent::Install(p) => app.emit("install-progress", p),
        AppEvent::HistoryChanged => app.emit("history-changed", json!({})),
        AppEvent::SettingsChanged(s) => app.emit("settings-changed", s),
        AppEvent::Download(update) => app.emit("model-download", update),
        AppEvent::Meeting(status) => app.emit("meeting", status),
        AppEvent::MeetingLine(turn) => app.emit("meeting-line", turn),
        AppEvent::MeetingLevels(levels) => app.emit("meeting-levels", levels),
    };
    if let Err(e) = sent {
        tracing::warn!("cannot send an event to the UI: {e}");
    }
}
