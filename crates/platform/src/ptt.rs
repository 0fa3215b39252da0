//! `utter ptt press|release|toggle|cancel`: drive the running dictation
//! (`utter dictate` or the desktop app) over a local socket. This is how
//! Wayland users get push-to-talk: apps cannot grab keys there, but every
//! compositor can run a command on key press and release (sway `bindsym` +
//! `bindsym --release`, Hyprland `bind` + `bindr`, GNOME/KDE custom shortcuts
//! with `toggle`). Signals are not used: WebKitGTK uses SIGUSR1.
//!
//! Protocol: one line per connection (`press`), answered by one line (`ok` or
//! `error: ...`).

#[cfg(unix)]
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Sender;

use crate::control::{Control, TriggerKey};

#[derive(Debug, thiserror::Error)]
pub enum PttError {
    #[error("no running `utter dictate` or Utter app to talk to ({path}): start one first")]
    NotRunning { path: PathBuf },
    #[error("no running `utter dictate` or Utter app to talk to: {path} was left by one that ended; start one first")]
    Stale { path: PathBuf },
    #[error("the dictation listening on {path} did not answer within {} s: it is hung; end it (kill it) and start another", ANSWER_WITHIN.as_secs())]
    NoAnswer { path: PathBuf },
    #[error("another Utter dictation is already listening on {path}")]
    InUse { path: PathBuf },
    #[error("unknown ptt command `{0}` (expected press, release, toggle, start, stop, cancel, command-press or command-release)")]
    Unknown(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Refused(String),
    #[error("`utter ptt` needs Unix domain sockets; on Windows use the global hotkey")]
    Unsupported,
}

/// How long `utter ptt` waits for the running dictation's answer. A live one
/// answers in milliseconds (it only queues the command); one that does not
/// is hung, and a key binding must not hang with it.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(2);
/// How long the server gives a client to send its line and read the answer,
/// so a silent client cannot hold the accept loop (and shutdown) up.
#[cfg(unix)]
const CLIENT_WITHIN: Duration = Duration::from_secs(1);
/// How long dropping the server waits for its thread.
#[cfg(unix)]
const STOP_WITHIN: Duration = Duration::from_secs(1);

/// What a ptt command means to the service.
pub fn parse_command(command: &str) -> Result<Control, PttError> {
    let key = |pressed| Control::Key {
        key: TriggerKey::Main,
        pressed,
    };
    Ok(match command.trim() {
        "press" => key(true),
        "release" => key(false),
        "toggle" => Control::Toggle,
        "start" => Control::Start,
        "stop" => Control::Stop,
        "cancel" => Control::Cancel,
        // AI command mode's key, for desktops without global hotkeys.
        "command-press" => Control::Key {
            key: TriggerKey::Command,
            pressed: true,
        },
        "command-release" => Control::Key {
            key: TriggerKey::Command,
            pressed: false,
        },
        other => return Err(PttError::Unknown(other.to_string())),
    })
}

/// The socket's path: `UTTER_PTT_SOCKET`, else the user's runtime directory.
pub fn socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os("UTTER_PTT_SOCKET") {
        return PathBuf::from(p);
    }
    let dir = dirs::runtime_dir().unwrap_or_else(std::env::temp_dir);
    dir.join(format!("utter-ptt-{}.sock", user_tag()))
}

fn user_tag() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "user".into())
}

/// Where the server sends what it hears; swapped when the service restarts.
pub type PttTarget = Arc<Mutex<Option<Sender<Control>>>>;

/// Sends one command to the running dictation; returns its answer.
#[cfg(unix)]
pub fn send(command: &str) -> Result<(), PttError> {
    send_at(socket_path(), command)
}

#[cfg(unix)]
fn send_at(path: PathBuf, command: &str) -> Result<(), PttError> {
    use std::os::unix::net::UnixStream;
    parse_command(command)?;
    let mut stream = UnixStream::connect(&path).map_err(|e| {
        let path = path.clone();
        match e.kind() {
            // A socket file nobody listens on: its owner died without removing it.
            std::io::ErrorKind::ConnectionRefused => PttError::Stale { path },
            _ => PttError::NotRunning { path },
        }
    })?;
    let io = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            PttError::NoAnswer { path: path.clone() }
        }
        _ => PttError::Io {
            path: path.clone(),
            source,
        },
    };
    stream.set_read_timeout(Some(ANSWER_WITHIN)).map_err(io)?;
    stream.set_write_timeout(Some(ANSWER_WITHIN)).map_err(io)?;
    writeln!(stream, "{}", command.trim()).map_err(io)?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).map_err(io)?;
    match answer.trim() {
        "ok" => Ok(()),
        // Closed without a word: it is going away (or crashed on it).
        "" => Err(PttError::NoAnswer { path }),
        other => Err(PttError::Refused(
            other.strip_prefix("error: ").unwrap_or(other).to_string(),
        )),
    }
}

