//! Utter's hotkey grammar: `Ctrl+Shift+Space`, `Alt+F9`, `F8`. Modifiers
//! first, then exactly one key, joined by `+`, case-insensitive. The names
//! are the W3C `KeyboardEvent.code` names (`KeyA`, `Digit1`, `Space`,
//! `ArrowUp`) with the usual short forms (`A`, `1`, `Up`, `Esc`). The
//! settings check a hotkey with this alone (no desktop needed); the
//! platform turns a [`Hotkey`] into the OS grab, and its tests hold this
//! table to the hotkey library's.

use std::fmt;

/// Modifier keys held with the key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Modifiers {
    pub alt: bool,
    pub control: bool,
    pub shift: bool,
    /// Command on macOS, the Windows/Super key elsewhere.
    pub meta: bool,
}

/// A parsed hotkey: its modifiers and its key's W3C code name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hotkey {
    pub mods: Modifiers,
    /// One of [`KEYS`]' canonical names, e.g. `KeyA`, `Space`, `F9`.
    pub key: &'static str,
}

/// Why a hotkey string is not one. Worded for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot parse hotkey `{keys}`: {why} (use modifiers ctrl, shift, alt, super joined by `+` \
     with one key, e.g. ctrl+shift+space, alt+f9, super+d)"
)]
pub struct BadHotkey {
    pub keys: String,
    pub why: String,
}

impl Hotkey {
    pub fn parse(keys: &str) -> Result<Self, BadHotkey> {
        let bad = |why: String| BadHotkey {
            keys: keys.into(),
            why,
        };
        let tokens: Vec<&str> = keys.split('+').map(str::trim).collect();
        if let [only] = tokens[..] {
            return key_code(only)
                .map(|key| Hotkey {
                    mods: Modifiers::default(),
                    key,
                })
                .ok_or_else(|| bad(unknown(only)));
        }
        let mut mods = Modifiers::default();
        let mut key = None;
        for token in tokens {
            if token.is_empty() {
                return Err(bad("a `+` has nothing on one side".into()));
            }
            if key.is_some() {
                return Err(bad("it needs exactly one key, after the modifiers".into()));
            }
            match token.to_uppercase().as_str() {
                "OPTION" | "ALT" => mods.alt = true,
                "CONTROL" | "CTRL" => mods.control = true,
                "COMMAND" | "CMD" | "SUPER" | "META" => mods.meta = true,
                "SHIFT" => mods.shift = true,
                "COMMANDORCONTROL" | "COMMANDORCTRL" | "CMDORCTRL" | "CMDORCONTROL" => {
                    if cfg!(target_os = "macos") {
                        mods.meta = true
                    } else {
                        mods.control = true
                    }
                }
                _ => key = Some(key_code(token).ok_or_else(|| bad(unknown(token)))?),
            }
        }
        let key = key.ok_or_else(|| bad("it needs exactly one key, after the modifiers".into()))?;
        Ok(Hotkey { mods, key })
    }
}

impl fmt::Display for Hotkey {
    /// The canonical spelling: `Control+Shift+Space`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Modifiers {
            alt,
            control,
            shift,
            meta,
        } = self.mods;
        for (held, name) in [
            (control, "Control"),
            (alt, "Alt"),
            (shift, "Shift"),
            (meta, "Super"),
        ] {
            if held {
                write!(f, "{name}+")?;
            }
        }
        f.write_str(self.key)
    }
}

fn unknown(token: &str) -> String {
    format!("`{token}` is not a key name Utter knows")
}

/// The canonical name of a key name or short form, any case.
fn key_code(name: &str) -> Option<&'static str> {
    let upper = name.to_uppercase();
    KEYS.iter()
        .find(|(code, aliases)| code.to_uppercase() == upper || aliases.contains(&upper.as_str()))
        .map(|(code, _)| *code)
}

