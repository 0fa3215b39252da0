//! The desktop app's settings: versioned JSON in the config dir, validated on
//! load and on save. A file that cannot be read as valid settings is moved
//! aside (never deleted) and replaced by defaults, with a notice for the UI.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utter_postprocess::{RuleError, TextRules, TextRulesConfig};

pub use crate::language::{BadLanguage, Language};
use crate::profiles::{Profile, ProfileSet};
use utter_engine::Compute;
use utter_ports::clipboard::{ClipboardText, NoClipboard};
use utter_ports::control::TriggerMode;
use utter_ports::hotkey::Hotkey;
use utter_ports::output::{OutputConfig, OutputMethod, PasteFallback, PasteKeys, Submit};

pub mod defaults;

/// The schema version this build writes. Older versions are migrated on load.
pub const SETTINGS_VERSION: u32 = 2;

/// The longest vocabulary kept. Each run reads only its first entries
/// (`engine::VOCABULARY_TOKEN_BUDGET`, about 15–20), as each one lengthens
/// every run (docs/benchmarks.md); the rest wait for a reorder.
pub const VOCABULARY_MAX: usize = 200;
const VOCABULARY_ENTRY_MAX_CHARS: usize = 100;
/// The most trigger words a user may add for a spoken submit.
pub const SUBMIT_WORDS_MAX: usize = 20;
/// The most a user may raise the audio limit to: a week.
pub const MAX_AUDIO_MINUTES_CEILING: u32 = 7 * 24 * 60;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(export)]
pub struct Settings {
    pub version: u32,
    pub hotkey: String,
    pub mode: TriggerMode,
    pub input_device: Option<String>,
    /// Opened at each press (the default; closed between dictations), or
    /// ready between dictations (the system's recording indicator stays on).
    pub microphone: MicMode,
    /// `auto` or a language code.
    #[ts(type = "string")]
    pub language: Language,
    pub model: Option<String>,
    /// Paste, type or clipboard (stdout is for the command line).
    pub output: OutputMethod,
    pub paste_keys: PasteKeys,
    pub restore_clipboard: bool,
    /// When the app never reads a paste: leave the text on the clipboard
    /// (say so), or type it.
    pub paste_fallback: PasteFallback,
    pub trailing_space: bool,
    /// The key pressed after each dictation's text, once it is in the app
    /// (per-app profiles may change it).
    pub submit: Submit,
    /// A dictation whose last sentence is only "send" (or another of the
    /// trigger words) is sent: the word is taken off and Enter (or the
    /// submit key) is pressed after the text.
    pub spoken_submit: bool,
    /// Trigger words besides the built-in ones ("send", "senden",
    /// "envoyer", "enviar", "invia"...).
    pub submit_words: Vec<String>,
    pub sounds: bool,
    pub autostart: bool,
    pub show_overlay: bool,
    /// Look for a new release at start (and offer it; never install unasked).
    pub check_updates: bool,
    pub vad_threshold: f32,
    pub silence_ms: u32,
    /// A dictation that is only "scratch that" (the last text taken back
    /// out) or "press enter" / "press tab" / "press escape" edits instead
    /// of typing the words.
    pub edit_commands: bool,
    /// Other programs' playback while a dictation records: lowered to this
    /// percentage of its volume (0 mutes it), and given back after; `null`:
    /// left alone.
    pub duck_other_audio: Option<u8>,
    /// Dictations are written in English whatever the language spoken
    /// (multilingual Whisper models; per-app profiles may change it).
    pub translate: bool,
    /// Hands-free stop: a dictation no key is held for (toggle mode, a
    /// latched or tapped push-to-talk) ends after this much silence
    /// following speech, and one with no speech in 10 s is cancelled;
    /// `null`: only a key ends it.
    pub stop_on_silence_ms: Option<u32>,
    pub keep_audio_days: u32,
    /// The longest audio one file may hold (files dropped on the app, its
    /// server's uploads): a file past it is refused while it is decoded.
    pub max_audio_minutes: u32,
    /// Unload the speech model after this many idle minutes (0 = keep it
    /// loaded); the next key press loads it again while the user speaks.
    pub engine_idle_unload_minutes: u32,
    /// Where the model runs: `auto`, `cpu` or a device name.
    #[ts(type = "string")]
    pub compute: Compute,
    pub theme: Theme,
    /// Words and names to spell as written here, most important first
    /// (passed to the engine with every run).
    pub vocabulary: Vec<String>,
    /// Replacements, spoken punctuation, clean-up (version 2).
    #[serde(flatten)]
    pub text_rules: TextRulesConfig,
    /// Per-app overrides, the first match for the focused app applies
    /// (the terminals' built-in profiles by default).
    pub profiles: Vec<Profile>,
    /// The AI rewrite after dictation: off unless the user turns it on
    /// (API keys are in the system keychain, never here).
    pub rewrite: utter_rewrite::RewriteConfig,
    /// Held to speak an instruction for the selected text (AI command
    /// mode, bound while the rewrite is on); `null` for none.
    pub command_key: Option<String>,
    /// Starts or stops a meeting from any app (the app only); `null` for none.
    pub meeting_key: Option<String>,
    /// The local speech server (the OpenAI audio API, as `utter serve`)
    /// runs with the app: off unless the user turns it on; loopback only.
    pub server_enabled: bool,
    pub server_port: u16,
    /// The server also speaks Wyoming (Home Assistant's voice protocol) on
    /// `wyoming_port`, loopback only too; only while the server runs.
    pub wyoming_enabled: bool,
    pub wyoming_port: u16,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            version: SETTINGS_VERSION,
            hotkey: defaults::HOTKEY.into(),
            mode: TriggerMode::PushToTalk,
            input_device: None,
            microphone: MicMode::OnPress,
            language: Language::Auto,
            model: None,
            output: OutputMethod::Paste,
            paste_keys: PasteKeys::Standard,
            restore_clipboard: true,
            paste_fallback: PasteFallback::default(),
            trailing_space: true,
            submit: Submit::None,
            spoken_submit: false,
            submit_words: Vec::new(),
            sounds: true,
            autostart: false,
            show_overlay: true,
            check_updates: true,
            vad_threshold: 0.5,
            silence_ms: defaults::SILENCE_MS,
            stop_on_silence_ms: None,
            translate: false,
            duck_other_audio: None,
            edit_commands: true,
            keep_audio_days: 30,
            max_audio_minutes: crate::audio::limits::DEFAULT_MAX_AUDIO_MINUTES,
            engine_idle_unload_minutes: 10,
            compute: Compute::Auto,
            theme: Theme::System,
            vocabulary: Vec::new(),
            text_rules: TextRulesConfig::default(),
            profiles: crate::profiles::builtin(),
            rewrite: utter_rewrite::RewriteConfig::default(),
            command_key: Some(defaults::COMMAND_KEY.into()),
            meeting_key: None,
            server_enabled: false,
            server_port: defaults::SERVER_PORT,
            wyoming_enabled: false,
            wyoming_port: defaults::WYOMING_PORT,
        }
    }
}