#[cfg(not(unix))]
pub fn send(_command: &str) -> Result<(), PttError> {
    Err(PttError::Unsupported)
}

/// Listens on the socket until dropped.
#[cfg_attr(not(unix), allow(dead_code))]
pub struct PttServer {
    path: PathBuf,
    target: PttTarget,
    #[cfg(unix)]
    thread: Option<std::thread::JoinHandle<()>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl PttServer {
    #[cfg(unix)]
    pub fn start() -> Result<Self, PttError> {
        Self::start_at(socket_path())
    }

    #[cfg(unix)]
    fn start_at(path: PathBuf) -> Result<Self, PttError> {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::net::{UnixListener, UnixStream};
        use std::sync::atomic::Ordering;
        let io = |source| PttError::Io {
            path: path.clone(),
            source,
        };
        let listener = match UnixListener::bind(&path) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                if UnixStream::connect(&path).is_ok() {
                    return Err(PttError::InUse { path: path.clone() });
                }
                // Left behind by a process that died: take it over.
                std::fs::remove_file(&path).map_err(io)?;
                UnixListener::bind(&path).map_err(io)?
            }
            Err(e) => return Err(io(e)),
        };
        // Only this user may drive the dictation: the socket is user-only
        // (it may sit in a shared temp dir where there is no runtime dir),
        // and each connection's peer is checked too.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        let target: PttTarget = Arc::default();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (thread_target, thread_stop) = (target.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("utter-ptt".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if thread_stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &thread_target);
                    }
                }
            })
            .map_err(io)?;
        Ok(Self {
            path,
            target,
            thread: Some(thread),
            stop,
        })
    }

    #[cfg(not(unix))]
    pub fn start() -> Result<Self, PttError> {
        Err(PttError::Unsupported)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Commands go to `control` from now on (`None`: refused, nothing running).
    pub fn set_target(&self, control: Option<Sender<Control>>) {
        *self.target.lock().unwrap_or_else(|e| e.into_inner()) = control;
    }
}

#[cfg(unix)]
fn serve(stream: std::os::unix::net::UnixStream, target: &PttTarget) {
    // A client that connects and then says nothing must not hold the loop.
    let _ = stream.set_read_timeout(Some(CLIENT_WITHIN));
    let _ = stream.set_write_timeout(Some(CLIENT_WITHIN));
    if !peer_is_this_user(&stream) {
        let _ = writeln!(&stream, "error: this dictation belongs to another user");
        return;
    }
    let mut line = String::new();
    let mut reader = BufReader::new(&stream);
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let answer = match parse_command(&line) {
        Ok(control) => match &*target.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(tx) if tx.send(control).is_ok() => "ok".to_string(),
            _ => "error: dictation is not running (no model loaded yet?)".to_string(),
        },
        Err(e) => format!("error: {e}"),
    };
    let _ = writeln!(&stream, "{answer}");
}

/// The connecting process runs as this user (SO_PEERCRED).
#[cfg(target_os = "linux")]
fn peer_is_this_user(stream: &std::os::unix::net::UnixStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, which is a ucred.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    // SAFETY: getuid has no preconditions.
    rc == 0 && cred.uid == unsafe { libc::getuid() }
}

/// The connecting process runs as this user (getpeereid, macOS and the BSDs).
#[cfg(all(unix, not(target_os = "linux")))]
fn peer_is_this_user(stream: &std::os::unix::net::UnixStream) -> bool {
    use std::os::fd::AsRawFd;
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: getpeereid writes two ids through valid pointers.
    let rc = unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) };
    // SAFETY: getuid has no preconditions.
    rc == 0 && uid == unsafe { libc::getuid() }
}

