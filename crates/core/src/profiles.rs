//! Per-app profiles: rules that match the focused app (`platform::focus`)
//! and override some dictation settings for it — how the text is delivered
//! (a terminal pastes with Ctrl+Shift+V, xterm with Shift+Insert), the
//! language, extra vocabulary, spoken punctuation, clean-up, snippets, the
//! final period. The first profile whose patterns match any of the app's names
//! applies; none matching, the settings apply as they are.
//!
//! The terminals' profiles are built in as the settings' default list, so a
//! user can edit or delete them like their own.

use std::path::Path;

use serde::{Deserialize, Serialize};
use utter_postprocess::TextRules;

use crate::language::Language;
use utter_ports::focus::FocusedApp;
use utter_ports::output::{OutputMethod, PasteKeys, Submit};

/// The most profiles and patterns kept (a settings file is edited by hand too).
pub const PROFILES_MAX: usize = 100;

/// One app's (or family of apps') overrides. Unset fields keep the settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(export)]
pub struct Profile {
    pub name: String,
    /// Glob patterns (`*`, `?`, `[abc]`; case-insensitive) matched against
    /// each name of the focused app: Wayland app id, X11 class and instance,
    /// executable file name, macOS bundle id.
    pub apps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub output: Option<OutputMethod>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub paste_keys: Option<PasteKeys>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trailing_space: Option<bool>,
    /// The key pressed after the text in this app (`none` for nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub submit: Option<Submit>,
    /// `false`: a sentence's final period is left off (chat apps).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub final_period: Option<bool>,
    /// `auto` or a language code.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string")]
    pub language: Option<Language>,
    /// `true`: dictations into this app are written in English (Whisper's
    /// translation); `false`: in the language spoken.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub translate: Option<bool>,
    /// Words for this app, read before the settings' vocabulary (absent
    /// from the file when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub vocabulary: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub spoken_punctuation: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub clean_up: Option<bool>,
    /// `false`: snippets are not inserted in this app (their triggers stay
    /// words).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub snippets: Option<bool>,
    /// The AI rewrite in this app, when rewriting is on: a mode's id, or
    /// `off` for none (a terminal wants the words as said).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rewrite: Option<String>,
}

impl Profile {
    fn terminals(name: &str, keys: PasteKeys, apps: &[&str]) -> Self {
        Self {
            name: name.into(),
            apps: apps.iter().map(|a| a.to_string()).collect(),
            paste_keys: Some(keys),
            ..Self::default()
        }
    }
}

/// The built-in profiles: terminals, which do not paste with Ctrl+V (it is
/// a control character there). Shift+Insert where the terminal reads it
/// (xterm and rxvt read the PRIMARY selection with it; the paste serves
/// both selections), Ctrl+Shift+V in the others.
pub fn builtin() -> Vec<Profile> {
    vec![
        Profile::terminals(
            "X terminals (Shift+Insert)",
            PasteKeys::ShiftInsert,
            &["xterm", "uxterm", "*rxvt*", "st", "st-256color", "mintty"],
        ),
        Profile::terminals(
            "Terminals (Ctrl+Shift+V)",
            PasteKeys::CtrlShiftV,
            &[
                "gnome-terminal*",
                "org.gnome.Terminal",
                "org.gnome.Console",
                "kgx",
                "org.gnome.Ptyxis",
                "ptyxis",
                "konsole",
                "org.kde.konsole",
                "lxterminal",
                "qterminal",
                "xfce4-terminal",
                "mate-terminal",
                "tilix",
                "com.gexperts.Tilix",
                "terminator",
                "alacritty",
                "kitty",
                "foot",
                "footclient",
                "wezterm*",
                "org.wezfurlong.wezterm",
                "ghostty",
                "com.mitchellh.ghostty",
                "terminology",
                "tabby",
                "hyper",
            ],
        ),
    ]
}

/// A profile that cannot be used, named for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("profile `{profile}`: `{pattern}` is not a valid pattern: {why}")]
    Pattern {
        profile: String,
        pattern: String,
        why: String,
    },
    #[error("profile `{0}` matches no app (add an app name or pattern)")]
    NoApps(String),
    #[error("profile `{profile}`: {why}")]
    Invalid { profile: String, why: String },
    #[error("{0} profiles; at most {PROFILES_MAX}")]
    TooMany(usize),
    #[error("cannot read the profile file {path}: {why}")]
    File { path: String, why: String },
}

/// The profiles, checked and their patterns compiled.
#[derive(Debug, Clone, Default)]
pub struct ProfileSet {
    profiles: Vec<(Profile, Vec<glob::Pattern>)>,
}