/// The app's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Theme {
    /// Follow the desktop's light or dark preference.
    System,
    Light,
    Dark,
}

/// Parses one setting's value as the settings file spells it.
pub fn parse_value<T: DeserializeOwned>(s: &str) -> Result<T, serde_json::Error> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
}

/// A command-line value in kebab-case (`push-to-talk`) read as the settings
/// file spells it (`push_to_talk`).
pub fn parse_cli_value<T: DeserializeOwned>(s: &str) -> Result<T, serde_json::Error> {
    parse_value(&s.replace('-', "_"))
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("invalid setting `{field}`: {why}")]
    Invalid { field: &'static str, why: String },
    #[error("cannot write settings to {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn invalid(field: &'static str, why: impl Into<String>) -> SettingsError {
    SettingsError::Invalid {
        field,
        why: why.into(),
    }
}

impl Settings {
    /// Checks every field; the first problem is returned with its field name.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.version != SETTINGS_VERSION {
            return Err(invalid(
                "version",
                format!("expected {SETTINGS_VERSION}, found {}", self.version),
            ));
        }
        Hotkey::parse(&self.hotkey).map_err(|e| invalid("hotkey", e.to_string()))?;
        if let Some(key) = &self.command_key {
            Hotkey::parse(key).map_err(|e| invalid("commandKey", e.to_string()))?;
            if Hotkey::parse(key).ok() == Hotkey::parse(&self.hotkey).ok() {
                return Err(invalid("commandKey", "is the dictation hotkey"));
            }
        }
        if let Some(key) = &self.meeting_key {
            let parsed = Hotkey::parse(key).map_err(|e| invalid("meetingKey", e.to_string()))?;
            if Some(parsed) == Hotkey::parse(&self.hotkey).ok() {
                return Err(invalid("meetingKey", "is the dictation hotkey"));
            }
            let command = self
                .command_key
                .as_deref()
                .and_then(|k| Hotkey::parse(k).ok());
            if self.rewrite.enabled && Some(parsed) == command {
                return Err(invalid("meetingKey", "is the AI command shortcut"));
            }
        }
        if let Language::Code(code) = &self.language {
            code.parse::<Language>()
                .map_err(|why| invalid("language", why.to_string()))?;
        }
        if self.output == OutputMethod::Stdout {
            return Err(invalid("output", "stdout is for the command line"));
        }
        if !(0.05..=0.95).contains(&self.vad_threshold) {
            return Err(invalid("vadThreshold", "must be between 0.05 and 0.95"));
        }
        if !(200..=3000).contains(&self.silence_ms) {
            return Err(invalid("silenceMs", "must be between 200 and 3000 ms"));
        }
        if self.submit_words.len() > SUBMIT_WORDS_MAX
            || self
                .submit_words
                .iter()
                .any(|w| w.trim().is_empty() || w.chars().count() > 40)
        {
            return Err(invalid(
                "submitWords",
                format!("at most {SUBMIT_WORDS_MAX} words or phrases of 1 to 40 characters"),
            ));
        }
        if self.duck_other_audio.is_some_and(|p| p > 100) {
            return Err(invalid(
                "duckOtherAudio",
                "must be 0 (mute) to 100 %, or null (off)",
            ));
        }
        if let Some(ms) = self.stop_on_silence_ms {
            let range = defaults::STOP_ON_SILENCE_RANGE_MS;
            if !range.contains(&u64::from(ms)) {
                return Err(invalid(
                    "stopOnSilenceMs",
                    format!(
                        "must be {} to {} ms, or null (off)",
                        range.start(),
                        range.end()
                    ),
                ));
            }
        }
        if self.keep_audio_days > 3650 {
            return Err(invalid("keepAudioDays", "must be 0 (forever) to 3650"));
        }
        if !(1..=MAX_AUDIO_MINUTES_CEILING).contains(&self.max_audio_minutes) {
            return Err(invalid(
                "maxAudioMinutes",
                format!("must be 1 to {MAX_AUDIO_MINUTES_CEILING}"),
            ));
        }
        if self.engine_idle_unload_minutes > 1440 {
            return Err(invalid(
                "engineIdleUnloadMinutes",
                "must be 0 (keep loaded) to 1440",
            ));
        }
        if self.server_port < 1024 {
            return Err(invalid(
                "serverPort",
                "must be 1024 to 65535 (lower ports need administrator rights)",
            ));
        }
        if self.wyoming_port < 1024 {
            return Err(invalid(
                "wyomingPort",
                "must be 1024 to 65535 (lower ports need administrator rights)",
            ));
        }
        if self.wyoming_enabled && self.wyoming_port == self.server_port {
            return Err(invalid(
                "wyomingPort",
                "must differ from the server's port (two protocols, two ports)",
            ));
        }
        if self.vocabulary.len() > VOCABULARY_MAX {
            return Err(invalid(
                "vocabulary",
                format!(
                    "{} entries; at most {VOCABULARY_MAX} (the model reads only the first 15–20)",
                    self.vocabulary.len()
                ),
            ));
        }
        if let Some(bad) = self.vocabulary.iter().find(|w| {
            w.trim().is_empty()
                || w.chars().count() > VOCABULARY_ENTRY_MAX_CHARS
                || w.contains('\n')
        }) {
            return Err(invalid(
                "vocabulary",
                format!("`{bad}`: each entry is one word or phrase of 1 to {VOCABULARY_ENTRY_MAX_CHARS} characters"),
            ));
        }
        self.text_rules(Arc::new(NoClipboard))?;
        self.profile_set()?;
        self.rewrite
            .validate()
            .map_err(|e| invalid("rewrite", e.to_string()))?;
        for profile in &self.profiles {
            if let Some(mode) = profile.rewrite.as_deref() {
                if mode != utter_rewrite::modes::OFF && self.rewrite.find_mode(mode).is_err() {
                    return Err(invalid(
                        "profiles",
                        format!(
                            "`{}`: there is no rewrite mode `{mode}` (use a mode's id or `off`)",
                            profile.name
                        ),
                    ));
                }
            }
        }
        if self.input_device.as_deref().is_some_and(str::is_empty) {
            return Err(invalid(
                "inputDevice",
                "empty name (use null for the default)",
            ));
        }
        Ok(())
    }

    /// The text rules, a snippet's `{clipboard}` read from `clipboard`.
    pub fn text_rules(
        &self,
        clipboard: Arc<dyn ClipboardText>,
    ) -> Result<TextRules, SettingsError> {
        let values = Arc::new(crate::placeholders::SystemValues { clipboard });
        TextRules::new(&self.text_rules)
            .map(|rules| {
                rules
                    .with_vocabulary(&self.vocabulary)
                    .with_placeholders(values)
            })
            .map_err(|e| {
                let field = match e {
                    RuleError::Snippet(_) => "snippets",
                    _ => "replacements",
                };
                invalid(field, e.to_string())
            })
    }

    pub fn profile_set(&self) -> Result<ProfileSet, SettingsError> {
        ProfileSet::new(&self.profiles).map_err(|e| invalid("profiles", e.to_string()))
    }

    /// How long the speech model may sit idle before it is unloaded.
    pub fn engine_idle_unload(&self) -> Option<std::time::Duration> {
        (self.engine_idle_unload_minutes > 0).then(|| {
            std::time::Duration::from_secs(60 * u64::from(self.engine_idle_unload_minutes))
        })
    }

    /// How the app runs the dictation engine: all cores, and unloaded
    /// after the idle time set here.
    pub fn engine_options(&self) -> utter_models::load::EngineOptions {
        utter_models::load::EngineOptions {
            compute: self.compute.clone(),
            threads: 0,
            idle_unload: self.engine_idle_unload(),
        }
    }

    /// The language to pass to the engine (`None` = detect).
    pub fn engine_language(&self) -> Option<String> {
        self.language.code().map(str::to_owned)
    }

    pub fn output_config(&self) -> OutputConfig {
        OutputConfig {
            method: self.output,
            paste_keys: self.paste_keys,
            restore_clipboard: self.restore_clipboard,
            paste_fallback: self.paste_fallback,
            trailing_space: self.trailing_space,
            submit: self.submit,
            ..OutputConfig::default()
        }
    }

    /// The words that send a dictation when said alone at its end; empty
    /// when the spoken submit is off.
    pub fn spoken_submit_words(&self) -> Vec<String> {
        if !self.spoken_submit {
            return Vec::new();
        }
        defaults::SPOKEN_SUBMIT_WORDS
            .iter()
            .map(|w| w.to_string())
            .chain(self.submit_words.iter().map(|w| w.trim().to_string()))
            .collect()
    }
}

