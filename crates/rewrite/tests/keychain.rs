//! API keys in a real Secret Service: the test runs itself again inside a
//! private D-Bus session (`dbus-run-session`) with its own gnome-keyring,
//! whose login keyring lives in a temporary folder and is unlocked with a
//! password on stdin. The key is saved, read back, sent to the loopback
//! server as a Bearer token, and deleted; the keyring file on disk and the
//! settings never hold it in clear.
//!
//! Without dbus-run-session or gnome-keyring-daemon the test fails, saying
//! which packages to install (scripts/bootstrap.sh test installs them): a
//! skipped test would hide that the keychain went untested.

#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{config, good_answer, server, SAID};
use utter_rewrite::{ApiKey, KeyStore, Outcome, ProviderKind, Rewriter};

/// Set in the re-run: we are inside the private session.
const INSIDE: &str = "UTTER_TEST_PRIVATE_KEYRING";
const TEST: &str = "keys_live_in_a_real_secret_service_and_reach_only_the_server";
const KEY: &str = "sk-keychain-3b8e1d0c";

#[test]
fn keys_live_in_a_real_secret_service_and_reach_only_the_server() {
    match std::env::var_os(INSIDE) {
        None => run_in_private_session(),
        Some(data_home) => round_trip(Path::new(&data_home)),
    }
}

fn round_trip(data_home: &Path) {
    wait_for_secret_service();
    let store = KeyStore::default();
    let key = ApiKey::new(KEY).unwrap();
    assert_eq!(store.get(ProviderKind::OpenAi), Ok(None), "a fresh keyring");
    store
        .set(ProviderKind::OpenAi, &key)
        .expect("saved in the Secret Service");
    assert_eq!(store.get(ProviderKind::OpenAi), Ok(Some(key.clone())));
    assert_eq!(
        store.get(ProviderKind::Groq),
        Ok(None),
        "one entry per provider"
    );

    // From the keychain to the configured server, and only there.
    let server = server(good_answer);
    let config = config(&server, ProviderKind::OpenAi, 5_000);
    let from_keychain = store.key_for(&config.provider).unwrap();
    assert_eq!(from_keychain.as_ref(), Some(&key));
    let outcome =
        Rewriter::new()
            .unwrap()
            .rewrite(&config, from_keychain.as_ref(), "clean-up", SAID, &[]);
    assert!(matches!(outcome, Outcome::Rewritten { .. }), "{outcome:?}");
    assert_eq!(
        server.received()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    // Not in the settings, not in clear on disk.
    assert!(!serde_json::to_string(&config).unwrap().contains(KEY));
    let keyrings = data_home.join("keyrings");
    let files: Vec<_> = std::fs::read_dir(&keyrings)
        .unwrap_or_else(|e| panic!("{}: {e}", keyrings.display()))
        .map(|f| f.unwrap().path())
        .collect();
    assert!(!files.is_empty(), "the keyring is on disk");
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let clear = bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes());
        assert!(!clear, "{} holds the key in clear", file.display());
    }

    assert_eq!(store.delete(ProviderKind::OpenAi), Ok(true));
    assert_eq!(store.get(ProviderKind::OpenAi), Ok(None));
    assert_eq!(store.delete(ProviderKind::OpenAi), Ok(false));
}

/// gnome-keyring-daemon returns before it has taken its name on the bus.
fn wait_for_secret_service() {
    let started = Instant::now();
    loop {
        let owned = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.secrets",
            ])
            .output()
            .expect("dbus-send (package dbus-bin) runs");
        if String::from_utf8_lossy(&owned.stdout).contains("boolean true") {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "gnome-keyring-daemon did not offer the Secret Service within 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs this test again under `dbus-run-session`, after starting and
/// unlocking a gnome-keyring whose files are in a temporary folder.
fn run_in_private_session() {
    for (tool, package) in [
        ("dbus-run-session", "dbus-daemon"),
        ("dbus-send", "dbus-bin"),
        ("gnome-keyring-daemon", "gnome-keyring"),
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "{tool} (Debian package {package}) is not installed: this test needs a real Secret Service in a private \
             D-Bus session. Install the Debian packages dbus-daemon, dbus-bin and \
             gnome-keyring (scripts/bootstrap.sh test does)."
        );
    }
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let runtime = home.path().join("run");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&runtime).unwrap();
    // The daemon's control socket goes here; it must be private.
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The password of the throw-away login keyring, on the daemon's stdin.
    let script = "printf %s utter-test | gnome-keyring-daemon --unlock --components=secrets \
                  >/dev/null || exit 97; exec \"$@\"";
    let status = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", script, "sh"])
        .arg(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE, &data)
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", &data)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .status()
        .expect("dbus-run-session starts");
    assert_eq!(
        status.code(),
        Some(0),
        "the keychain test failed inside its private D-Bus session (exit 97: \
         gnome-keyring-daemon could not start); its output is above"
    );
}
