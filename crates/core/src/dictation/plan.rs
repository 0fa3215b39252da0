//! What one dictation follows, decided once at the press: the settings with
//! the focused app's profile laid over them (language, words, text rules,
//! delivery, AI rewrite). A plain function of data — the service asks the
//! desktop which app is focused and does the I/O; this only decides.

use utter_postprocess::TextRules;

use crate::profiles::Profile;
use utter_engine::ModelInfo;
use utter_ports::output::{Delivery, OutputConfig};

use super::recording::DictationConfig;

/// The settings a plan starts from.
pub struct PlanDefaults<'a> {
    pub dictation: &'a DictationConfig,
    pub text_rules: &'a TextRules,
    pub output: &'a OutputConfig,
    /// The AI rewrite's mode in the settings; `None` when the rewrite is off.
    pub rewrite_mode: Option<&'a str>,
}

/// One dictation's settings, with its app's profile applied.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The profile that matched the focused app, if any.
    pub profile: Option<Profile>,
    /// Language, words and tuning for the engine.
    pub dictation: DictationConfig,
    pub rules: TextRules,
    pub delivery: Delivery,
    /// The rewrite mode to run; `None` when off (in the settings or for this app).
    pub rewrite: Option<String>,
    /// What the user should be told about the plan (a profile's language the
    /// model cannot transcribe, which is then left as the settings have it).
    pub warnings: Vec<String>,
}

impl Plan {
    /// The language the dictation is transcribed in (`None`: detected).
    pub fn language(&self) -> Option<&str> {
        self.dictation.language.as_deref()
    }

    pub fn profile_name(&self) -> Option<&str> {
        self.profile.as_ref().map(|p| p.name.as_str())
    }

    /// The profile's last word on a text (no final period in a chat app),
    /// for the engine's text and the model's alike.
    pub fn finish_text(&self, text: String) -> String {
        match &self.profile {
            Some(p) => p.finish_text(text),
            None => text,
        }
    }
}

/// The plan for a dictation into the app whose profile is `profile`.
pub fn plan(defaults: &PlanDefaults, profile: Option<&Profile>, model: &ModelInfo) -> Plan {
    let mut dictation = defaults.dictation.clone();
    let mut warnings = Vec::new();
    dictation.translate = profile
        .and_then(|p| p.translate)
        .unwrap_or(dictation.translate);
    if dictation.translate && !model.translates {
        dictation.translate = false;
        warnings.push(format!(
            "this model ({}) cannot translate, so this dictation is written in the language \
             spoken (a multilingual Whisper model, e.g. whisper-base, translates into English)",
            model.arch
        ));
    }
    let Some(p) = profile else {
        return Plan {
            profile: None,
            dictation,
            rules: defaults.text_rules.clone(),
            delivery: delivery(defaults.output, None),
            rewrite: rewrite_mode(defaults.rewrite_mode, None),
            warnings,
        };
    };
    if let Some(language) = &p.language {
        match model.check_language(language.code()) {
            Ok(()) => dictation.language = language.code().map(str::to_owned),
            Err(e) => warnings.push(format!("profile `{}`: {e}", p.name)),
        }
    }
    if !p.vocabulary.is_empty() {
        dictation.vocabulary = p.vocabulary_before(&defaults.dictation.vocabulary);
    }
    let rewrite = rewrite_mode(defaults.rewrite_mode, p.rewrite.as_deref());
    Plan {
        rules: p.text_rules(defaults.text_rules, &defaults.dictation.vocabulary),
        profile: Some(p.clone()),
        dictation,
        delivery: delivery(defaults.output, Some(p)),
        rewrite,
        warnings,
    }
}

/// How text goes out: the output settings with `profile`'s overrides (also
/// for pasting the last text again, into whichever app is focused then).
pub fn delivery(output: &OutputConfig, profile: Option<&Profile>) -> Delivery {
    let mut how = output.delivery();
    if let Some(p) = profile {
        how.method = p.output.unwrap_or(how.method);
        how.paste_keys = p.paste_keys.unwrap_or(how.paste_keys);
        how.trailing_space = p.trailing_space.unwrap_or(how.trailing_space);
        how.submit = p.submit.unwrap_or(how.submit);
    }
    how
}

