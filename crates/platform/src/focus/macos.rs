//! macOS: `NSWorkspace.frontmostApplication`, the app that receives key
//! events. AppKit keeps that value current through notifications delivered
//! on the main run loop, so it is read there (through [`MainThread`]) when
//! the process has one; a process without a main loop reads it in place.

use objc2_app_kit::NSWorkspace;

use super::{FocusError, FocusedApp};
use crate::MainThread;

pub fn focused(main_thread: Option<&MainThread>) -> Result<FocusedApp, FocusError> {
    match main_thread {
        Some(main) => main.call(frontmost).map_err(FocusError::query)?,
        None => frontmost(),
    }
}

#[allow(unused_unsafe)] // some of these calls are safe in newer objc2-app-kit
fn frontmost() -> Result<FocusedApp, FocusError> {
    let workspace = unsafe { NSWorkspace::sharedWorkspace() };
    let app = unsafe { workspace.frontmostApplication() }.ok_or(FocusError::NoFocus)?;
    let bundle = unsafe { app.bundleIdentifier() }.map(|s| s.to_string());
    let name = unsafe { app.localizedName() }.map(|s| s.to_string());
    let exe = unsafe { app.executableURL() }
        .and_then(|url| unsafe { url.lastPathComponent() })
        .map(|s| s.to_string());
    let id = bundle
        .clone()
        .or_else(|| exe.clone())
        .ok_or(FocusError::NoFocus)?;
    Ok(FocusedApp::new(id, name.into_iter().chain(exe)))
}
