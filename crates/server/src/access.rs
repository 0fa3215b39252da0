//! Who may use which door, beyond the API key (`auth`):
//!
//! - **MCP over HTTP** names files on this computer, so it is the one door
//!   that could read what its caller cannot (a confused deputy). Loopback is
//!   not "the same user": any local account, or a sandboxed app sharing the
//!   host's network, reaches it. So `/mcp` asks loopback callers for a
//!   per-user token kept in a 0600 file that only this user can read (as
//!   Jupyter does), and `transcribe_file` reads only under the folders the
//!   user named, opening the file without following links or blocking and
//!   checking what it opened.
//! - **Wyoming** has no keys in its protocol: off loopback it answers only
//!   the addresses the user listed ([`WyomingAllow`]), checked at accept.
//! - **Key files** must be private and long enough to guess at.

use std::fs::File;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use ipnet::IpNet;

/// The shortest API key accepted: a short key is guessed over a LAN.
pub const MIN_KEY_CHARS: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("the API key is {0} characters long; use at least {MIN_KEY_CHARS} (e.g. `openssl rand -hex 32`)")]
    ShortKey(usize),
    #[error("{} can be read by other users of this computer (mode {mode:o}): run `chmod 600 {}` and start again", path.display(), path.display())]
    KeyFileShared { path: PathBuf, mode: u32 },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the MCP token file {}: {source}", path.display())]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--mcp-folder {}: {source}", path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--mcp-folder {} is not a folder", .0.display())]
    NotAFolder(PathBuf),
}

/// Checks an API key's length.
pub fn check_key(key: &str) -> Result<(), AccessError> {
    let chars = key.chars().count();
    if chars < MIN_KEY_CHARS {
        return Err(AccessError::ShortKey(chars));
    }
    Ok(())
}

/// Reads a key file that only its owner may read (Unix: no group or other
/// permission bits), trimmed.
pub fn read_private_file(path: &Path) -> Result<String, AccessError> {
    let read_err = |source| AccessError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(read_err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(read_err)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(AccessError::KeyFileShared {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    // A key file is small: a huge file or a FIFO is not read to its end.
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(&file, 64 * 1024), &mut text)
        .map_err(read_err)?;
    Ok(text.trim().to_string())
}

/// The default place of the MCP token: in the user's data folder, which
/// other users cannot list.
pub fn default_token_file() -> PathBuf {
    utter_base::paths::data_dir().join("mcp-token")
}

/// The token in `path`, made (random, 256 bits, mode 0600) when there is
/// none. A token file others can read is replaced by a new private one.
pub fn load_or_create_token(path: &Path) -> Result<String, AccessError> {
    match read_private_file(path) {
        Ok(token) if token.len() >= 32 => return Ok(token),
        Err(AccessError::Read { source, .. }) if source.kind() != std::io::ErrorKind::NotFound => {
            return Err(AccessError::TokenFile {
                path: path.to_path_buf(),
                source,
            })
        }
        // Missing, too short or shared: a new one.
        _ => {}
    }
    let failed = |source| AccessError::TokenFile {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| failed(std::io::Error::other(e.to_string())))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    // Written beside it and renamed: a reader never sees half a token, and
    // the file is private from its first byte.
    let temp = path.with_extension("new");
    let _ = std::fs::remove_file(&temp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp).map_err(failed)?;
    file.write_all(token.as_bytes()).map_err(failed)?;
    file.sync_all().map_err(failed)?;
    std::fs::rename(&temp, path).map_err(failed)?;
    Ok(token)
}

/// The folders `transcribe_file` may read over HTTP, canonical.
#[derive(Debug, Clone, Default)]
pub struct AllowedFolders(Vec<PathBuf>);

impl AllowedFolders {
    pub fn new(folders: &[PathBuf]) -> Result<Self, AccessError> {
        let mut canonical = Vec::new();
        for folder in folders {
            let path = folder
                .canonicalize()
                .map_err(|source| AccessError::Folder {
                    path: folder.clone(),
                    source,
                })?;
            if !path.is_dir() {
                return Err(AccessError::NotAFolder(folder.clone()));
            }
            canonical.push(path);
        }
        Ok(Self(canonical))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn list(&self) -> &[PathBuf] {
        &self.0
    }

    /// Opens `path` for reading when it is a regular file under one of the
    /// folders: its real path (links resolved) must lie under one, the last
    /// step is opened without following a link and without blocking (a FIFO
    /// swapped in after the check cannot hold a thread), and the opened
    /// descriptor must be a regular file. The error says nothing of whether
    /// a path outside the folders exists.
    pub fn open(&self, path: &Path) -> Result<File, OpenRefused> {
        if !path.is_absolute() {
            return Err(OpenRefused::NotAllowed);
        }
        let real = path.canonicalize().map_err(|_| OpenRefused::NotAllowed)?;
        if !self.0.iter().any(|folder| real.starts_with(folder)) {
            return Err(OpenRefused::NotAllowed);
        }
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            libc::O_NOFOLLOW | libc::O_NONBLOCK,
        );
        let file = options.open(&real).map_err(|_| OpenRefused::NotAFile)?;
        let meta = file.metadata().map_err(|_| OpenRefused::NotAFile)?;
        if !meta.is_file() {
            return Err(OpenRefused::NotAFile);
        }
        Ok(file)
    }
}

/// Why `transcribe_file` over HTTP did not open a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenRefused {
    /// Outside the allowed folders, or not there (not told apart).
    NotAllowed,
    /// Inside, but not a regular file.
    NotAFile,
}

/// A path by which the engine's decoder reads an already opened file: the
/// checks above hold for what it reads, whatever happens to the name after.
#[cfg(target_os = "linux")]
pub fn path_of_open(file: &File, _checked: &Path) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

#[cfg(all(unix, not(target_os = "linux")))]
pub fn path_of_open(file: &File, _checked: &Path) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/dev/fd/{}", file.as_raw_fd()))
}

