//! The tray icon: its picture shows idle / recording / transcribing; its menu
//! starts and stops dictation, opens the window, copies the last transcript
//! and quits.

use std::sync::atomic::{AtomicBool, Ordering};

use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Wry};
use utter_app_core::{App, AppState, Status};
use utter_ports::control::Control;

const TRAY_ID: &str = "utter";
static AVAILABLE: AtomicBool = AtomicBool::new(false);

/// The menu items whose text changes with the state.
struct Items {
    toggle: MenuItem<Wry>,
    recent: MenuItem<Wry>,
}

fn icon(state: AppState) -> Image<'static> {
    let bytes: &'static [u8] = match state {
        AppState::Recording => include_bytes!("../../icons/tray/recording.png"),
        AppState::Transcribing => include_bytes!("../../icons/tray/transcribing.png"),
        _ => include_bytes!("../../icons/tray/idle.png"),
    };
    Image::from_bytes(bytes).expect("tray icons are valid PNGs")
}

/// Whether a tray icon exists (closing the window then hides it instead of quitting).
pub fn available(_app: &AppHandle) -> bool {
    AVAILABLE.load(Ordering::SeqCst)
}

pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let toggle = MenuItem::with_id(app, "toggle", "Start dictation", true, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open Utter", true, None::<&str>)?;
    let recent = MenuItem::with_id(app, "recent", "No recent transcript", false, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Utter", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &toggle,
            &open,
            &PredefinedMenuItem::separator(app)?,
            &recent,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    app.manage(Items { toggle, recent });
    let built = TrayIconBuilder::with_id(TRAY_ID)
        .icon(icon(AppState::Idle))
        .tooltip("Utter")
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "toggle" => {
                let core = app.state::<App>();
                let control = if core.status().state == AppState::Recording {
                    Control::Stop
                } else {
                    Control::Start
                };
                if let Err(e) = core.control(control) {
                    tracing::warn!("tray: {e}");
                }
            }
            "open" => crate::main_window::open(app),
            "recent" => {
                let core = app.state::<App>();
                if let Some(text) = core.status().last_text {
                    let _ = core.copy_text(&text);
                }
            }
            "quit" => app.exit(0),
            _ => {}
        })
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                crate::main_window::open(tray.app_handle());
            }
        })
        .build(app);
    match built {
        Ok(_) => AVAILABLE.store(true, Ordering::SeqCst),
        // No status notifier host (some desktops): the window stays the way in.
        Err(e) => tracing::warn!("no tray icon: {e}"),
    }
    Ok(())
}

pub fn update(app: &AppHandle, status: &Status) {
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_icon(Some(icon(status.state)));
        let tip = match status.state {
            AppState::Recording => "Utter: recording".to_string(),
            AppState::Transcribing => "Utter: transcribing".to_string(),
            AppState::NoModel => "Utter: no speech model installed".to_string(),
            AppState::Error => format!("Utter: {}", status.error.as_deref().unwrap_or("error")),
            _ => format!("Utter: hold {} to dictate", status.hotkey),
        };
        let _ = tray.set_tooltip(Some(tip));
    }
    if let Some(items) = app.try_state::<Items>() {
        let recording = status.state == AppState::Recording;
        let _ = items.toggle.set_text(if recording {
            "Stop dictation"
        } else {
            "Start dictation"
        });
        if let Some(text) = &status.last_text {
            let short: String = text.chars().take(40).collect();
            let ellipsis = if text.chars().count() > 40 { "…" } else { "" };
            let _ = items.recent.set_text(format!("Copy “{short}{ellipsis}”"));
            let _ = items.recent.set_enabled(true);
        }
    }
}
