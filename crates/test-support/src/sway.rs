//! A headless sway session (a wlroots Wayland compositor, no GPU, no
//! screen) for tests of what reaches Wayland apps, with the clipboard and
//! key tools a test reads and drives it with. sway refuses to run as root:
//! as root it runs as a throwaway system user, whose socket root may use.
//! Needs Debian's `sway` and `wl-clipboard`.
//!
//! ```no_run
//! use utter_test_support::sway::Sway;
//! let sway = Sway::start();
//! let mut editor = sway.cmd("mousepad");
//! // ... start it, sway.wait_for_window("PasteTarget", ...) ...
//! ```

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::desktop::{kill_when_tests_end, wait_until};

/// The user sway runs as when the tests run as root (sway will not).
const USER: &str = "utter-wl-test";

/// The Wayland display's name in the session's runtime directory.
pub const WAYLAND_DISPLAY: &str = "wayland-1";

pub struct Sway {
    session: Session,
    sway: Child,
    watchdog: Child,
}

/// Where the session lives and who runs in it.
struct Session {
    base: PathBuf,
    runtime_dir: PathBuf,
    home: PathBuf,
    root: bool,
}

impl Session {
    /// `program` as the session's user with its home, its output to
    /// `<program>.log`.
    fn spawn_as_session_user(&self, program: &str) -> Command {
        let mut c = if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", USER, "--", program]);
            c
        } else {
            Command::new(program)
        };
        // Its own process group: killing it ends the program `runuser` started too.
        crate::desktop::own_group(&mut c);
        c.env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", WAYLAND_DISPLAY)
            .env("HOME", &self.home)
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.log(program)).unwrap());
        c
    }

    fn log(&self, program: &str) -> PathBuf {
        self.base.join(format!("{program}.log"))
    }

    fn ipc_socket(&self) -> Option<PathBuf> {
        std::fs::read_dir(&self.runtime_dir)
            .ok()?
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains("sway-ipc"))
    }
}

fn running_as_root() -> bool {
    let id = Command::new("id").arg("-u").output().expect("id");
    String::from_utf8_lossy(&id.stdout).trim() == "0"
}

