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
