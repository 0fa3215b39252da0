//! Where Utter keeps its files. Each place can be moved with an environment
//! variable (tests, portable setups); otherwise the platform's conventions
//! apply (the `dirs` crate: XDG on Linux, ~/Library on macOS, %APPDATA% on
//! Windows).

use std::path::PathBuf;

/// `$VAR` when set and not empty.
fn from_env(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// `base/utter`, or `./utter` on a system without that directory.
fn utter_under(base: Option<PathBuf>) -> PathBuf {
    base.unwrap_or_else(|| PathBuf::from(".")).join("utter")
}

/// `$UTTER_DATA_DIR`, else `~/.local/share/utter`: recordings and history.
pub fn data_dir() -> PathBuf {
    from_env("UTTER_DATA_DIR").unwrap_or_else(|| utter_under(dirs::data_dir()))
}

/// Each dictation's WAV and its outcome (see `dictation::record_log`).
pub fn recordings_dir() -> PathBuf {
    data_dir().join("recordings")
}

/// Each meeting's folder: both channels' WAVs and its record (see `meeting`).
pub fn meetings_dir() -> PathBuf {
    data_dir().join("meetings")
}

/// The history database.
pub fn history_file() -> PathBuf {
    data_dir().join("history.sqlite3")
}

/// `$UTTER_MODELS_DIR`, else `~/.local/share/utter/models`. Not under
/// `$UTTER_DATA_DIR`: a test or a second profile with its own data still
/// finds the models already installed.
pub fn models_dir() -> PathBuf {
    from_env("UTTER_MODELS_DIR").unwrap_or_else(|| utter_under(dirs::data_dir()).join("models"))
}

/// `$UTTER_CACHE_DIR`, else `~/.cache/utter`: downloaded packages that can
/// be fetched again.
pub fn cache_dir() -> PathBuf {
    from_env("UTTER_CACHE_DIR").unwrap_or_else(|| utter_under(dirs::cache_dir()))
}

/// `settings.json` in `$UTTER_CONFIG_DIR`, else in `~/.config/utter`.
pub fn settings_file() -> PathBuf {
    from_env("UTTER_CONFIG_DIR")
        .unwrap_or_else(|| utter_under(dirs::config_dir()))
        .join("settings.json")
}

/// The desktop app's identifier (src-tauri/tauri.conf.json): the name of its
/// own folders (log, web view data) that Tauri and the web view choose.
pub const APP_IDENTIFIER: &str = "app.utter.desktop";

/// The desktop app's product name: the autostart entry's name.
pub const APP_NAME: &str = "Utter";

/// What a place holds, for the choice of what an uninstall keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    Settings,
    /// History, recordings, meetings, the MCP token: the user's own.
    UserData,
    Models,
    /// Downloads that can be fetched again.
    Cache,
    /// The desktop app's log and its web view's storage and cache.
    AppFiles,
    /// The entry that starts the app at login.
    Autostart,
}

impl Holds {
    /// What `uninstall --keep-data` keeps.
    pub fn is_the_users(self) -> bool {
        matches!(self, Holds::UserData | Holds::Models)
    }
}

/// One place Utter keeps something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// For the user: "settings", "recordings, meetings, History"...
    pub what: &'static str,
    pub path: PathBuf,
    pub holds: Holds,
}

/// Every place Utter keeps something on this computer (whether or not it
/// exists yet), as this process's environment places it. The same list
/// `utter paths` prints and `utter uninstall` removes; README's "Where Utter
/// keeps what" says it in words.
pub fn places() -> Vec<Place> {
    let place = |what, path, holds| Place { what, path, holds };
    let settings_dir = settings_file()
        .parent()
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let mut list = vec![
        place("settings", settings_dir, Holds::Settings),
        place(
            "History, recordings, meetings, MCP token",
            data_dir(),
            Holds::UserData,
        ),
        place("models", models_dir(), Holds::Models),
        place("downloaded packages", cache_dir(), Holds::Cache),
    ];
    if let Some(local) = dirs::data_local_dir() {
        // The app's log (on Linux and Windows) and its web view's storage.
        list.push(place(
            "the app's log and web view data",
            local.join(APP_IDENTIFIER),
            Holds::AppFiles,
        ));
    }
    if let Some(cache) = dirs::cache_dir() {
        list.push(place(
            "the app's web view cache",
            cache.join(APP_IDENTIFIER),
            Holds::AppFiles,
        ));
    }
    #[cfg(target_os = "macos")]
    if let Some(home) = dirs::home_dir() {
        // Tauri's app_log_dir on macOS; WKWebView's own data folder.
        list.push(place(
            "the app's log",
            home.join("Library/Logs").join(APP_IDENTIFIER),
            Holds::AppFiles,
        ));
        list.push(place(
            "the app's web view data",
            home.join("Library/WebKit").join(APP_IDENTIFIER),
            Holds::AppFiles,
        ));
        // tauri-plugin-autostart's LaunchAgent (auto-launch: ~/Library/LaunchAgents/NAME.plist).
        list.push(place(
            "start at login",
            home.join("Library/LaunchAgents")
                .join(format!("{APP_NAME}.plist")),
            Holds::Autostart,
        ));
    }
    // tauri-plugin-autostart on Linux: auto-launch's XDG entry, NAME.desktop.
    #[cfg(all(unix, not(target_os = "macos")))]
    if let Some(config) = dirs::config_dir() {
        list.push(place(
            "start at login",
            config.join("autostart").join(format!("{APP_NAME}.desktop")),
            Holds::Autostart,
        ));
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identifier_and_name_are_the_apps() {
        let conf = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../src-tauri/tauri.conf.json"),
        )
        .unwrap();
        let conf: serde_json::Value = serde_json::from_str(&conf).unwrap();
        assert_eq!(conf["identifier"], APP_IDENTIFIER);
        assert_eq!(conf["productName"], APP_NAME);
    }

    #[test]
    fn every_place_is_named_and_absolute() {
        for place in places() {
            assert!(!place.what.is_empty());
            assert!(place.path.is_absolute(), "{place:?}");
        }
    }
}
