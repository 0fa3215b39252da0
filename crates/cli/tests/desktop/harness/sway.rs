//! A headless sway session with a foot terminal, `utter dictate` and the
//! desktop app started in it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::dictate::Dictate;
use super::x11::Desktop;
use super::{kill_when_tests_end, wait_until};

/// A headless sway (wlroots Wayland compositor) with a foot terminal in raw
/// mode whose `cat` writes every character it receives to `typed`. sway
/// refuses to run as root: as root, it runs as a throwaway user.
pub struct Sway {
    runtime_dir: PathBuf,
    typed: PathBuf,
    _processes: Vec<Child>,
}

/// sway's IPC socket in `runtime_dir`, once sway has made it.
fn sway_ipc_socket(runtime_dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(runtime_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("sway-ipc"))
}

/// The user sway runs as when the tests run as root (sway will not).
const USER: &str = "utter-wl-test";

pub fn sway() -> &'static Sway {
    static SWAY: OnceLock<Sway> = OnceLock::new();
    SWAY.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("utter-sway-{}", std::process::id()));
        let (runtime_dir, home) = (base.join("runtime"), base.join("home"));
        std::fs::create_dir_all(&runtime_dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let typed = base.join("typed.txt");
        std::fs::write(&typed, "").unwrap();
        let config = base.join("sway.conf");
        std::fs::write(
            &config,
            "output HEADLESS-1 resolution 1280x720\nxwayland disable\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        let root = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout)
            .unwrap()
            .trim()
            == "0";
        if root {
            let exists = Command::new("id")
                .arg(USER)
                .output()
                .unwrap()
                .status
                .success();
            if !exists {
                let ok = Command::new("useradd")
                    .args(["--system", "--no-create-home", USER])
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "useradd {USER}");
            }
            for dir in [&base, &runtime_dir, &home, &typed] {
                assert!(Command::new("chown")
                    .arg(USER)
                    .arg(dir)
                    .status()
                    .unwrap()
                    .success());
            }
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&runtime_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let as_user = |program: &str| {
            let mut c = if root {
                let mut c = Command::new("runuser");
                c.args(["-u", USER, "--", program]);
                c
            } else {
                Command::new(program)
            };
            c.env("XDG_RUNTIME_DIR", &runtime_dir)
                .env("HOME", &home)
                .env_remove("DISPLAY")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                // Each program's log, shown when a test fails.
                .stderr(std::fs::File::create(base.join(format!("{program}.log"))).unwrap());
            c
        };
        let sway = as_user("sway")
            .arg("-c")
            .arg(&config)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .spawn()
            .expect("sway is installed (apt install sway)");
        wait_until("sway", Duration::from_secs(15), || {
            runtime_dir.join("wayland-1").exists()
        });
        let foot = as_user("foot")
            .env("WAYLAND_DISPLAY", "wayland-1")
            .args(["sh", "-c"])
            .arg(format!("stty raw -echo; exec cat > '{}'", typed.display()))
            .spawn()
            .expect("foot is installed (apt install foot)");
        wait_until("foot focused in sway", Duration::from_secs(15), || {
            let Some(sock) = sway_ipc_socket(&runtime_dir) else {
                return false;
            };
            let out = as_user("swaymsg")
                .args(["-t", "get_tree"])
                .env("SWAYSOCK", sock)
                .stdout(Stdio::piped())
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).contains("\"app_id\": \"foot\"")
        });
        let watchdog = kill_when_tests_end(&[sway.id(), foot.id()]);
        Sway {
            runtime_dir,
            typed,
            _processes: vec![sway, foot, watchdog],
        }
    })
}

impl Sway {
    /// A command in this Wayland session (as the current user: root may use the socket).
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", "wayland-1")
            .env_remove("DISPLAY");
        c
    }

    /// A command in this Wayland session run as the session's own user,
    /// for programs that refuse root in another user's session (Firefox),
    /// with the environment kept as it is set on the command (`runuser -m`).
    pub fn cmd_as_session_user(&self, program: &str) -> Command {
        let root = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout)
            .unwrap()
            .trim()
            == "0";
        let mut c = if root {
            let mut c = Command::new("runuser");
            c.args(["-m", "-u", USER, "--", program]);
            c
        } else {
            Command::new(program)
        };
        c.env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", "wayland-1")
            .env_remove("DISPLAY");
        c
    }

    fn typed(&self) -> String {
        std::fs::read_to_string(&self.typed).unwrap()
    }

    pub fn set_clipboard(&self, text: &str) {
        let ok = self
            .cmd("wl-copy")
            .arg(text)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "wl-copy");
    }

    pub fn clipboard(&self) -> String {
        let out = self.cmd("wl-paste").arg("--no-newline").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Copies `data` as `mime` only (as an image viewer copies a picture).
    pub fn set_clipboard_data(&self, mime: &str, data: &[u8]) {
        use std::io::Write;
        let mut copy = self
            .cmd("wl-copy")
            .args(["--type", mime])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        copy.stdin.take().unwrap().write_all(data).unwrap();
        assert!(copy.wait().unwrap().success(), "wl-copy --type {mime}");
    }

    /// The MIME types the clipboard offers now.
    pub fn clipboard_types(&self) -> Vec<String> {
        let out = self.cmd("wl-paste").arg("--list-types").output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    pub fn clipboard_data(&self, mime: &str) -> Vec<u8> {
        self.cmd("wl-paste")
            .args(["--no-newline", "--type", mime])
            .output()
            .unwrap()
            .stdout
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

    /// `swaymsg ARGS` against this session's sway.
    pub fn swaymsg(&self, args: &[&str]) -> String {
        let sock = sway_ipc_socket(&self.runtime_dir).expect("sway's IPC socket");
        let out = self
            .cmd("swaymsg")
            .args(args)
            .env("SWAYSOCK", sock)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
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
        self.swaymsg(&["[app_id=foot]", "focus"]);
    }

    /// sway's and foot's logs, for a failure message.
    pub fn logs(&self) -> String {
        let base = self.runtime_dir.parent().unwrap();
        ["sway", "foot"]
            .iter()
            .map(|p| {
                let log =
                    std::fs::read_to_string(base.join(format!("{p}.log"))).unwrap_or_default();
                format!("--- {p} ---\n{log}")
            })
            .collect()
    }
}

/// `utter dictate --output paste` in the sway session, driven by `utter ptt`
/// (what a compositor key binding runs): the process, and `ptt(press|release)`.
pub fn dictate_in_sway<'a>(d: &'a Desktop, s: &Sway, dir: &Path) -> (Dictate, impl Fn(&str) + 'a) {
    let socket = d.runtime_dir.join("ptt-sway.sock");
    let pulse = format!("unix:{}", d.runtime_dir.join("pulse/native").display());
    let runtime = s.runtime_dir.to_string_lossy().into_owned();
    let socket_str = socket.to_string_lossy().into_owned();
    // The focused app's profile (foot pastes with Ctrl+Shift+V, like most
    // terminals) comes from sway's IPC, which names it.
    let sway_socket = sway_ipc_socket(&s.runtime_dir).expect("sway's IPC socket");
    let sway_socket = sway_socket.to_string_lossy().into_owned();
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
        .env("UTTER_MODELS_DIR", utter_core::paths::models_dir())
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
