//! A headless sway session with a foot terminal, `utter dictate` and the
//! desktop app started in it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::dictate::Dictate;
use super::kill_when_tests_end;
use super::x11::Desktop;

/// The headless sway session (test-support's) with a foot terminal in raw
/// mode whose `cat` writes every character it receives to `typed`. The
/// session's own helpers (commands in it, swaymsg, the clipboard) are
/// reached through `Deref`.
pub struct Sway {
    session: utter_test_support::sway::Sway,
    typed: PathBuf,
    /// foot and the watchdog that kills it when the tests end (a static is
    /// never dropped).
    _foot: [Child; 2],
}

impl std::ops::Deref for Sway {
    type Target = utter_test_support::sway::Sway;
    fn deref(&self) -> &Self::Target {
        &self.session
    }
}

pub fn sway() -> &'static Sway {
    static SWAY: OnceLock<Sway> = OnceLock::new();
    SWAY.get_or_init(|| {
        let session = utter_test_support::sway::Sway::start();
        let typed = session.base().join("typed.txt");
        std::fs::write(&typed, "").unwrap();
        // foot runs as the session's user, who must be able to write it.
        std::fs::set_permissions(&typed, std::fs::Permissions::from_mode(0o666)).unwrap();
        let foot = session
            .spawn_as_session_user("foot")
            .args(["sh", "-c"])
            .arg(format!("stty raw -echo; exec cat > '{}'", typed.display()))
            .spawn()
            .expect("foot is installed (apt install foot)");
        session.wait_for_window("\"app_id\": \"foot\"", Duration::from_secs(15));
        let watchdog = kill_when_tests_end(&[foot.id()]);
        Sway {
            session,
            typed,
            _foot: [foot, watchdog],
        }
    })
}

impl Sway {
    fn typed(&self) -> String {
        std::fs::read_to_string(&self.typed).unwrap()
    }

    /// What foot has received so far, as a mark for [`Sway::typed_since`].
    /// (foot's `cat` keeps writing at its own offset: truncating the file
    /// would leave a hole, so each test reads only what came after its mark.)
    pub fn typed_mark(&self) -> usize {
        self.typed().len()
    }

    pub fn typed_since(&self, mark: usize) -> String {
        self.typed().get(mark..).unwrap_or_default().to_string()
    }

    /// The window titled `name` in sway's tree, if it is mapped.
    pub fn window_named(&self, name: &str) -> Option<serde_json::Value> {
        fn find(node: &serde_json::Value, name: &str) -> Option<serde_json::Value> {
            if node["name"] == name && node["type"] == "con" {
                return Some(node.clone());
            }
            ["nodes", "floating_nodes"]
                .iter()
                .filter_map(|k| node[*k].as_array())
                .flatten()
                .find_map(|child| find(child, name))
        }
        let tree = serde_json::from_str(&self.swaymsg(&["-t", "get_tree"])).ok()?;
        find(&tree, name)
    }

