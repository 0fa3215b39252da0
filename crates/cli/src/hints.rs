//! What a command-line user can do about an error. The core's messages say
//! what is wrong and name no front end's flags or commands; the CLI adds its
//! own next step here (the app adds buttons and pages instead).

use std::borrow::Cow;
use std::error::Error;

use utter_models::load::LoadError;
use utter_models::{self as models, ModelError};
use utter_platform::hotkeys::{HotkeyError, NoHotkeys};
use utter_server::ServeError;

/// What to run when no model is installed.
pub const INSTALL_MODEL: &str =
    "run `utter models install-default` to install the default model, or `utter models import PATH`";

/// How to dictate where the desktop gives no global hotkeys.
pub const PTT_INSTEAD: &str =
    "bind `utter ptt press` / `utter ptt release` (or `utter ptt toggle`) \
     to a key in your compositor's settings (see docs/wayland.md), or run them yourself";

/// The hint for `error` or any error it wraps, if the CLI has one.
pub fn for_error(error: &(dyn Error + 'static)) -> Option<Cow<'static, str>> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(hint) = hint_for(e) {
            return Some(hint);
        }
        next = e.source();
    }
    None
}

fn hint_for(e: &(dyn Error + 'static)) -> Option<Cow<'static, str>> {
    if let Some(e) = e.downcast_ref::<LoadError>() {
        return e.is_missing_model().then_some(INSTALL_MODEL.into());
    }
    if let Some(e) = e.downcast_ref::<ModelError>() {
        return match e {
            ModelError::NoneInstalled { .. } => Some(INSTALL_MODEL.into()),
            // The command that gets this very model, not the defaults.
            ModelError::NotInstalled { requested, .. } => {
                Some(models::names::how_to_get(requested).into())
            }
            _ => None,
        };
    }
    if let Some(e) = e.downcast_ref::<ServeError>() {
        return matches!(e, ServeError::KeyRequired(_) | ServeError::EmptyKey).then_some(
            "pass --api-key-file FILE or set UTTER_API_KEY, or keep the default --host 127.0.0.1"
                .into(),
        );
    }
    match e.downcast_ref::<HotkeyError>() {
        Some(HotkeyError::Taken { .. }) => Some("choose another with --hotkey".into()),
        Some(HotkeyError::Parse(_)) => Some("--hotkey, --latch-key, --cancel-key".into()),
        _ => e
            .downcast_ref::<NoHotkeys>()
            .map(|_| Cow::Borrowed(PTT_INSTEAD)),
    }
}

/// Prints `error` (with what it wraps) and the CLI's hint for it.
pub fn print_error(error: &(dyn Error + 'static)) {
    eprintln!("error: {error}");
    if let Some(hint) = for_error(error) {
        eprintln!("hint: {hint}");
    }
}