/// The profile's rewrite mode, or the settings'; `None` where that one is
/// `off`. A profile can turn the rewrite off or pick another mode, but not
/// turn it on without the settings' provider.
fn rewrite_mode(settings: Option<&str>, profile: Option<&str>) -> Option<String> {
    let mode = profile.unwrap_or(settings?);
    (mode != utter_rewrite::modes::OFF).then(|| mode.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use utter_ports::output::OutputMethod;

    struct Settings {
        dictation: DictationConfig,
        rules: TextRules,
        output: OutputConfig,
    }

    fn settings(vocabulary: &[&str]) -> Settings {
        let mut dictation = DictationConfig::defaults();
        dictation.language = Some("en".into());
        dictation.vocabulary = vocabulary.iter().map(|w| w.to_string()).collect();
        Settings {
            dictation,
            rules: TextRules::default(),
            output: OutputConfig::default(),
        }
    }

    fn defaults<'a>(s: &'a Settings, rewrite_mode: Option<&'a str>) -> PlanDefaults<'a> {
        PlanDefaults {
            dictation: &s.dictation,
            text_rules: &s.rules,
            output: &s.output,
            rewrite_mode,
        }
    }

    fn model(languages: &[&str]) -> ModelInfo {
        ModelInfo {
            languages: languages.iter().map(|l| l.to_string()).collect(),
            ..ModelInfo::fake()
        }
    }

    #[test]
    fn translation_is_asked_of_models_that_translate_and_a_profile_may_turn_it_off() {
        let mut s = settings(&[]);
        s.dictation.translate = true;
        let translating = ModelInfo {
            translates: true,
            ..model(&["es", "en"])
        };
        let on = plan(&defaults(&s, None), None, &translating);
        assert!(on.dictation.translate && on.warnings.is_empty());
        let cannot = plan(&defaults(&s, None), None, &model(&["en"]));
        assert!(!cannot.dictation.translate);
        assert!(
            cannot.warnings[0].contains("cannot translate"),
            "{:?}",
            cannot.warnings
        );
        let code = Profile {
            name: "Code".into(),
            translate: Some(false),
            ..Profile::default()
        };
        let off = plan(&defaults(&s, None), Some(&code), &translating);
        assert!(!off.dictation.translate && off.warnings.is_empty());
    }

    #[test]
    fn without_a_profile_the_settings_are_the_plan() {
        let s = settings(&["Kubernetes"]);
        let plan = plan(&defaults(&s, Some("polish")), None, &model(&["en"]));
        assert_eq!(plan.language(), Some("en"));
        assert_eq!(plan.dictation.vocabulary, ["Kubernetes"]);
        assert_eq!(plan.delivery, s.output.delivery());
        assert_eq!(plan.rewrite.as_deref(), Some("polish"));
        assert!(plan.profile_name().is_none() && plan.warnings.is_empty());
    }

    #[test]
    fn a_profile_sets_language_words_delivery_and_rewrite() {
        let s = settings(&["Kubernetes", "Grafana"]);
        let profile = Profile {
            name: "Terminal".into(),
            language: Some("es".parse().unwrap()),
            vocabulary: vec!["kubectl".into(), "Grafana".into()],
            output: Some(OutputMethod::Type),
            trailing_space: Some(false),
            final_period: Some(false),
            rewrite: Some(utter_rewrite::modes::OFF.into()),
            ..Profile::default()
        };
        let plan = plan(
            &defaults(&s, Some("polish")),
            Some(&profile),
            &model(&["en", "es"]),
        );
        assert_eq!(plan.profile_name(), Some("Terminal"));
        assert_eq!(plan.language(), Some("es"));
        // The profile's words first, the settings' after, each once.
        assert_eq!(
            plan.dictation.vocabulary,
            ["kubectl", "Grafana", "Kubernetes"]
        );
        assert_eq!(plan.delivery.method, OutputMethod::Type);
        assert!(!plan.delivery.trailing_space);
        assert_eq!(plan.rewrite, None, "the profile turned the rewrite off");
        assert_eq!(plan.finish_text("Done.".into()), "Done");
    }

    #[test]
    fn a_language_the_model_lacks_is_a_warning_and_the_settings_language_stays() {
        let s = settings(&[]);
        let profile = Profile {
            name: "Spanish chat".into(),
            language: Some("es".parse().unwrap()),
            ..Profile::default()
        };
        let plan = plan(&defaults(&s, None), Some(&profile), &model(&["en"]));
        assert_eq!(plan.language(), Some("en"));
        assert_eq!(plan.warnings.len(), 1);
        assert!(
            plan.warnings[0].contains("Spanish chat") && plan.warnings[0].contains("es"),
            "{:?}",
            plan.warnings
        );
    }

    #[test]
    fn a_profile_cannot_turn_on_a_rewrite_the_settings_have_off() {
        let s = settings(&[]);
        let profile = Profile {
            name: "Mail".into(),
            rewrite: Some("polish".into()),
            ..Profile::default()
        };
        let off = plan(&defaults(&s, None), Some(&profile), &model(&["en"]));
        assert_eq!(off.rewrite, None);
        let on = plan(
            &defaults(&s, Some("concise")),
            Some(&profile),
            &model(&["en"]),
        );
        assert_eq!(on.rewrite.as_deref(), Some("polish"));
    }
}
