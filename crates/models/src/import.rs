//! `utter models import PATH`: recognise what a path holds, convert it if
//! needed, prove the engine loads it, then install it under a stable name.
//! Nothing lands in the models directory unless the engine accepted it.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use utter_convert::quant::Quant;
use utter_convert::{moonshine, silero, whisper_bin, ConvertError};

use super::store::{ModelEntry, ModelKind, ModelStore};
use super::ModelError;
use utter_engine as engine;

/// What kind of thing is being imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    /// A CTranslate2 / faster-whisper model directory.
    Ct2Dir(PathBuf),
    /// Moonshine as ONNX Runtime files: `encoder_model.ort`,
    /// `decoder_model_merged.ort` and `tokenizer.bin` in one directory.
    MoonshineOrtDir(PathBuf),
    /// Silero VAD weights as safetensors.
    SileroSafetensors(PathBuf),
    /// A whisper.cpp-style ggml `.bin` (Whisper or Silero).
    GgmlBin(PathBuf),
    Gguf(PathBuf),
}

impl ImportSource {
    pub fn detect(path: &Path) -> Result<Self, ModelError> {
        if path.is_dir() {
            if path.join("model.bin").is_file() {
                return Ok(Self::Ct2Dir(path.to_path_buf()));
            }
            if moonshine::FILES.iter().any(|f| path.join(f).exists()) {
                // Which of the three is missing is the converter's to say.
                return Ok(Self::MoonshineOrtDir(path.to_path_buf()));
            }
            return Err(ModelError::NotFound(format!(
                "{}: directory has no model.bin and no encoder_model.ort; expected a CTranslate2 \
                 (faster-whisper) model directory or Moonshine's ONNX Runtime files ({})",
                path.display(),
                moonshine::FILES.join(", ")
            )));
        }
        let mut magic = [0u8; 4];
        let mut file = File::open(path).map_err(|e| ModelError::io(path, e))?;
        let n = file.read(&mut magic).map_err(|e| ModelError::io(path, e))?;
        if n < 4 {
            return Err(ModelError::Convert(ConvertError::Truncated(format!(
                "{}: {n} bytes is too short for any model file",
                path.display()
            ))));
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        if &magic == b"GGUF" {
            Ok(Self::Gguf(path.to_path_buf()))
        } else if u32::from_le_bytes(magic) == utter_convert::ggml::GGML_MAGIC {
            Ok(Self::GgmlBin(path.to_path_buf()))
        } else if ext == "safetensors" {
            Ok(Self::SileroSafetensors(path.to_path_buf()))
        } else {
            Err(ModelError::NotFound(format!(
                "{}: not a model Utter can import (expected a CTranslate2 model directory, \
                 a Silero .safetensors file, a whisper.cpp .bin or a .gguf)",
                path.display()
            )))
        }
    }
}

/// Writes through to a file while hashing.
struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Removes the temp file unless disarmed.
struct TempGuard(Option<PathBuf>);

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// How to import.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions<'a> {
    /// The name to install under [default: the model's variant, with the
    /// quantisation appended when it is not the recommended one].
    pub name: Option<&'a str>,
    /// The provenance recorded in the manifest [default: the path].
    pub source: Option<&'a str>,
    /// The weight format of a converted (CTranslate2) model [default:
    /// `Quant::RECOMMENDED`]. Files already in the engine's format are
    /// imported as they are, so asking for a format there is an error.
    pub quant: Option<Quant>,
}

/// Imports `path` into `store`.
pub fn import(
    store: &ModelStore,
    path: &Path,
    options: ImportOptions,
) -> Result<ModelEntry, ModelError> {
    // The readers parse untrusted files: a bug there fails this import, not the app.
    utter_base::panics::contain(|| import_contained(store, path, options)).unwrap_or_else(|panic| {
        Err(ModelError::Invalid {
            path: path.to_path_buf(),
            message: format!("the file could not be read ({panic})"),
        })
    })
}