const CASE_INSENSITIVE: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: false,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

impl ProfileSet {
    pub fn new(profiles: &[Profile]) -> Result<Self, ProfileError> {
        if profiles.len() > PROFILES_MAX {
            return Err(ProfileError::TooMany(profiles.len()));
        }
        let compiled = profiles
            .iter()
            .map(|p| Ok((p.clone(), compile(p)?)))
            .collect::<Result<_, ProfileError>>()?;
        Ok(Self { profiles: compiled })
    }

    /// Reads a JSON list of profiles (`utter dictate --profile-file`).
    pub fn load(path: &Path) -> Result<Vec<Profile>, ProfileError> {
        let file_error = |why: String| ProfileError::File {
            path: path.display().to_string(),
            why,
        };
        let bytes = std::fs::read(path).map_err(|e| file_error(e.to_string()))?;
        let profiles: Vec<Profile> =
            serde_json::from_slice(&bytes).map_err(|e| file_error(e.to_string()))?;
        Self::new(&profiles)?;
        Ok(profiles)
    }

    /// The first profile matching any name of `app`.
    pub fn for_app(&self, app: &FocusedApp) -> Option<&Profile> {
        self.profiles
            .iter()
            .find(|(_, patterns)| {
                app.names().any(|name| {
                    patterns
                        .iter()
                        .any(|p| p.matches_with(name, CASE_INSENSITIVE))
                })
            })
            .map(|(profile, _)| profile)
    }

    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }
}

fn compile(profile: &Profile) -> Result<Vec<glob::Pattern>, ProfileError> {
    let invalid = |why: String| ProfileError::Invalid {
        profile: profile.name.clone(),
        why,
    };
    if profile.apps.iter().all(|a| a.trim().is_empty()) {
        return Err(ProfileError::NoApps(profile.name.clone()));
    }
    if profile.output == Some(OutputMethod::Stdout) {
        return Err(invalid("stdout is not an output for an app".into()));
    }
    if let Some(Language::Code(code)) = &profile.language {
        code.parse::<Language>()
            .map_err(|e| invalid(e.to_string()))?;
    }
    if profile.vocabulary.iter().any(|w| w.trim().is_empty()) {
        return Err(invalid("an empty vocabulary entry".into()));
    }
    profile
        .apps
        .iter()
        .filter(|a| !a.trim().is_empty())
        .map(|pattern| {
            glob::Pattern::new(pattern.trim()).map_err(|e| ProfileError::Pattern {
                profile: profile.name.clone(),
                pattern: pattern.clone(),
                why: e.msg.to_string(),
            })
        })
        .collect()
}

impl Profile {
    /// The settings' text rules with this profile's changes; `vocabulary` is
    /// the settings' own list, which this profile's words come before.
    pub fn text_rules(&self, base: &TextRules, vocabulary: &[String]) -> TextRules {
        let mut rules = base.clone();
        if let Some(on) = self.spoken_punctuation {
            rules = rules.with_spoken_punctuation(on);
        }
        if let Some(on) = self.clean_up {
            rules = rules.with_clean_up(on);
        }
        if let Some(on) = self.snippets {
            rules = rules.with_snippets(on);
        }
        if !self.vocabulary.is_empty() {
            rules = rules.with_vocabulary(&self.vocabulary_before(vocabulary));
        }
        if let Some(language) = &self.language {
            rules = rules.for_language(language.code());
        }
        rules
    }

    /// This profile's words, then the settings' (without repeats).
    pub fn vocabulary_before(&self, vocabulary: &[String]) -> Vec<String> {
        let mut words = self.vocabulary.clone();
        words.extend(
            vocabulary
                .iter()
                .filter(|w| !self.vocabulary.contains(w))
                .cloned(),
        );
        words
    }

    /// The text as this profile wants it delivered (the final period).
    pub fn finish_text(&self, text: String) -> String {
        match self.final_period {
            Some(false) => drop_final_period(text),
            _ => text,
        }
    }
}

