//! The models directory: model files plus `manifest.json`, which records what
//! each file is and where it came from. The manifest is rewritten atomically
//! (temp file + rename), so a crash never leaves it half-written.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ModelError;

/// Whether a model transcribes speech or detects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ModelKind {
    Speech,
    Vad,
}

/// One installed model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEntry {
    /// Short name users type (`whisper-tiny.en`).
    pub name: String,
    pub kind: ModelKind,
    /// Engine architecture (`whisper`, `silero_vad`, ...).
    pub arch: String,
    /// Engine variant (`whisper-tiny.en`, ...).
    pub variant: String,
    /// File name inside the models directory.
    pub file: String,
    /// Where it came from: a path, a package, or a URL.
    pub source: String,
    pub size: u64,
    pub sha256: String,
    /// What the engine reported when it loaded the file at install time;
    /// `None` in manifests written before this was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Capabilities>,
}

/// A model's abilities, from the engine, not guessed from its name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// ISO codes; empty when the model does not say.
    pub languages: Vec<String>,
    pub detects_language: bool,
    pub translates: bool,
    pub streaming: bool,
    /// The finest timestamps it gives.
    #[serde(default)]
    pub timestamps: utter_engine::Timestamps,
    /// Longest audio of one run in ms (0: none stated).
    #[serde(default)]
    pub max_audio_ms: i64,
    /// Whether the vocabulary reaches the model as a prompt.
    #[serde(default)]
    pub takes_vocabulary: bool,
}

impl From<&utter_engine::ModelInfo> for Capabilities {
    fn from(info: &utter_engine::ModelInfo) -> Self {
        Self {
            languages: info.languages.clone(),
            detects_language: info.detects_language,
            translates: info.translates,
            streaming: info.streaming,
            timestamps: info.timestamps,
            max_audio_ms: info.max_audio_ms,
            takes_vocabulary: info.takes_vocabulary,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    #[serde(default)]
    models: Vec<ModelEntry>,
    /// The speech model used when none is named (dictation, and files
    /// unless `default_files` says otherwise).
    #[serde(default)]
    default_speech: Option<String>,
    /// A different default for file transcription (say, a larger model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    default_files: Option<String>,
}

/// What a speech model is used for: each may have its own default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelUse {
    Dictation,
    Files,
}

const MANIFEST: &str = "manifest.json";

/// A models directory.
#[derive(Debug, Clone)]
pub struct ModelStore {
    dir: PathBuf,
}

impl ModelStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_of(&self, entry: &ModelEntry) -> PathBuf {
        self.dir.join(&entry.file)
    }

    fn read_manifest(&self) -> Result<Manifest, ModelError> {
        let path = self.dir.join(MANIFEST);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                ModelError::NotFound(format!(
                    "{}: the models manifest is corrupt ({e}); delete it and import the models again",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest {
                version: 1,
                ..Default::default()
            }),
            Err(e) => Err(ModelError::io(path, e)),
        }
    }

    fn write_manifest(&self, manifest: &Manifest) -> Result<(), ModelError> {
        let path = self.dir.join(MANIFEST);
        let tmp = self.dir.join(".manifest.json.tmp");
        let text = serde_json::to_string_pretty(manifest).expect("manifest serialises");
        std::fs::write(&tmp, text).map_err(|e| ModelError::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| ModelError::io(&path, e))
    }

    /// Installed models whose files are present.
    pub fn list(&self) -> Result<Vec<ModelEntry>, ModelError> {
        Ok(self
            .read_manifest()?
            .models
            .into_iter()
            .filter(|m| self.path_of(m).is_file())
            .collect())
    }

    /// The installed model called `name`, else the one `name` is an alias of
    /// (a model imported under an alias's name keeps it).
    pub fn find(&self, name: &str) -> Result<Option<ModelEntry>, ModelError> {
        let list = self.list()?;
        let canonical = crate::names::canonical(name);
        let exact = list.iter().position(|m| m.name == name);
        let index = exact.or_else(|| list.iter().position(|m| m.name == canonical));
        Ok(index.map(|i| list[i].clone()))
    }

    /// Adds or replaces the entry with the same name.
    pub fn record(&self, entry: ModelEntry) -> Result<(), ModelError> {
        let mut manifest = self.read_manifest()?;
        manifest.version = 1;
        if entry.kind == ModelKind::Speech && manifest.default_speech.is_none() {
            manifest.default_speech = Some(entry.name.clone());
        }
        // A reinstall or an update keeps its place in the list.
        match manifest.models.iter_mut().find(|m| m.name == entry.name) {
            Some(slot) => *slot = entry,
            None => manifest.models.push(entry),
        }
        self.write_manifest(&manifest)
    }

