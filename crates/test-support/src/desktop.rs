//! A throwaway desktop session for tests that end it on purpose: an Xvfb X
//! server and a PulseAudio sound server with a virtual microphone (the recipe
//! of `/work/shared/headless-linux.md`), each owned by the test and killable
//! on its own (what a logout or a crashed compositor does). Unix only; the
//! programs come from Debian's `xvfb`, `x11-utils` and `pulseaudio-utils`.
//!
//! ```no_run
//! use utter_test_support::desktop::{Display, SoundServer};
//! let display = Display::start();
//! let sound = SoundServer::start(std::path::Path::new("/tmp/runtime"));
//! // ... run the program under test with display.name() and sound.runtime_dir() ...
//! drop(display); // the X server goes away
//! ```

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Polls `ok` every 50 ms until it holds; panics naming `what` after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A program the test started, killed (and reaped) when dropped, with its
/// process group when it leads one ([`own_group`]): a browser's helpers, or
/// the program `runuser` started, go with it.
pub struct KilledOnDrop(pub Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        kill_tree(&mut self.0);
    }
}

/// Starts `command`'s program in a process group of its own, so that
/// [`kill_tree`] (and [`kill_when_tests_end`]) end what it starts too:
/// Firefox's and Chromium's helper processes, sway under `runuser`. Without
/// it they outlived the tests, adopted by init.
pub fn own_group(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    command.process_group(0)
}