/// "Hello there." → "Hello there"; an ellipsis or other marks stay.
fn drop_final_period(mut text: String) -> String {
    if text.ends_with('.') && !text.ends_with("..") {
        text.pop();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(id: &str, aliases: &[&str]) -> FocusedApp {
        FocusedApp::new(id, aliases.iter().map(|a| a.to_string()))
    }

    #[test]
    fn terminals_match_by_any_name_case_insensitively_and_others_do_not() {
        let set = ProfileSet::new(&builtin()).unwrap();
        let keys = |a: &FocusedApp| set.for_app(a).and_then(|p| p.paste_keys);
        assert_eq!(
            keys(&app("XTerm", &["xterm"])),
            Some(PasteKeys::ShiftInsert)
        );
        assert_eq!(
            keys(&app("URxvt", &["urxvt"])),
            Some(PasteKeys::ShiftInsert)
        );
        assert_eq!(
            keys(&app("Lxterminal", &["lxterminal"])),
            Some(PasteKeys::CtrlShiftV)
        );
        assert_eq!(keys(&app("foot", &[])), Some(PasteKeys::CtrlShiftV));
        assert_eq!(
            keys(&app("Gnome-terminal-server", &[])),
            Some(PasteKeys::CtrlShiftV)
        );
        assert_eq!(keys(&app("Zenity", &["zenity"])), None);
        assert_eq!(keys(&app("firefox", &["Navigator"])), None);
    }

    #[test]
    fn the_first_matching_profile_wins() {
        let mine = Profile {
            name: "my xterm".into(),
            apps: vec!["xterm".into()],
            paste_keys: Some(PasteKeys::CtrlShiftV),
            ..Profile::default()
        };
        let mut profiles = vec![mine];
        profiles.extend(builtin());
        let set = ProfileSet::new(&profiles).unwrap();
        assert_eq!(
            set.for_app(&app("XTerm", &["xterm"])).unwrap().name,
            "my xterm"
        );
    }

    #[test]
    fn a_bad_pattern_or_a_profile_for_no_app_is_named() {
        let bad = Profile {
            name: "broken".into(),
            apps: vec!["[xterm".into()],
            ..Profile::default()
        };
        let err = ProfileSet::new(&[bad]).unwrap_err().to_string();
        assert!(
            err.starts_with("profile `broken`: `[xterm` is not a valid pattern"),
            "{err}"
        );
        let none = Profile {
            name: "empty".into(),
            ..Profile::default()
        };
        let err = ProfileSet::new(&[none]).unwrap_err().to_string();
        assert_eq!(
            err,
            "profile `empty` matches no app (add an app name or pattern)"
        );
    }

    #[test]
    fn unset_fields_are_left_out_of_the_file_and_read_back_the_same() {
        let profile = Profile {
            name: "Chat".into(),
            apps: vec!["Slack".into()],
            final_period: Some(false),
            language: Some(Language::Code("de".into())),
            ..Profile::default()
        };
        let json = serde_json::to_value(&profile).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "Chat", "apps": ["Slack"], "finalPeriod": false, "language": "de"})
        );
        assert_eq!(serde_json::from_value::<Profile>(json).unwrap(), profile);
    }

    #[test]
    fn a_chat_profile_drops_only_a_single_final_period() {
        let chat = Profile {
            final_period: Some(false),
            ..Profile::default()
        };
        assert_eq!(chat.finish_text("See you soon.".into()), "See you soon");
        assert_eq!(chat.finish_text("Well...".into()), "Well...");
        assert_eq!(chat.finish_text("Really?".into()), "Really?");
        assert_eq!(Profile::default().finish_text("Hi.".into()), "Hi.");
    }

    #[test]
    fn profile_words_come_first_and_rules_follow_the_profile() {
        let profile = Profile {
            vocabulary: vec!["Kubernetes".into(), "Ana".into()],
            spoken_punctuation: Some(false),
            ..Profile::default()
        };
        assert_eq!(
            profile.vocabulary_before(&["Ana".into(), "Bob".into()]),
            ["Kubernetes", "Ana", "Bob"]
        );
        let base = TextRules::new(&utter_postprocess::TextRulesConfig {
            spoken_punctuation: true,
            ..Default::default()
        })
        .unwrap();
        let text = |rules: &TextRules| rules.dictation("hello comma world", false).text;
        assert_eq!(text(&base), "hello, world");
        assert_eq!(text(&profile.text_rules(&base, &[])), "hello comma world");
    }

    #[test]
    fn a_profile_turns_snippets_off_for_its_app() {
        let base = TextRules::new(&utter_postprocess::TextRulesConfig {
            snippets: vec![utter_postprocess::Snippet {
                trigger: "sign off".into(),
                text: "Best regards,\nAnna".into(),
                in_sentence: false,
            }],
            ..Default::default()
        })
        .unwrap();
        let off = Profile {
            name: "Chat".into(),
            apps: vec!["slack".into()],
            snippets: Some(false),
            ..Profile::default()
        };
        let text = |rules: &TextRules| rules.dictation("Sign off.", false).text;
        assert_eq!(text(&base), "Best regards,\nAnna");
        assert_eq!(text(&off.text_rules(&base, &[])), "Sign off.");
        let unset = Profile {
            snippets: None,
            ..off
        };
        assert_eq!(text(&unset.text_rules(&base, &[])), "Best regards,\nAnna");
    }
}