/// Settings as loaded, with what the user should be told about the file.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub settings: Settings,
    pub notice: Option<String>,
}

/// Loads settings; a missing file gives defaults, an unreadable or invalid
/// one is backed up next to itself and replaced by defaults (with a notice).
pub fn load(path: &Path) -> Loaded {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Loaded {
                settings: Settings::default(),
                notice: None,
            }
        }
        Err(e) => return reset(path, &Unusable::Read(e)),
    };
    match parse(&bytes) {
        Ok(settings) => Loaded {
            settings,
            notice: None,
        },
        Err(why) => reset(path, &why),
    }
}

/// The settings file as it stands, leaving a bad one where it is (for
/// `utter doctor`, which must change nothing): defaults when there is none.
pub fn peek(path: &Path) -> Result<Settings, UnusableSettings> {
    let unusable = |why| UnusableSettings {
        path: path.to_path_buf(),
        why,
    };
    match std::fs::read(path) {
        Ok(bytes) => parse(&bytes).map_err(unusable),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(e) => Err(unusable(Unusable::Read(e))),
    }
}

/// A settings file that [`peek`] could not use, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct UnusableSettings {
    pub path: PathBuf,
    #[source]
    pub why: Unusable,
}

fn parse(bytes: &[u8]) -> Result<Settings, Unusable> {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .map_err(Unusable::Json)
        .and_then(migrate)
        .and_then(|value| {
            serde_path_to_error::deserialize::<_, Settings>(value).map_err(|e| Unusable::Field {
                path: e.path().to_string(),
                source: e.into_inner(),
            })
        })
        .and_then(|s| s.validate().map(|()| s).map_err(Unusable::Invalid))
}

