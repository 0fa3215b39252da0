//! Resumable, verified model downloads: streamed to `NAME.part`, resumed
//! with HTTP Range after a dropped connection or a restart, hashed while
//! streaming, renamed into place only when the sha256 matches. Mirrors are
//! tried in order; a stall, an HTTP error or wrong bytes moves to the next.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// One file to fetch.
#[derive(Debug, Clone)]
pub struct DownloadSpec {
    /// Tried in order.
    pub urls: Vec<String>,
    pub dest: PathBuf,
    pub size: u64,
    pub sha256: String,
}

#[derive(Debug, Clone)]
pub struct DownloadOptions {
    /// No byte for this long = stalled.
    pub stall_timeout: Duration,
    pub connect_timeout: Duration,
    /// Resume attempts per URL after a dropped connection.
    pub retries_per_url: u32,
    pub cancel: Arc<AtomicBool>,
}

impl Default for DownloadOptions {
    fn default() -> Self {
        Self {
            stall_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(15),
            retries_per_url: 3,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// Progress for bars and UIs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DownloadProgress {
    pub downloaded: u64,
    pub total: u64,
    pub bytes_per_sec: f64,
    pub eta: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("not enough disk space in {}: {needed} bytes needed, {available} available", dir.display())]
    NoSpace {
        dir: PathBuf,
        needed: u64,
        available: u64,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("download cancelled (the partial file is kept and will resume)")]
    Cancelled,
    #[error(
        "checksum mismatch: expected sha256 {expected}, got {got} (the download was discarded)"
    )]
    Checksum { expected: String, got: String },
    #[error("download failed from every source: {}", .0.join("; "))]
    AllSourcesFailed(Vec<String>),
}

/// Why one attempt at one URL stopped.
enum Attempt {
    /// The connection broke after some progress: resume from the same URL.
    Interrupted(String),
    /// This URL will not work (HTTP error, stall, wrong bytes): next URL.
    Failed(String),
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> DownloadError + '_ {
    move |source| DownloadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// `dest` + `.part`: where a download in progress (or paused) is kept.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    dest.with_file_name(name)
}

