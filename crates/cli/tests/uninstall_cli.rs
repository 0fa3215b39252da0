//! `utter paths` and `utter uninstall` in a home folder of their own: every
//! place Utter keeps something is found, listed with its size, kept or
//! removed as asked, and nothing else is touched.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Output};

fn utter(home: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_utter"));
    command.args(args).env("HOME", home);
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "UTTER_CONFIG_DIR",
        "UTTER_DATA_DIR",
        "UTTER_MODELS_DIR",
        "UTTER_CACHE_DIR",
    ] {
        command.env_remove(var);
    }
    command.output().expect("utter runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write(path: &Path, bytes: usize) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, vec![b'x'; bytes]).unwrap();
}

const UTTERS: [&str; 8] = [
    ".config/utter/settings.json",
    ".local/share/utter/history.sqlite3",
    ".local/share/utter/recordings/1.wav",
    ".local/share/utter/models/whisper-tiny.en.bin",
    ".cache/utter/wheels/a.whl",
    ".local/share/app.utter.desktop/logs/utter.log",
    ".cache/app.utter.desktop/WebKitCache/x",
    ".config/autostart/Utter.desktop",
];

#[test]
fn paths_lists_every_place_and_uninstall_removes_only_utters() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    for (i, f) in UTTERS.iter().enumerate() {
        write(&home.join(f), 2048 * (i + 1));
    }
    // Not Utter's: another app's files, and what a link in Utter's data points at.
    write(&home.join(".config/other/settings.json"), 10);
    write(&home.join("Music/song.flac"), 10);
    std::os::unix::fs::symlink(
        home.join("Music/song.flac"),
        home.join(".local/share/utter/recordings/linked.flac"),
    )
    .unwrap();

    let out = utter(home, &["paths"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    for dir in [
        ".config/utter",
        ".local/share/utter",
        ".local/share/utter/models",
        ".cache/utter",
        ".local/share/app.utter.desktop",
        ".cache/app.utter.desktop",
        ".config/autostart/Utter.desktop",
    ] {
        let line = listed
            .lines()
            .find(|l| l.ends_with(home.join(dir).to_str().unwrap()))
            .unwrap_or_else(|| panic!("{dir} not listed:\n{listed}"));
        assert!(line.contains(" kB"), "{line}");
    }

    // Without --yes: a list, and nothing removed.
    let out = utter(home, &["uninstall"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("Would remove") && said.contains("--yes"),
        "{said}"
    );
    assert!(UTTERS.iter().all(|f| home.join(f).is_file()));

    // --keep-data: the user's History, recordings and models stay.
    let out = utter(home, &["uninstall", "--yes", "--keep-data"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for f in &UTTERS {
        let kept = f.starts_with(".local/share/utter/");
        assert_eq!(home.join(f).exists(), kept, "{f}: {}", text(&out.stdout));
    }
    assert!(
        text(&out.stdout).contains("Keeping"),
        "{}",
        text(&out.stdout)
    );

    let out = utter(home, &["uninstall", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("sudo apt remove utter"),
        "{}",
        text(&out.stdout)
    );
    for f in &UTTERS {
        assert!(!home.join(f).exists(), "{f} is left");
    }
    assert!(!home.join(".local/share/utter").exists());
    assert!(home.join(".config/other/settings.json").is_file());
    assert!(
        home.join("Music/song.flac").is_file(),
        "a link's target is not Utter's"
    );
    let out = utter(home, &["uninstall", "--yes"]);
    assert!(
        text(&out.stdout).contains("nothing here to remove"),
        "{}",
        text(&out.stdout)
    );
}

/// Whatever the environment says, the home folder is never removed whole.
#[test]
fn uninstall_refuses_a_place_that_is_the_home_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    write(&home.join("Documents/thesis.odt"), 10);
    let out = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["uninstall", "--yes"])
        .env("HOME", home)
        .env("UTTER_DATA_DIR", home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is the home folder or above it"),
        "{}",
        text(&out.stderr)
    );
    assert!(home.join("Documents/thesis.odt").is_file());
}