/// Why a settings file could not be used; the notice reads "because {why}".
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    #[error("it could not be read ({0})")]
    Read(std::io::Error),
    #[error("it is not valid JSON ({0})")]
    Json(serde_json::Error),
    #[error("the top level is not an object")]
    NotAnObject,
    #[error("`version` is not a number")]
    BadVersion,
    #[error(
        "it was written by a newer Utter (settings version {0}, this one knows {SETTINGS_VERSION})"
    )]
    Newer(u64),
    #[error("invalid setting `{path}`: {source}")]
    Field {
        path: String,
        source: serde_json::Error,
    },
    #[error("{0}")]
    Invalid(SettingsError),
}

/// Brings an older file up to [`SETTINGS_VERSION`]. Version 0 is a file
/// without a `version` field (written before versioning): same fields as 1.
/// Version 2 added the vocabulary and text rules, which start empty and off.
fn migrate(mut value: serde_json::Value) -> Result<serde_json::Value, Unusable> {
    let obj = value.as_object_mut().ok_or(Unusable::NotAnObject)?;
    let version = match obj.get("version") {
        None => 0,
        Some(v) => v.as_u64().ok_or(Unusable::BadVersion)?,
    };
    if version > SETTINGS_VERSION as u64 {
        return Err(Unusable::Newer(version));
    }
    obj.insert("version".into(), SETTINGS_VERSION.into());
    Ok(value)
}