/// Downloads `spec.dest`; returns it once verified. A matching file already
/// in place is accepted as is.
pub fn download(
    spec: &DownloadSpec,
    options: &DownloadOptions,
    mut on_progress: impl FnMut(DownloadProgress),
) -> Result<PathBuf, DownloadError> {
    let dir = spec.dest.parent().unwrap_or(Path::new(".")).to_path_buf();
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let part = part_path(&spec.dest);
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let needed = spec.size.saturating_sub(have);
    let available = fs4::available_space(&dir).map_err(io_err(&dir))?;
    // Keep a little headroom: a full disk breaks everything else too.
    if available < needed + 64 * 1024 * 1024 {
        return Err(DownloadError::NoSpace {
            dir,
            needed,
            available,
        });
    }
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(options.connect_timeout)
        // The blocking client applies this to each phase and to every body
        // read: exactly a stall timeout, not a limit on the whole download.
        .timeout(options.stall_timeout)
        .user_agent(concat!("utter/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| DownloadError::AllSourcesFailed(vec![e.to_string()]))?;

    let mut failures = Vec::new();
    for url in &spec.urls {
        let mut tries = 0;
        loop {
            if options.cancel.load(Ordering::Relaxed) {
                return Err(DownloadError::Cancelled);
            }
            match attempt(&client, url, spec, &part, options, &mut on_progress)? {
                None => {
                    // Complete: verify the whole file.
                    let got = sha256_of(&part)?;
                    if got != spec.sha256 {
                        let _ = std::fs::remove_file(&part);
                        failures.push(format!("{url}: checksum mismatch (sha256 {got})"));
                        if spec.urls.len() == 1 {
                            return Err(DownloadError::Checksum {
                                expected: spec.sha256.clone(),
                                got,
                            });
                        }
                        break;
                    }
                    std::fs::rename(&part, &spec.dest).map_err(io_err(&spec.dest))?;
                    return Ok(spec.dest.clone());
                }
                Some(Attempt::Interrupted(why)) if tries < options.retries_per_url => {
                    tries += 1;
                    tracing::warn!(%url, %why, "download interrupted; resuming");
                    std::thread::sleep(Duration::from_millis(200 * tries as u64));
                }
                Some(Attempt::Interrupted(why)) | Some(Attempt::Failed(why)) => {
                    failures.push(format!("{url}: {why}"));
                    break;
                }
            }
        }
    }
    Err(DownloadError::AllSourcesFailed(failures))
}

fn sha256_of(path: &Path) -> Result<String, DownloadError> {
    let mut f = File::open(path).map_err(io_err(path))?;
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h).map_err(io_err(path))?;
    Ok(format!("{:x}", h.finalize()))
}

/// One GET, appending to `part`. `Ok(None)` = the part file is complete.
fn attempt(
    client: &reqwest::blocking::Client,
    url: &str,
    spec: &DownloadSpec,
    part: &Path,
    options: &DownloadOptions,
    on_progress: &mut impl FnMut(DownloadProgress),
) -> Result<Option<Attempt>, DownloadError> {
    let mut have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    if have > spec.size {
        have = 0; // not ours, or from another version: start over
    }
    if have == spec.size {
        return Ok(None);
    }
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let mut response = match request.send() {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return Ok(Some(Attempt::Failed(format!(
                "no response in {:?}",
                options.stall_timeout
            ))))
        }
        Err(e) => return Ok(Some(Attempt::Failed(e.to_string()))),
    };
    let status = response.status();
    let resuming = match status.as_u16() {
        206 if have > 0 => true,
        200 => false, // no Range support: start over
        416 => {
            let _ = std::fs::remove_file(part);
            return Ok(Some(Attempt::Interrupted(
                "server refused the resume offset; restarting".into(),
            )));
        }
        _ => return Ok(Some(Attempt::Failed(format!("HTTP {status}")))),
    };
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(part)
        .map_err(io_err(part))?;
    if resuming {
        file.seek(SeekFrom::Start(have)).map_err(io_err(part))?;
        file.set_len(have).map_err(io_err(part))?;
    } else {
        have = 0;
        file.set_len(0).map_err(io_err(part))?;
    }
    let started = Instant::now();
    let resumed_from = have;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if options.cancel.load(Ordering::Relaxed) {
            file.flush().map_err(io_err(part))?;
            return Err(DownloadError::Cancelled);
        }
        let n = match response.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                file.flush().map_err(io_err(part))?;
                // reqwest reports a read timeout as an io::Error wrapping its own timeout error.
                let stalled = e.kind() == std::io::ErrorKind::TimedOut
                    || e.get_ref()
                        .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
                        .is_some_and(reqwest::Error::is_timeout);
                return Ok(Some(if stalled {
                    Attempt::Failed(format!("stalled: no data for {:?}", options.stall_timeout))
                } else {
                    Attempt::Interrupted(e.to_string())
                }));
            }
        };
        if have + n as u64 > spec.size {
            let _ = std::fs::remove_file(part);
            return Ok(Some(Attempt::Failed(format!(
                "server sent more than the expected {} bytes",
                spec.size
            ))));
        }
        file.write_all(&buf[..n]).map_err(io_err(part))?;
        have += n as u64;
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        let rate = (have - resumed_from) as f64 / secs;
        on_progress(DownloadProgress {
            downloaded: have,
            total: spec.size,
            bytes_per_sec: rate,
            eta: (rate > 0.0).then(|| Duration::from_secs_f64((spec.size - have) as f64 / rate)),
        });
    }
    file.sync_all().map_err(io_err(part))?;
    if have < spec.size {
        return Ok(Some(Attempt::Interrupted(format!(
            "connection closed at {have} of {} bytes",
            spec.size
        ))));
    }
    Ok(None)
}