    /// Removes a model's file and manifest entry.
    pub fn remove(&self, name: &str) -> Result<ModelEntry, ModelError> {
        let found = self.find(name)?.map(|m| m.name);
        let name = found.as_deref().unwrap_or(name);
        let mut manifest = self.read_manifest()?;
        let index = manifest
            .models
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| self.not_installed(name))?;
        let entry = manifest.models.remove(index);
        if manifest.default_speech.as_deref() == Some(name) {
            manifest.default_speech = None;
        }
        if manifest.default_files.as_deref() == Some(name) {
            manifest.default_files = None;
        }
        let path = self.path_of(&entry);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ModelError::io(path, e)),
        }
        self.write_manifest(&manifest)?;
        Ok(entry)
    }

    /// The error for `name` asked for and not installed, naming what is.
    fn not_installed(&self, name: &str) -> ModelError {
        let installed = self.list().unwrap_or_default();
        ModelError::NotInstalled {
            requested: name.into(),
            dir: self.dir.clone(),
            installed: installed.into_iter().map(|m| m.name).collect(),
        }
    }

    /// Makes `name` the speech model used when none is named, for
    /// dictation and files alike.
    pub fn set_default(&self, name: &str) -> Result<(), ModelError> {
        self.set_default_for(name, None)
    }

    /// Makes `name` the default for one use (`None`: for both).
    pub fn set_default_for(&self, name: &str, use_: Option<ModelUse>) -> Result<(), ModelError> {
        let entry = self.find(name)?.ok_or_else(|| self.not_installed(name))?;
        let name = entry.name.as_str();
        if entry.kind != ModelKind::Speech {
            return Err(ModelError::NotFound(format!(
                "`{name}` is a VAD model, not a speech model"
            )));
        }
        // What files use now, before the change: `--for dictation` must not
        // move them along (they fall back to the general default).
        let files_now = self.default_for(ModelUse::Files)?.map(|m| m.name);
        let mut manifest = self.read_manifest()?;
        match use_ {
            Some(ModelUse::Dictation) => {
                if manifest.default_files.is_none() && files_now.as_deref() != Some(name) {
                    manifest.default_files = files_now;
                }
                manifest.default_speech = Some(name.to_string());
            }
            Some(ModelUse::Files) => manifest.default_files = Some(name.to_string()),
            None => {
                manifest.default_speech = Some(name.to_string());
                manifest.default_files = None;
            }
        }
        self.write_manifest(&manifest)
    }

    /// The speech model for `use_` when none is named: its own default if
    /// files have one, else the general default.
    pub fn default_for(&self, use_: ModelUse) -> Result<Option<ModelEntry>, ModelError> {
        if use_ == ModelUse::Files {
            let manifest = self.read_manifest()?;
            if let Some(name) = manifest.default_files {
                if let Some(entry) = self.find(&name)? {
                    return Ok(Some(entry));
                }
            }
        }
        self.default_speech()
    }

    /// The speech model to use when none is named: the chosen default, else
    /// the first installed one.
    pub fn default_speech(&self) -> Result<Option<ModelEntry>, ModelError> {
        let manifest = self.read_manifest()?;
        let installed = self.list()?;
        let chosen = manifest
            .default_speech
            .and_then(|name| installed.iter().find(|m| m.name == name).cloned());
        Ok(chosen.or_else(|| installed.into_iter().find(|m| m.kind == ModelKind::Speech)))
    }

    /// The VAD model, if one is installed.
    pub fn vad(&self) -> Result<Option<ModelEntry>, ModelError> {
        Ok(self.list()?.into_iter().find(|m| m.kind == ModelKind::Vad))
    }

    /// Resolves `--model NAME|PATH` (or nothing: the dictation default) to a speech model file.
    pub fn resolve_speech(&self, requested: Option<&str>) -> Result<(String, PathBuf), ModelError> {
        self.resolve_speech_for(requested, ModelUse::Dictation)
    }

    /// Resolves `--model NAME|PATH` (or nothing: the default for `use_`).
    pub fn resolve_speech_for(
        &self,
        requested: Option<&str>,
        use_: ModelUse,
    ) -> Result<(String, PathBuf), ModelError> {
        match requested {
            Some(req) => {
                let as_path = Path::new(req);
                if as_path.is_file() {
                    let name = as_path
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    return Ok((name, as_path.to_path_buf()));
                }
                match self.find(req)? {
                    Some(entry) => Ok((entry.name.clone(), self.path_of(&entry))),
                    None => Err(self.not_installed(req)),
                }
            }
            None => match self.default_for(use_)? {
                Some(entry) => Ok((entry.name.clone(), self.path_of(&entry))),
                None => Err(ModelError::NoneInstalled {
                    dir: self.dir.clone(),
                }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, kind: ModelKind) -> ModelEntry {
        ModelEntry {
            name: name.into(),
            kind,
            arch: "whisper".into(),
            variant: name.into(),
            file: format!("{name}.bin"),
            source: "test".into(),
            size: 1,
            sha256: "00".into(),
            capabilities: None,
        }
    }

    #[test]
    fn files_may_have_their_own_default_and_fall_back_to_the_general_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = ModelStore::new(dir.path());
        for name in ["small", "large"] {
            std::fs::write(dir.path().join(format!("{name}.bin")), b"x").unwrap();
            store.record(entry(name, ModelKind::Speech)).unwrap();
        }
        let for_use = |u| store.resolve_speech_for(None, u).unwrap().0;
        assert_eq!(
            for_use(ModelUse::Files),
            "small",
            "no files default: the general one"
        );
        store
            .set_default_for("large", Some(ModelUse::Files))
            .unwrap();
        assert_eq!(for_use(ModelUse::Files), "large");
        assert_eq!(for_use(ModelUse::Dictation), "small");
        // Reinstalling keeps the model's place and the defaults.
        store.record(entry("large", ModelKind::Speech)).unwrap();
        assert_eq!(store.list().unwrap()[1].name, "large");
        assert_eq!(for_use(ModelUse::Files), "large");
        // `models use NAME` without --for sets both again.
        store.set_default("small").unwrap();
        assert_eq!(for_use(ModelUse::Files), "small");
        // `--for dictation` changes dictation only: files keep theirs.
        store
            .set_default_for("large", Some(ModelUse::Dictation))
            .unwrap();
        assert_eq!(for_use(ModelUse::Dictation), "large");
        assert_eq!(for_use(ModelUse::Files), "small");
        store
            .set_default_for("large", Some(ModelUse::Files))
            .unwrap();
        store.remove("large").unwrap();
        assert_eq!(
            for_use(ModelUse::Files),
            "small",
            "a removed default falls back"
        );
    }

    /// `moonshine-tiny` is an alias of `moonshine-tiny-en`, unless a model
    /// was installed under that very name: then it is that model.
    #[test]
    fn an_alias_finds_its_model_and_never_hides_one_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = ModelStore::new(dir.path());
        std::fs::write(dir.path().join("moonshine-tiny-en.bin"), b"x").unwrap();
        store
            .record(entry("moonshine-tiny-en", ModelKind::Speech))
            .unwrap();
        let found = store.find("moonshine-tiny").unwrap().unwrap();
        assert_eq!(found.name, "moonshine-tiny-en");
        std::fs::write(dir.path().join("moonshine-tiny.bin"), b"x").unwrap();
        store
            .record(entry("moonshine-tiny", ModelKind::Speech))
            .unwrap();
        assert_eq!(
            store.find("moonshine-tiny").unwrap().unwrap().name,
            "moonshine-tiny"
        );
        store.set_default("moonshine-tiny").unwrap();
        assert_eq!(store.resolve_speech(None).unwrap().0, "moonshine-tiny");
        assert_eq!(
            store.remove("moonshine-tiny").unwrap().name,
            "moonshine-tiny"
        );
        assert_eq!(
            store.remove("moonshine-tiny").unwrap().name,
            "moonshine-tiny-en"
        );
    }

    #[test]
    fn records_resolves_and_explains_missing_models() {
        let dir = tempfile::tempdir().unwrap();
        let store = ModelStore::new(dir.path());
        assert!(matches!(
            store.resolve_speech(None),
            Err(ModelError::NoneInstalled { dir: d }) if d == dir.path()
        ));

        for (name, kind) in [
            ("a", ModelKind::Speech),
            ("vad", ModelKind::Vad),
            ("b", ModelKind::Speech),
        ] {
            std::fs::write(dir.path().join(format!("{name}.bin")), b"x").unwrap();
            store.record(entry(name, kind)).unwrap();
        }
        assert_eq!(
            store.resolve_speech(None).unwrap().0,
            "a",
            "first speech model is the default"
        );
        assert_eq!(store.resolve_speech(Some("b")).unwrap().0, "b");
        assert_eq!(store.vad().unwrap().unwrap().name, "vad");
        let err = store.resolve_speech(Some("nope")).unwrap_err().to_string();
        assert!(err.contains("installed: a, vad, b"), "{err}");

        store.set_default("b").unwrap();
        assert_eq!(store.resolve_speech(None).unwrap().0, "b");
        assert!(store.set_default("vad").is_err());
        store.remove("b").unwrap();
        assert!(!dir.path().join("b.bin").exists());
        assert_eq!(
            store.resolve_speech(None).unwrap().0,
            "a",
            "default falls back"
        );
        std::fs::write(dir.path().join("b.bin"), b"x").unwrap();
        store.record(entry("b", ModelKind::Speech)).unwrap();

        // A model whose file vanished is not listed.
        std::fs::remove_file(dir.path().join("a.bin")).unwrap();
        assert_eq!(store.resolve_speech(None).unwrap().0, "b");
    }
}