/// Every key a hotkey can name: its W3C code name and its short forms
/// (upper case; matched case-insensitively).
pub const KEYS: &[(&str, &[&str])] = &[
    ("Backquote", &["`"]),
    ("Backslash", &["\\"]),
    ("BracketLeft", &["["]),
    ("BracketRight", &["]"]),
    ("Pause", &["PAUSEBREAK"]),
    ("Comma", &[","]),
    ("Digit0", &["0"]),
    ("Digit1", &["1"]),
    ("Digit2", &["2"]),
    ("Digit3", &["3"]),
    ("Digit4", &["4"]),
    ("Digit5", &["5"]),
    ("Digit6", &["6"]),
    ("Digit7", &["7"]),
    ("Digit8", &["8"]),
    ("Digit9", &["9"]),
    ("Equal", &["="]),
    ("IntlBackslash", &[]),
    ("IntlRo", &[]),
    ("IntlYen", &[]),
    ("KeyA", &["A"]),
    ("KeyB", &["B"]),
    ("KeyC", &["C"]),
    ("KeyD", &["D"]),
    ("KeyE", &["E"]),
    ("KeyF", &["F"]),
    ("KeyG", &["G"]),
    ("KeyH", &["H"]),
    ("KeyI", &["I"]),
    ("KeyJ", &["J"]),
    ("KeyK", &["K"]),
    ("KeyL", &["L"]),
    ("KeyM", &["M"]),
    ("KeyN", &["N"]),
    ("KeyO", &["O"]),
    ("KeyP", &["P"]),
    ("KeyQ", &["Q"]),
    ("KeyR", &["R"]),
    ("KeyS", &["S"]),
    ("KeyT", &["T"]),
    ("KeyU", &["U"]),
    ("KeyV", &["V"]),
    ("KeyW", &["W"]),
    ("KeyX", &["X"]),
    ("KeyY", &["Y"]),
    ("KeyZ", &["Z"]),
    ("Minus", &["-"]),
    ("Period", &["."]),
    ("Quote", &["'"]),
    ("Semicolon", &[";"]),
    ("Slash", &["/"]),
    ("AltLeft", &[]),
    ("AltRight", &[]),
    ("Backspace", &[]),
    ("CapsLock", &[]),
    ("ContextMenu", &[]),
    ("ControlLeft", &[]),
    ("ControlRight", &[]),
    ("Enter", &[]),
    ("MetaLeft", &[]),
    ("MetaRight", &[]),
    ("ShiftLeft", &[]),
    ("ShiftRight", &[]),
    ("Space", &[]),
    ("Tab", &[]),
    ("Convert", &[]),
    ("KanaMode", &[]),
    ("Lang1", &[]),
    ("Lang2", &[]),
    ("Lang3", &[]),
    ("Lang4", &[]),
    ("Lang5", &[]),
    ("NonConvert", &[]),
    ("Delete", &[]),
    ("End", &[]),
    ("Help", &[]),
    ("Home", &[]),
    ("Insert", &[]),
    ("PageDown", &[]),
    ("PageUp", &[]),
    ("PrintScreen", &[]),
    ("ScrollLock", &[]),
    ("ArrowDown", &["DOWN"]),
    ("ArrowLeft", &["LEFT"]),
    ("ArrowRight", &["RIGHT"]),
    ("ArrowUp", &["UP"]),
    ("NumLock", &[]),
    ("Numpad0", &["NUM0"]),
    ("Numpad1", &["NUM1"]),
    ("Numpad2", &["NUM2"]),
    ("Numpad3", &["NUM3"]),
    ("Numpad4", &["NUM4"]),
    ("Numpad5", &["NUM5"]),
    ("Numpad6", &["NUM6"]),
    ("Numpad7", &["NUM7"]),
    ("Numpad8", &["NUM8"]),
    ("Numpad9", &["NUM9"]),
    ("NumpadAdd", &["NUMADD", "NUMPADPLUS", "NUMPLUS"]),
    ("NumpadBackspace", &[]),
    ("NumpadClear", &["NUMCLEAR"]),
    ("NumpadClearEntry", &[]),
    ("NumpadComma", &[]),
    ("NumpadDecimal", &["NUMDECIMAL"]),
    ("NumpadDivide", &["NUMDIVIDE"]),
    ("NumpadEnter", &["NUMENTER"]),
    ("NumpadEqual", &["NUMEQUAL"]),
    ("NumpadHash", &[]),
    ("NumpadMemoryAdd", &[]),
    ("NumpadMemoryClear", &[]),
    ("NumpadMemoryRecall", &[]),
    ("NumpadMemoryStore", &[]),
    ("NumpadMemorySubtract", &[]),
    ("NumpadMultiply", &["NUMMULTIPLY"]),
    ("NumpadParenLeft", &[]),
    ("NumpadParenRight", &[]),
    ("NumpadStar", &[]),
    ("NumpadSubtract", &["NUMSUBTRACT"]),
    ("Escape", &["ESC"]),
    ("Fn", &[]),
    ("FnLock", &[]),
    ("BrowserBack", &[]),
    ("BrowserFavorites", &[]),
    ("BrowserForward", &[]),
    ("BrowserHome", &[]),
    ("BrowserRefresh", &[]),
    ("BrowserSearch", &[]),
    ("BrowserStop", &[]),
    ("Eject", &[]),
    ("LaunchApp1", &["LAUNCHAPPLICATION1", "MYCOMPUTER"]),
    ("LaunchApp2", &["LAUNCHAPPLICATION2", "CALCULATOR"]),
    ("LaunchMail", &[]),
    ("MediaSelect", &["LAUNCHMEDIAPLAYER"]),
    ("Power", &[]),
    ("Sleep", &[]),
    ("WakeUp", &[]),
    ("Hyper", &[]),
    ("Super", &[]),
    ("Turbo", &[]),
    ("Abort", &[]),
    ("Resume", &[]),
    ("Suspend", &[]),
    ("Again", &[]),
    ("Copy", &[]),
    ("Cut", &[]),
    ("Find", &[]),
    ("Open", &[]),
    ("Paste", &[]),
    ("Props", &[]),
    ("Select", &[]),
    ("Undo", &[]),
    ("Hiragana", &[]),
    ("Katakana", &[]),
    ("Unidentified", &[]),
    ("F1", &[]),
    ("F2", &[]),
    ("F3", &[]),
    ("F4", &[]),
    ("F5", &[]),
    ("F6", &[]),
    ("F7", &[]),
    ("F8", &[]),
    ("F9", &[]),
    ("F10", &[]),
    ("F11", &[]),
    ("F12", &[]),
    ("AudioVolumeDown", &["VOLUMEDOWN"]),
    ("AudioVolumeUp", &["VOLUMEUP"]),
    ("AudioVolumeMute", &["VOLUMEMUTE"]),
    ("MediaPlay", &[]),
    ("MediaPause", &[]),
    ("MediaPlayPause", &[]),
    ("MediaStop", &[]),
    ("MediaTrackNext", &[]),
    ("MediaTrackPrevious", &["MEDIATRACKPREV"]),
    ("F13", &[]),
    ("F14", &[]),
    ("F15", &[]),
    ("F16", &[]),
    ("F17", &[]),
    ("F18", &[]),
    ("F19", &[]),
    ("F20", &[]),
    ("F21", &[]),
    ("F22", &[]),
    ("F23", &[]),
    ("F24", &[]),
    ("F25", &[]),
    ("F26", &[]),
    ("F27", &[]),
    ("F28", &[]),
    ("F29", &[]),
    ("F30", &[]),
    ("F31", &[]),
    ("F32", &[]),
    ("F33", &[]),
    ("F34", &[]),
    ("F35", &[]),
    ("BrightnessDown", &[]),
    ("BrightnessUp", &[]),
    ("DisplayToggleIntExt", &[]),
    ("KeyboardLayoutSelect", &[]),
    ("LaunchAssistant", &[]),
    ("LaunchControlPanel", &[]),
    ("LaunchScreenSaver", &[]),
    ("MailForward", &[]),
    ("MailReply", &[]),
    ("MailSend", &[]),
    ("MediaFastForward", &[]),
    ("MediaRecord", &[]),
    ("MediaRewind", &[]),
    ("MicrophoneMuteToggle", &[]),
    ("PrivacyScreenToggle", &[]),
    ("KeyboardBacklightToggle", &[]),
    ("SelectTask", &[]),
    ("ShowAllWindows", &[]),
    ("ZoomToggle", &[]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotkeys_parse_in_any_case_and_spelling() {
        let a = Hotkey::parse("ctrl+shift+space").unwrap();
        let b = Hotkey::parse("Shift + Control + Space").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "Control+Shift+Space");
        assert_eq!(Hotkey::parse("F8").unwrap().key, "F8");
        assert_eq!(Hotkey::parse("alt+a").unwrap().key, "KeyA");
        assert_eq!(
            Hotkey::parse("Super+up").unwrap().to_string(),
            "Super+ArrowUp"
        );
    }

    #[test]
    fn a_bad_hotkey_says_what_is_wrong() {
        let why = |keys: &str| Hotkey::parse(keys).unwrap_err().why;
        assert_eq!(
            why("Ctrl+Spacebar"),
            "`Spacebar` is not a key name Utter knows"
        );
        assert_eq!(why("Ctrl++"), "a `+` has nothing on one side");
        assert_eq!(
            why("Ctrl+A+B"),
            "it needs exactly one key, after the modifiers"
        );
        assert_eq!(
            why("Ctrl+Shift"),
            "it needs exactly one key, after the modifiers"
        );
        assert!(Hotkey::parse("").is_err());
    }
}