fn import_contained(
    store: &ModelStore,
    path: &Path,
    options: ImportOptions,
) -> Result<ModelEntry, ModelError> {
    let ImportOptions {
        name,
        source,
        quant,
    } = options;
    let kind = ImportSource::detect(path)?;
    let converted = matches!(kind, ImportSource::Ct2Dir(_));
    if let Some(quant) = quant.filter(|_| !converted) {
        return Err(ModelError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "only a CTranslate2 (faster-whisper) model directory is quantised on import; \
                 this file is imported as it is: leave out the `{quant}` quantisation, or \
                 download the {quant} file of the model from the catalog"
            ),
        });
    }
    let quant = quant.unwrap_or(Quant::RECOMMENDED);
    let dir = store.dir();
    std::fs::create_dir_all(dir).map_err(|e| ModelError::io(dir, e))?;
    let ext = match kind {
        ImportSource::Gguf(_) | ImportSource::MoonshineOrtDir(_) => "gguf",
        _ => "bin",
    };
    let tmp = dir.join(format!(".import-{}.{ext}", std::process::id()));
    let guard = TempGuard(Some(tmp.clone()));

    let file = File::create(&tmp).map_err(|e| ModelError::io(&tmp, e))?;
    let mut out = HashingWriter {
        inner: BufWriter::new(file),
        hasher: Sha256::new(),
        written: 0,
    };
    let write_err = |e: std::io::Error| ModelError::io(&tmp, e);
    match &kind {
        ImportSource::Ct2Dir(d) => whisper_bin::convert_dir(d, quant)?
            .write_to(&mut out)
            .map_err(write_err)?,
        ImportSource::MoonshineOrtDir(d) => moonshine::convert_dir(d)?
            .write_to(&mut out)
            .map_err(write_err)?,
        ImportSource::SileroSafetensors(f) => silero::convert_file(f)?
            .write_to(&mut out)
            .map_err(write_err)?,
        ImportSource::GgmlBin(f) | ImportSource::Gguf(f) => {
            let mut input = File::open(f).map_err(|e| ModelError::io(f, e))?;
            std::io::copy(&mut input, &mut out).map_err(write_err)?;
        }
    }
    out.flush().map_err(write_err)?;
    let HashingWriter {
        inner,
        hasher,
        written,
    } = out;
    let file = inner
        .into_inner()
        .map_err(|e| ModelError::io(&tmp, e.into_error()))?;
    file.sync_all().map_err(write_err)?;
    drop(file);

    let info = engine::probe(&tmp).map_err(|e| ModelError::Invalid {
        path: path.to_path_buf(),
        message: match e {
            engine::EngineError::Load { message, .. } => message,
            other => other.to_string(),
        },
    })?;
    let model_kind = if info.is_vad {
        ModelKind::Vad
    } else if info.is_speech {
        ModelKind::Speech
    } else {
        return Err(ModelError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "`{}` ({}) is neither a speech nor a VAD model",
                info.variant, info.arch
            ),
        });
    };
    let name = match name {
        Some(n) => sanitize(n)?,
        None if model_kind == ModelKind::Vad && info.variant.is_empty() => "silero-vad".to_string(),
        None if !info.variant.is_empty() && converted && quant != Quant::RECOMMENDED => {
            sanitize(&format!("{}-{quant}", info.variant))?
        }
        None if !info.variant.is_empty() => sanitize(&info.variant)?,
        None => sanitize(
            &path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )?,
    };
    let file_name = format!("{name}.{ext}");
    let dest = dir.join(&file_name);
    std::fs::rename(&tmp, &dest).map_err(|e| ModelError::io(&dest, e))?;
    std::mem::forget(guard);
    let entry = ModelEntry {
        name,
        kind: model_kind,
        capabilities: Some((&info).into()),
        arch: info.arch,
        variant: info.variant,
        file: file_name,
        source: source
            .map(str::to_owned)
            .unwrap_or_else(|| path.display().to_string()),
        size: written,
        sha256: format!("{:x}", hasher.finalize()),
    };
    store.record(entry.clone())?;
    tracing::info!(name = %entry.name, size = entry.size, "model imported");
    Ok(entry)
}

/// Model names become file names: keep them tame.
fn sanitize(name: &str) -> Result<String, ModelError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(name.to_string())
    } else {
        Err(ModelError::NotFound(format!(
            "invalid model name `{name}`: use letters, digits, '.', '_' and '-'"
        )))
    }
}