fn reset(path: &Path, why: &Unusable) -> Loaded {
    // Milliseconds since the epoch tell the kept copies apart.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let backup = path.with_extension(format!("invalid-{now_ms}.json"));
    let moved = std::fs::rename(path, &backup);
    tracing::warn!("settings file {} unusable: {why}", path.display());
    let notice = match moved {
        Ok(()) => format!(
            "Your settings file could not be used because {why}. It was kept as {} and the defaults were restored.",
            backup.display()
        ),
        Err(e) => format!(
            "Your settings file {} could not be used because {why}, and could not be moved aside ({e}). Defaults are in use.",
            path.display()
        ),
    };
    Loaded {
        settings: Settings::default(),
        notice: Some(notice),
    }
}

/// Validates, then writes atomically (temp file + rename) so a crash never
/// leaves half a file.
pub fn save(path: &Path, settings: &Settings) -> Result<(), SettingsError> {
    settings.validate()?;
    let write_err = |source| SettingsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write_err)?;
    }
    let tmp = path.with_extension("json.tmp");
    let json = serde_json::to_vec_pretty(settings).expect("settings serialise");
    std::fs::write(&tmp, json).map_err(write_err)?;
    std::fs::rename(&tmp, path).map_err(write_err)
}

/// When the microphone is open.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum MicMode {
    /// Open while dictation is on, so the press starts no device: the
    /// 300 ms before the press are kept as pre-roll. The system shows its
    /// recording indicator the whole time (macOS's orange dot, GNOME's
    /// microphone icon), and the sound server's client costs ~2 % of a core.
    /// For a device that is slow to start (a Bluetooth headset switching
    /// profile takes seconds), or a word said before the press.
    Ready,
    /// Opened at the press, closed after each dictation: the
    /// indicator shows only while dictating and nothing runs between
    /// dictations. Opening takes 1–16 ms on PulseAudio (more on Windows and
    /// macOS; seconds for a Bluetooth headset); the engine gets 300 ms of
    /// silence before the first sample, which is what keeps a word said at
    /// the press (10 / 10 in `tests/mic_edges.rs`; docs/benchmarks.md, "The
    /// first word"). The default.
    #[default]
    OnPress,
}