/// SIGKILLs `child`'s process group (when it leads one) and `child`, and
/// reaps it.
pub fn kill_tree(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// A shell that kills `pids` (and the process groups they lead) once this
/// test process is gone: a test that panics (or a static that is never
/// dropped) leaves no server behind.
pub fn kill_when_tests_end(pids: &[u32]) -> Child {
    let pids: Vec<String> = pids
        .iter()
        .flat_map(|p| [format!("-{p}"), p.to_string()])
        .collect();
    let script = format!(
        "while kill -0 {} 2>/dev/null; do sleep 1; done; kill -- {} 2>/dev/null",
        std::process::id(),
        pids.join(" ")
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sh")
}

/// SIGKILLs `child` (as a crash would) and reaps it.
fn kill(child: &mut Child, watchdog: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
    let _ = watchdog.kill();
    let _ = watchdog.wait();
}

/// Whether X display `n` can be taken: no lock file, or one left by a server
/// that is gone (a killed run leaves them; hundreds once filled the whole
/// range), whose lock and socket are then removed.
fn display_number_is_free(n: u32) -> bool {
    let lock = format!("/tmp/.X{n}-lock");
    let socket = format!("/tmp/.X11-unix/X{n}");
    match std::fs::read_to_string(&lock) {
        Ok(text) => {
            let alive = text.trim().parse::<u32>().map(alive).unwrap_or(true); // not a pid: leave it alone
            if alive {
                return false;
            }
            let _ = std::fs::remove_file(&lock);
            let _ = std::fs::remove_file(&socket);
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => !Path::new(&socket).exists(),
        Err(_) => false,
    }
}

/// An Xvfb X server on a display number nobody uses. Dropping it (or
/// [`Display::kill`]) kills the server: every client loses its connection.
pub struct Display {
    name: String,
    xvfb: Child,
    watchdog: Child,
}

impl Display {
    pub fn start() -> Self {
        // Free numbers only (no live server's lock, no socket); spread by pid
        // so test binaries running side by side rarely race for one.
        for n in (0..400).map(|i| (i + std::process::id() % 300) % 400 + 420) {
            if !display_number_is_free(n) {
                continue;
            }
            let name = format!(":{n}");
            let mut xvfb = Command::new("Xvfb")
                .args([&name, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("Xvfb is installed (apt install xvfb)");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = xvfb.try_wait() {
                    break; // lost the race for this number: try the next
                }
                let up = Command::new("xdpyinfo")
                    .env("DISPLAY", &name)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                // Ours must still run: one that lost the number to a server
                // started at the same instant exits, and xdpyinfo then
                // answered for the other one, which goes with its test.
                if up && matches!(xvfb.try_wait(), Ok(None)) {
                    let watchdog = kill_when_tests_end(&[xvfb.id()]);
                    return Self {
                        name,
                        xvfb,
                        watchdog,
                    };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = xvfb.kill();
            let _ = xvfb.wait();
        }
        panic!("no free X display number");
    }

    /// The value for `DISPLAY`, e.g. `:421`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Kills the X server (SIGKILL: no goodbye to its clients) and waits for it.
    pub fn kill(&mut self) {
        kill(&mut self.xvfb, &mut self.watchdog);
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A PulseAudio server whose default source `vmic` plays what
/// [`SoundServer::play`] is given (the virtual microphone), in its own
/// `XDG_RUNTIME_DIR`. Dropping it (or [`SoundServer::kill`]) kills it.
pub struct SoundServer {
    runtime_dir: PathBuf,
    pulse: Child,
    watchdog: Child,
}

impl SoundServer {
    /// Starts it with `runtime_dir` (created, mode 700) as its runtime dir.
    pub fn start(runtime_dir: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(runtime_dir).expect("the runtime dir");
        std::fs::set_permissions(runtime_dir, std::fs::Permissions::from_mode(0o700))
            .expect("chmod 700");
        let pulse = Command::new("pulseaudio")
            .args([
                "--daemonize=no",
                "--exit-idle-time=-1",
                "--disallow-exit",
                "-n",
                "--load=module-native-protocol-unix auth-anonymous=1",
                "--load=module-null-sink sink_name=vspk",
                // norewinds: without it the start of a playback can vanish.
                "--load=module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1",
                "--load=module-remap-source master=vmic_sink.monitor source_name=vmic",
                "--load=module-always-sink",
            ])
            .env("XDG_RUNTIME_DIR", runtime_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pulseaudio is installed");
        let watchdog = kill_when_tests_end(&[pulse.id()]);
        let me = Self {
            runtime_dir: runtime_dir.to_path_buf(),
            pulse,
            watchdog,
        };
        wait_until("PulseAudio", Duration::from_secs(10), || {
            me.pactl(&["info"])
        });
        assert!(me.pactl(&["set-default-source", "vmic"]));
        assert!(me.pactl(&["set-default-sink", "vspk"]));
        me
    }

    fn pactl(&self, args: &[&str]) -> bool {
        Command::new("pactl")
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// The `XDG_RUNTIME_DIR` its clients need.
    pub fn runtime_dir(&self) -> &Path {
        &self.runtime_dir
    }

    /// Starts playing `wav` into the virtual microphone.
    pub fn play(&self, wav: &Path) -> Child {
        self.play_on("vmic_sink", wav)
    }

    /// Starts playing `wav` on the default output, `vspk` (what a call's
    /// other side comes out of; its monitor `vspk.monitor` records it).
    pub fn play_to_speakers(&self, wav: &Path) -> Child {
        self.play_on("vspk", wav)
    }

    /// Removes the output `sink` (as when a headset is unplugged): streams
    /// recording its monitor lose their source.
    pub fn unplug(&self, sink: &str) {
        let modules = Command::new("pactl")
            .args(["list", "short", "modules"])
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .output()
            .expect("pactl");
        let listing = String::from_utf8_lossy(&modules.stdout);
        let id = listing
            .lines()
            .find(|l| l.contains(&format!("sink_name={sink}")))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no module made {sink}:\n{listing}"));
        assert!(self.pactl(&["unload-module", id]), "unload {sink}");
    }

    fn play_on(&self, sink: &str, wav: &Path) -> Child {
        Command::new("paplay")
            .args(["--latency-msec=200", &format!("--device={sink}")])
            .arg(wav)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .stdin(Stdio::null())
            .spawn()
            .expect("paplay is installed")
    }

    /// Kills the sound server (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        kill(&mut self.pulse, &mut self.watchdog);
    }
}

impl Drop for SoundServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The pids of `parent`'s children whose command line contains `pattern`.
pub fn children_matching(parent: u32, pattern: &str) -> Vec<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &parent.to_string(), "-f", "--", pattern])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Whether process `pid` still exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// A small real PNG (ImageMagick's gradient, written in `dir`), as the
/// image a user copied.
pub fn png(dir: &Path) -> Vec<u8> {
    let path = dir.join("copied.png");
    let status = Command::new("convert")
        .args(["-size", "64x48", "gradient:red-blue"])
        .arg(&path)
        .status()
        .expect("ImageMagick is installed (apt install imagemagick)");
    assert!(status.success(), "convert made {}", path.display());
    std::fs::read(path).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock left by a server that is gone frees its number; a live one does not.
    #[test]
    fn a_dead_servers_lock_frees_its_display_number() {
        let n = 4000 + std::process::id() % 1000; // outside the range tests use
        let lock = format!("/tmp/.X{n}-lock");
        std::fs::write(&lock, format!("{:>10}\n", std::process::id())).unwrap();
        assert!(!display_number_is_free(n), "our own pid is alive");
        std::fs::write(&lock, format!("{:>10}\n", u32::MAX - 1)).unwrap();
        assert!(display_number_is_free(n));
        assert!(!Path::new(&lock).exists(), "the stale lock is removed");
        assert!(display_number_is_free(n), "no lock, no socket: free");
    }
}