/// SHA-256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let mut file = File::open(path).map_err(|e| ModelError::io(path, e))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| ModelError::io(path, e))?;
    Ok(format!("{:x}", hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content_not_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("a.bin"), b"GGUF\x03\0\0\0").unwrap();
        assert!(matches!(
            ImportSource::detect(&p("a.bin")).unwrap(),
            ImportSource::Gguf(_)
        ));
        std::fs::write(p("b.gguf"), 0x6767_6d6cu32.to_le_bytes()).unwrap();
        assert!(matches!(
            ImportSource::detect(&p("b.gguf")).unwrap(),
            ImportSource::GgmlBin(_)
        ));
        std::fs::write(p("c.txt"), b"hello world").unwrap();
        let err = ImportSource::detect(&p("c.txt")).unwrap_err().to_string();
        assert!(err.contains("not a model Utter can import"), "{err}");
        std::fs::write(p("d.gguf"), b"GG").unwrap();
        assert!(ImportSource::detect(&p("d.gguf"))
            .unwrap_err()
            .to_string()
            .contains("too short"));
        std::fs::create_dir(p("ct2")).unwrap();
        assert!(ImportSource::detect(&p("ct2"))
            .unwrap_err()
            .to_string()
            .contains("no model.bin and no encoder_model.ort"));
    }

    #[test]
    fn a_file_the_engine_rejects_is_not_installed() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models");
        let bogus = dir.path().join("bogus.gguf");
        std::fs::write(&bogus, b"GGUF garbage that is not a model").unwrap();
        let store = ModelStore::new(&models);
        let err = import(&store, &bogus, ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("the engine could not load it"), "{err}");
        assert_eq!(
            std::fs::read_dir(&models).unwrap().count(),
            0,
            "no temp file left behind"
        );
        assert!(store.list().unwrap().is_empty());
    }

    /// A Moonshine folder whose encoder is `encoder` (the other two files
    /// are placeholders: the encoder is read first).
    fn moonshine_dir(root: &Path, encoder: &[u8]) -> PathBuf {
        let dir = root.join("moonshine");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("encoder_model.ort"), encoder).unwrap();
        std::fs::write(dir.join("decoder_model_merged.ort"), encoder).unwrap();
        std::fs::write(dir.join("tokenizer.bin"), b"\x03<s>").unwrap();
        dir
    }

    #[test]
    fn bad_ort_files_are_refused_with_what_is_wrong_and_nothing_is_left() {
        use utter_convert::testing::ort_file;
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models");
        let store = ModelStore::new(&models);
        let conv = ort_file(
            &[],
            &[("/conv1/Conv", "Conv", &["x", "conv1.weight_add_tensor"])],
        );
        let cases: [(&str, Vec<u8>, &str); 4] = [
            (
                "truncated",
                conv[..conv.len() / 2].to_vec(),
                "truncated model file",
            ),
            (
                "not ort",
                b"PK\x03\x04 a zip, not a model".to_vec(),
                "not an ONNX Runtime .ort file",
            ),
            (
                "another graph",
                ort_file(&[], &[("/x/Add", "Add", &["a", "b"])]),
                "no node `/conv1/Conv`",
            ),
            (
                "missing tensor",
                conv.clone(),
                "no tensor `conv1.weight_add_tensor`",
            ),
        ];
        for (what, encoder, expected) in cases {
            let src = moonshine_dir(dir.path(), &encoder);
            let err = import(&store, &src, ImportOptions::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{what}: {err}");
            let left: Vec<_> = std::fs::read_dir(&models)
                .map(|d| d.map(|e| e.unwrap().file_name()).collect())
                .unwrap_or_default();
            assert!(left.is_empty(), "{what}: left behind {left:?}");
        }
        // An empty ORT file: the identifier check is what answers.
        let src = moonshine_dir(dir.path(), b"");
        let err = import(&store, &src, ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an ONNX Runtime .ort file"), "{err}");
        std::fs::remove_file(src.join("tokenizer.bin")).unwrap();
        let err = import(&store, &src, ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing: tokenizer.bin"), "{err}");
    }

    #[test]
    fn names_are_sanitised() {
        assert!(sanitize("whisper-tiny.en").is_ok());
        assert!(sanitize("../evil").is_err());
        assert!(sanitize(".hidden").is_err());
    }
}