impl Sway {
    /// Starts sway on a 1280×720 headless output (software rendering, no
    /// XWayland) and waits for its Wayland socket and IPC socket.
    pub fn start() -> Self {
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let base = std::env::temp_dir().join(format!("utter-sway-{}-{n}", std::process::id()));
        let (runtime_dir, home) = (base.join("runtime"), base.join("home"));
        std::fs::create_dir_all(&runtime_dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let config = base.join("sway.conf");
        std::fs::write(
            &config,
            "output HEADLESS-1 resolution 1280x720\nxwayland disable\n",
        )
        .unwrap();
        let root = running_as_root();
        if root {
            create_session_user();
            for dir in [&base, &runtime_dir, &home] {
                let ok = Command::new("chown")
                    .arg(USER)
                    .arg(dir)
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "chown {USER} {}", dir.display());
            }
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&runtime_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let session = Session {
            base,
            runtime_dir,
            home,
            root,
        };
        let sway = session
            .spawn_as_session_user("sway")
            .arg("-c")
            .arg(&config)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .spawn()
            .expect("sway is installed (apt install sway)");
        let watchdog = kill_when_tests_end(&[sway.id()]);
        wait_until("sway's sockets", Duration::from_secs(15), || {
            session.runtime_dir.join(WAYLAND_DISPLAY).exists() && session.ipc_socket().is_some()
        });
        Sway {
            session,
            sway,
            watchdog,
        }
    }

    /// The session's `XDG_RUNTIME_DIR` (its Wayland and IPC sockets).
    pub fn runtime_dir(&self) -> &Path {
        &self.session.runtime_dir
    }

    /// A folder the session's user owns, for what its programs write.
    pub fn base(&self) -> &Path {
        &self.session.base
    }

    /// sway's IPC socket (`SWAYSOCK`).
    pub fn ipc_socket(&self) -> PathBuf {
        self.session.ipc_socket().expect("sway's IPC socket")
    }

    /// The variables that put a process in this session (and out of any X
    /// display), as a Wayland desktop's own programs have them.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("XDG_RUNTIME_DIR", self.runtime_dir().display().to_string()),
            ("WAYLAND_DISPLAY", WAYLAND_DISPLAY.to_string()),
            ("XDG_SESSION_TYPE", "wayland".to_string()),
            ("SWAYSOCK", self.ipc_socket().display().to_string()),
        ]
    }

    /// A command in this Wayland session, as the current user (root may
    /// use the session's sockets).
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env("WAYLAND_DISPLAY", WAYLAND_DISPLAY)
            .env_remove("DISPLAY");
        c
    }

    /// A command in this Wayland session run as the session's own user,
    /// for programs that refuse root in another user's session (Firefox),
    /// with the environment kept as it is set on the command (`runuser -m`).
    pub fn cmd_as_session_user(&self, program: &str) -> Command {
        let mut c = if self.session.root {
            let mut c = Command::new("runuser");
            c.args(["-m", "-u", USER, "--", program]);
            c
        } else {
            Command::new(program)
        };
        c.env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env("WAYLAND_DISPLAY", WAYLAND_DISPLAY)
            .env_remove("DISPLAY");
        c
    }

    /// A long-running program of the session (a terminal) as the
    /// session's user with its home, its output to `<program>.log`
    /// ([`Sway::logs`]).
    pub fn spawn_as_session_user(&self, program: &str) -> Command {
        self.session.spawn_as_session_user(program)
    }

    /// The logs of `programs` started with [`Sway::spawn_as_session_user`]
    /// (sway's always), for a failure message.
    pub fn logs(&self, programs: &[&str]) -> String {
        std::iter::once(&"sway")
            .chain(programs)
            .map(|p| {
                let log = std::fs::read_to_string(self.session.log(p)).unwrap_or_default();
                format!("--- {p} ---\n{log}")
            })
            .collect()
    }

    /// `swaymsg ARGS` against this session's sway; what it printed.
    pub fn swaymsg(&self, args: &[&str]) -> String {
        let out = self
            .cmd("swaymsg")
            .args(args)
            .env("SWAYSOCK", self.ipc_socket())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until a window whose app id or title contains `part` is mapped.
    pub fn wait_for_window(&self, part: &str, timeout: Duration) {
        wait_until(&format!("a window named {part} on sway"), timeout, || {
            self.swaymsg(&["-t", "get_tree"]).contains(part)
        });
    }

    /// Gives the keyboard focus to the window sway's `criteria` match
    /// (`app_id="foot"`, `title="PasteTarget"`: a regular expression).
    pub fn focus(&self, criteria: &str) {
        self.swaymsg(&[&format!("[{criteria}]"), "focus"]);
    }

    /// Copies `text` as the user would (wl-copy).
    pub fn set_clipboard(&self, text: &str) {
        self.set_clipboard_data("text/plain;charset=utf-8", text.as_bytes());
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
            .expect("wl-copy is installed (apt install wl-clipboard)");
        copy.stdin.take().unwrap().write_all(data).unwrap();
        assert!(copy.wait().unwrap().success(), "wl-copy --type {mime}");
    }

    /// The clipboard's text (wl-paste).
    pub fn clipboard(&self) -> String {
        let out = self.cmd("wl-paste").arg("--no-newline").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The types the clipboard offers.
    pub fn clipboard_types(&self) -> Vec<String> {
        let out = self.cmd("wl-paste").arg("--list-types").output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The clipboard's content as `mime`.
    pub fn clipboard_data(&self, mime: &str) -> Vec<u8> {
        self.cmd("wl-paste")
            .args(["--no-newline", "--type", mime])
            .output()
            .unwrap()
            .stdout
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        crate::desktop::kill_tree(&mut self.sway);
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
    }
}

/// The throwaway system user sway runs as under root.
fn create_session_user() {
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
        // Two test binaries may race to create it: either made it.
        assert!(
            ok || Command::new("id").arg(USER).status().unwrap().success(),
            "useradd {USER}"
        );
    }
}