/// Windows has no path for a handle: the checked path itself (opened with
/// the checks above just before).
#[cfg(not(unix))]
pub fn path_of_open(_file: &File, checked: &Path) -> PathBuf {
    checked.to_path_buf()
}

/// Who may connect to Wyoming, which has no keys: always this computer;
/// off loopback only the networks the user listed (`--wyoming-allow`).
#[derive(Debug, Clone, Default)]
pub struct WyomingAllow(Vec<IpNet>);

impl WyomingAllow {
    pub fn new(nets: Vec<IpNet>) -> Self {
        Self(nets)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn admits(&self, peer: IpAddr) -> bool {
        let peer = match peer {
            // An IPv4 client on a dual-stack socket.
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            v4 => v4,
        };
        peer.is_loopback() || self.0.iter().any(|net| net.contains(&peer))
    }

    /// The rule as the startup line states it.
    pub fn describe(&self) -> String {
        if self.0.is_empty() {
            return "this computer only".into();
        }
        let nets: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        format!("no key; only {} and this computer", nets.join(", "))
    }
}

/// Parses `--wyoming-allow`: a network (`192.168.1.0/24`) or one address.
pub fn parse_net(text: &str) -> Result<IpNet, String> {
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| {
            format!("`{text}` is not an address or a network (e.g. 192.168.1.20 or 192.168.1.0/24)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wyoming_admits_this_computer_and_the_listed_networks_only() {
        let allow = WyomingAllow::new(vec![parse_net("192.168.1.0/24").unwrap()]);
        assert!(allow.admits("127.0.0.1".parse().unwrap()));
        assert!(allow.admits("::1".parse().unwrap()));
        assert!(allow.admits("192.168.1.77".parse().unwrap()));
        assert!(allow.admits("::ffff:192.168.1.77".parse().unwrap()));
        assert!(!allow.admits("192.168.2.1".parse().unwrap()));
        assert!(!allow.admits("10.0.0.1".parse().unwrap()));
        assert_eq!(parse_net("10.1.2.3").unwrap().to_string(), "10.1.2.3/32");
        assert!(parse_net("anyone").unwrap_err().contains("not an address"));
    }

    #[test]
    fn short_keys_and_shared_key_files_are_refused_with_the_fix() {
        assert!(check_key("short")
            .unwrap_err()
            .to_string()
            .contains("at least 16"));
        check_key("0123456789abcdef").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("key");
            std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err = read_private_file(&path).unwrap_err().to_string();
            assert!(err.contains("chmod 600"), "{err}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            assert_eq!(read_private_file(&path).unwrap(), "0123456789abcdef0123");
        }
    }

    #[test]
    fn the_token_is_made_private_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("mcp-token");
        let token = load_or_create_token(&path).unwrap();
        assert_eq!(token.len(), 64);
        assert_eq!(load_or_create_token(&path).unwrap(), token);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            // Made readable by others: replaced, not trusted.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert_ne!(load_or_create_token(&path).unwrap(), token);
        }
    }

    #[test]
    fn files_open_only_under_the_folders_and_only_regular_ones() {
        let root = tempfile::tempdir().unwrap();
        let allowed = root.path().join("allowed");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(allowed.join("a.wav"), b"RIFF").unwrap();
        std::fs::write(outside.join("secret.wav"), b"RIFF").unwrap();
        let folders = AllowedFolders::new(std::slice::from_ref(&allowed)).unwrap();
        assert!(folders.open(&allowed.join("a.wav")).is_ok());
        assert_eq!(
            folders.open(&outside.join("secret.wav")).unwrap_err(),
            OpenRefused::NotAllowed
        );
        // `..` and links out of the folder resolve to where they lead.
        let dotdot = allowed.join("..").join("outside").join("secret.wav");
        assert_eq!(folders.open(&dotdot).unwrap_err(), OpenRefused::NotAllowed);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.join("secret.wav"), allowed.join("link.wav"))
                .unwrap();
            assert_eq!(
                folders.open(&allowed.join("link.wav")).unwrap_err(),
                OpenRefused::NotAllowed
            );
            // A FIFO is refused at once, not waited on.
            let fifo = allowed.join("pipe.wav");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            assert_eq!(folders.open(&fifo).unwrap_err(), OpenRefused::NotAFile);
        }
        assert_eq!(folders.open(&allowed).unwrap_err(), OpenRefused::NotAFile);
        assert_eq!(
            folders.open(Path::new("relative.wav")).unwrap_err(),
            OpenRefused::NotAllowed
        );
    }
}