impl MicMode {
    /// Whether the microphone stays open between dictations.
    pub fn keeps_open(self) -> bool {
        self == Self::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_gives_defaults_without_notice() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load(&dir.path().join("settings.json"));
        assert_eq!(loaded.settings, Settings::default());
        assert!(loaded.notice.is_none());
    }

    #[test]
    fn the_meeting_shortcut_must_be_a_key_of_its_own() {
        let with = |key: &str| Settings {
            meeting_key: Some(key.into()),
            ..Settings::default()
        };
        assert!(with("ctrl+alt+m").validate().is_ok());
        let field = |s: Settings| match s.validate() {
            Err(SettingsError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(with("ctrl+shift+space")), "meetingKey");
        assert_eq!(field(with("ctrl+shift+nosuchkey")), "meetingKey");
        let command = Settings {
            rewrite: utter_rewrite::RewriteConfig {
                enabled: true,
                ..Default::default()
            },
            ..with("ctrl+shift+e")
        };
        assert_eq!(field(command), "meetingKey");
    }

    #[test]
    fn saved_settings_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/settings.json");
        let s = Settings {
            hotkey: "alt+f9".into(),
            mode: TriggerMode::Toggle,
            language: "de".parse().unwrap(),
            vocabulary: vec!["Kubernetes".into(), "Anna Åberg".into()],
            text_rules: TextRulesConfig {
                replacements: vec![utter_postprocess::Replacement {
                    heard: "get hub".into(),
                    written: "GitHub".into(),
                    regex: false,
                }],
                spoken_punctuation: true,
                clean_up: true,
                snippets: vec![utter_postprocess::Snippet {
                    trigger: "sign off".into(),
                    text: "Best,\nAnna".into(),
                    in_sentence: false,
                }],
            },
            ..Settings::default()
        };
        save(&path, &s).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        // The UI's field names: flat, camelCase.
        assert_eq!(json["spokenPunctuation"], true);
        // One spelling per value, the same the CLI's flags take.
        assert_eq!(json["mode"], "toggle");
        assert_eq!(json["language"], "de");
        assert_eq!(json["output"], "paste");
        assert_eq!(json["pasteKeys"], "ctrl+v");
        assert_eq!(json["theme"], "system");
        assert_eq!(json["replacements"][0]["written"], "GitHub");
        assert_eq!(json["snippets"][0]["text"], "Best,\nAnna");
        let loaded = load(&path);
        assert_eq!(loaded.settings, s);
        assert!(loaded.notice.is_none());
    }