impl Drop for PttServer {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
            // Wake the accept loop so it sees the flag.
            let _ = std::os::unix::net::UnixStream::connect(&self.path);
            // Gone before any wait: a later `utter ptt` is told nothing runs.
            let _ = std::fs::remove_file(&self.path);
            if let Some(t) = self.thread.take() {
                crate::threads::join_within(t, STOP_WITHIN, "the ptt socket's thread");
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn commands_reach_the_target_and_a_stale_socket_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ptt.sock");
        // SAFETY of the env change: only this test in this binary sets it.
        std::env::set_var("UTTER_PTT_SOCKET", &path);
        assert!(matches!(send("press"), Err(PttError::NotRunning { .. })));
        std::fs::write(&path, "").unwrap(); // a stale file where the socket goes
        let server = PttServer::start().unwrap();
        assert!(
            matches!(send("press"), Err(PttError::Refused(m)) if m.contains("not running")),
            "no target yet"
        );
        let (tx, rx) = crossbeam_channel::unbounded();
        server.set_target(Some(tx));
        send("press").unwrap();
        send("release").unwrap();
        send("toggle").unwrap();
        send("cancel").unwrap();
        let got: Vec<Control> = rx.try_iter().collect();
        assert_eq!(
            got,
            vec![
                Control::Key {
                    key: TriggerKey::Main,
                    pressed: true
                },
                Control::Key {
                    key: TriggerKey::Main,
                    pressed: false
                },
                Control::Toggle,
                Control::Cancel
            ]
        );
        assert!(matches!(send("jump"), Err(PttError::Unknown(c)) if c == "jump"));
        assert!(matches!(PttServer::start(), Err(PttError::InUse { .. })));
        drop(server);
        assert!(!path.exists(), "the socket is removed on exit");
    }

    #[test]
    fn a_hung_or_dead_instance_is_named_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ptt.sock");
        // Listening, never answering: connect succeeds (the backlog), nothing more.
        let hung = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let asked = std::time::Instant::now();
        let err = send_at(path.clone(), "press").unwrap_err();
        assert!(matches!(err, PttError::NoAnswer { .. }), "{err}");
        assert!(err.to_string().contains("hung"), "{err}");
        assert!(asked.elapsed() < ANSWER_WITHIN + Duration::from_secs(2));
        // Its process died: the socket file stays, nobody listens.
        drop(hung);
        let err = send_at(path.clone(), "press").unwrap_err();
        assert!(matches!(err, PttError::Stale { .. }), "{err}");
        assert!(err.to_string().contains("left by one that ended"), "{err}");
    }

    #[test]
    fn a_silent_client_does_not_hold_up_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ptt.sock");
        let server = PttServer::start_at(path.clone()).unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        server.set_target(Some(tx));
        let _silent = std::os::unix::net::UnixStream::connect(&path).unwrap();
        send_at(path.clone(), "toggle").unwrap();
        assert_eq!(rx.try_recv(), Ok(Control::Toggle));
        let dropped = std::time::Instant::now();
        drop(server);
        assert!(dropped.elapsed() < Duration::from_secs(2));
        assert!(!path.exists());
    }

    #[test]
    fn the_socket_is_user_only_and_answers_its_own_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ptt.sock");
        let server = PttServer::start_at(path.clone()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
        // This user passes the peer check (and is told nothing is running).
        let mut stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
        writeln!(stream, "press").unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        assert!(answer.contains("dictation is not running"), "{answer}");
        drop(server);
        assert!(!path.exists());
    }

    /// Another user (`nobody`, through runuser: needs root, as CI runs) is
    /// kept out twice: by the socket's mode, and, were the socket opened up,
    /// by the peer check.
    #[test]
    fn another_user_is_refused() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("another_user_is_refused: not run (acting as another user needs root)");
            return;
        }
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().join("ptt.sock");
        let server = PttServer::start_at(path.clone()).unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        server.set_target(Some(tx));
        let as_nobody = || {
            let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", e.strerror)
    sys.exit()
try:
    s.sendall(b"press\n")
except OSError:
    pass  # the server may answer and close before reading
print(s.makefile().readline().strip())
"#;
            let out = std::process::Command::new("runuser")
                .args(["-u", "nobody", "--", "python3", "-c", script])
                .arg(&path)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr)
        };
        let answer = as_nobody();
        assert!(answer.contains("connect: Permission denied"), "{answer}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let answer = as_nobody();
        assert!(answer.contains("belongs to another user"), "{answer}");
        assert!(rx.try_recv().is_err(), "nothing reached the dictation");
    }
}