    /// How many different colours the screen shows in a rectangle (grim's screenshot).
    pub fn distinct_colours(&self, x: usize, y: usize, width: usize, height: usize) -> usize {
        let out = self.cmd("grim").args(["-t", "ppm", "-"]).output().unwrap();
        assert!(
            out.status.success(),
            "grim: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Binary PPM: "P6\n<width> <height>\n255\n" then RGB triples.
        let ppm = out.stdout;
        let mut fields = Vec::new();
        let mut start = 0;
        for (i, &b) in ppm.iter().enumerate() {
            if b.is_ascii_whitespace() {
                if i > start {
                    fields.push(String::from_utf8_lossy(&ppm[start..i]).into_owned());
                }
                start = i + 1;
                if fields.len() == 4 {
                    break;
                }
            }
        }
        let screen_width: usize = fields[1].parse().unwrap();
        let pixels = &ppm[start..];
        let mut colours = std::collections::HashSet::new();
        for row in y..y + height {
            for col in x..x + width {
                let at = (row * screen_width + col) * 3;
                if let Some(rgb) = pixels.get(at..at + 3) {
                    colours.insert([rgb[0], rgb[1], rgb[2]]);
                }
            }
        }
        colours.len()
    }

    pub fn focus_foot(&self) {
        self.focus("app_id=foot");
    }

    /// sway's and foot's logs, for a failure message.
    pub fn logs(&self) -> String {
        self.session.logs(&["foot"])
    }
}

/// `utter dictate --output paste` in the sway session, driven by `utter ptt`
/// (what a compositor key binding runs): the process, and `ptt(press|release)`.
pub fn dictate_in_sway<'a>(d: &'a Desktop, s: &Sway, dir: &Path) -> (Dictate, impl Fn(&str) + 'a) {
    let socket = d.runtime_dir.join("ptt-sway.sock");
    let pulse = format!("unix:{}", d.runtime_dir.join("pulse/native").display());
    let runtime = s.runtime_dir().to_string_lossy().into_owned();
    let socket_str = socket.to_string_lossy().into_owned();
    // The focused app's profile (foot pastes with Ctrl+Shift+V, like most
    // terminals) comes from sway's IPC, which names it.
    let sway_socket = s.ipc_socket().to_string_lossy().into_owned();
    let env = [
        ("DISPLAY", ""),
        ("WAYLAND_DISPLAY", "wayland-1"),
        ("XDG_SESSION_TYPE", "wayland"),
        ("XDG_RUNTIME_DIR", runtime.as_str()),
        ("PULSE_SERVER", pulse.as_str()),
        ("UTTER_PTT_SOCKET", socket_str.as_str()),
        ("SWAYSOCK", sway_socket.as_str()),
    ];
    let dictate = Dictate::start_with_env(d, dir, &["--output", "paste"], &env);
    let notices: Vec<Value> = dictate
        .seen
        .borrow()
        .iter()
        .filter(|ev| ev["event"] == "notice")
        .cloned()
        .collect();
    assert!(
        notices
            .iter()
            .all(|n| !n["message"].as_str().unwrap().contains("paste output")),
        "paste works on sway: {notices:?}"
    );
    let ptt = move |arg: &str| {
        let ok = d
            .cmd(env!("CARGO_BIN_EXE_utter"))
            .args(["ptt", arg])
            .env("UTTER_PTT_SOCKET", &socket)
            .status()
            .unwrap()
            .success();
        assert!(ok, "utter ptt {arg}");
    };
    (dictate, ptt)
}

/// The desktop app's binary, built by `cargo test --workspace` (the shell's
/// own test needs it) or `cargo build -p utter-app`.
fn app_binary() -> PathBuf {
    let path = std::env::var_os("UTTER_APP_BIN").map_or_else(
        || {
            let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
                || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
                PathBuf::from,
            );
            target.join("debug/utter-app")
        },
        PathBuf::from,
    );
    assert!(
        path.is_file(),
        "the app is built at {} (cargo build -p utter-app)",
        path.display()
    );
    path
}

/// The desktop app in the sway session, its settings and data in `dir`
/// (pasting with Ctrl+Shift+V, as foot wants; no sounds or overlay), its
/// ptt socket at `socket`; returns it and its log file.
pub fn start_app_in_sway(
    d: &Desktop,
    s: &Sway,
    dir: &Path,
    socket: &Path,
    args: &[&str],
) -> (Child, PathBuf) {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        r#"{"version": 2, "output": "paste", "pasteKeys": "ctrl+shift+v", "sounds": false,
            "showOverlay": false, "checkUpdates": false}"#,
    )
    .unwrap();
    let log_path = dir.join("app.log");
    let app = s
        .cmd(app_binary().to_str().unwrap())
        .args(args)
        .env("XDG_SESSION_TYPE", "wayland")
        .env("GDK_BACKEND", "wayland")
        .env(
            "PULSE_SERVER",
            format!("unix:{}", d.runtime_dir.join("pulse/native").display()),
        )
        .env("UTTER_PTT_SOCKET", socket)
        .env("UTTER_CONFIG_DIR", &config)
        .env("UTTER_DATA_DIR", dir.join("data"))
        .env("UTTER_CACHE_DIR", dir.join("cache"))
        // The models `npm test` provisioned (XDG_DATA_HOME moves below).
        .env("UTTER_MODELS_DIR", utter_base::paths::models_dir())
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("UTTER_UPDATE_CHECK", "0")
        // Software rendering for the webview: the headless compositor has no GPU.
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    (app, log_path)
}