    #[test]
    fn corrupt_file_is_backed_up_and_defaults_restored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, b"{\"hotkey\": \"ctrl+").unwrap();
        let loaded = load(&path);
        assert_eq!(loaded.settings, Settings::default());
        let notice = loaded.notice.expect("a notice");
        assert!(notice.contains("not valid JSON"), "{notice}");
        let backups: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("settings.invalid-"))
            .collect();
        assert_eq!(backups.len(), 1, "{backups:?}");
        let kept = std::fs::read(dir.path().join(&backups[0])).unwrap();
        assert_eq!(kept, b"{\"hotkey\": \"ctrl+");
        assert!(!path.exists());
    }

    #[test]
    fn invalid_values_are_rejected_with_the_field_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        for (field, json) in [
            ("hotkey", r#"{"version":1,"hotkey":"ctrl+nosuchkey"}"#),
            ("vadThreshold", r#"{"version":1,"vadThreshold":7}"#),
            ("mode", r#"{"version":1,"mode":"sometimes"}"#),
            ("output", r#"{"version":1,"output":"stdout"}"#),
            ("output", r#"{"version":1,"output":"fax"}"#),
            ("language", r#"{"version":1,"language":"English"}"#),
            ("theme", r#"{"version":1,"theme":"neon"}"#),
            ("pasteKeys", r#"{"version":1,"pasteKeys":"alt+v"}"#),
            ("wyomingPort", r#"{"version":2,"wyomingPort":80}"#),
            (
                "wyomingPort",
                r#"{"version":2,"wyomingEnabled":true,"wyomingPort":2022}"#,
            ),
            ("vocabulary", r#"{"version":2,"vocabulary":["ok", "  "]}"#),
            (
                "replacements",
                r#"{"version":2,"replacements":[{"heard":"(x","written":"y","regex":true}]}"#,
            ),
        ] {
            std::fs::write(&path, json).unwrap();
            let loaded = load(&path);
            let notice = loaded.notice.expect("a notice");
            assert!(notice.contains(field), "{field}: {notice}");
            assert_eq!(loaded.settings, Settings::default());
        }
        let bad = Settings {
            silence_ms: 10,
            ..Settings::default()
        };
        let err = save(&path, &bad).unwrap_err().to_string();
        assert!(err.contains("silenceMs"), "{err}");
    }

    #[test]
    fn unversioned_file_is_migrated_and_newer_versions_are_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"hotkey":"alt+f8","sounds":false}"#).unwrap();
        let loaded = load(&path);
        assert!(loaded.notice.is_none());
        assert_eq!(loaded.settings.hotkey, "alt+f8");
        assert!(!loaded.settings.sounds);
        assert_eq!(loaded.settings.version, SETTINGS_VERSION);

        // Version 1 had no vocabulary or text rules: they start empty and off.
        std::fs::write(&path, r#"{"version":1,"hotkey":"alt+f7"}"#).unwrap();
        let loaded = load(&path);
        assert!(loaded.notice.is_none(), "{:?}", loaded.notice);
        assert_eq!(loaded.settings.hotkey, "alt+f7");
        assert!(loaded.settings.vocabulary.is_empty());
        assert_eq!(loaded.settings.text_rules, TextRulesConfig::default());

        std::fs::write(&path, r#"{"version":99}"#).unwrap();
        let notice = load(&path).notice.expect("a notice");
        assert!(notice.contains("newer Utter"), "{notice}");
    }

    /// The trigger mode is utter-platform's type; how the CLI and the
    /// settings file spell it is this module's business.
    #[test]
    fn the_cli_reads_the_mode_in_kebab_case_and_the_settings_file_keeps_its_spelling() {
        assert_eq!(
            parse_cli_value::<TriggerMode>("push-to-talk").unwrap(),
            TriggerMode::PushToTalk
        );
        assert_eq!(
            parse_value::<TriggerMode>("push_to_talk").unwrap(),
            TriggerMode::PushToTalk
        );
        assert_eq!(
            serde_json::to_string(&TriggerMode::PushToTalk).unwrap(),
            "\"push_to_talk\""
        );
        assert!(parse_cli_value::<TriggerMode>("push").is_err());
    }
}
