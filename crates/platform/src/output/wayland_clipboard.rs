//! The whole Wayland clipboard kept across a paste: every MIME type the
//! previous owner offered (an image, `text/html`, a file list...) is copied
//! before we take the clipboard and offered again afterwards.
//!
//! Wayland keeps a clipboard's data in the app that copied it and hands it
//! over only on request, one type at a time, through a pipe; once our paste
//! replaces the selection, that app drops its offer. So the copy is made
//! first, through the data-control protocol (wlroots compositors, KDE) that
//! `wl-clipboard-rs` speaks, and the restored selection is served by its
//! background thread until another app copies something.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use wl_clipboard_rs::copy::{self, MimeSource, ServeRequests, Source};
use wl_clipboard_rs::paste::{self, ClipboardType, Seat};

/// Longest the whole copy may take: it is on the path from the key release
/// to the text, and an owner that never answers must not hold a paste up.
const SNAPSHOT_BUDGET: Duration = Duration::from_millis(1500);
/// The most we copy: a clipboard bigger than this (a huge image) is not kept.
const MAX_BYTES: usize = 64 << 20;

/// Why the clipboard could not be copied or given back.
#[derive(Debug, thiserror::Error)]
pub enum WaylandClipboardError {
    #[error("cannot read the Wayland clipboard: {0}")]
    Read(#[source] paste::Error),
    #[error("cannot offer the Wayland clipboard again: {0}")]
    Offer(#[source] copy::Error),
}

/// What the clipboard held before a paste, type by type, in the owner's
/// order, and the types that could not be copied (for the notice).
#[derive(Debug, Default)]
pub struct Snapshot {
    items: Vec<(String, Vec<u8>)>,
    lost: Vec<String>,
}

impl Snapshot {
    /// Copies every type the clipboard's owner offers. An empty clipboard is
    /// an empty snapshot, not an error.
    pub fn take() -> Result<Self, WaylandClipboardError> {
        let deadline = Instant::now() + SNAPSHOT_BUDGET;
        let types = match paste::get_mime_types_ordered(ClipboardType::Regular, Seat::Unspecified) {
            Ok(types) => types,
            Err(paste::Error::ClipboardEmpty | paste::Error::NoSeats) => return Ok(Self::default()),
            Err(e) => return Err(WaylandClipboardError::Read(e)),
        };
        let mut snapshot = Self::default();
        let mut bytes = 0usize;
        for mime in types {
            let left = MAX_BYTES.saturating_sub(bytes);
            match read_type(&mime, deadline, left) {
                Some(data) => {
                    bytes += data.len();
                    snapshot.items.push((mime, data));
                }
                None => snapshot.lost.push(mime),
            }
        }
        Ok(snapshot)
    }

    /// The types that could not be copied.
    pub fn lost(&self) -> &[String] {
        &self.lost
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The MIME types this snapshot offers, in order.
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.items.iter().map(|(mime, _)| mime.as_str())
    }

    /// Makes the copy the clipboard again, served from a background thread
    /// until another app copies something.
    pub fn restore(&self) -> Result<(), WaylandClipboardError> {
        let sources = self
            .items
            .iter()
            .map(|(mime, data)| MimeSource {
                source: Source::Bytes(data.clone().into_boxed_slice()),
                mime_type: copy::MimeType::Specific(mime.clone()),
            })
            .collect();
        let mut options = copy::Options::new();
        options
            .clipboard(copy::ClipboardType::Regular)
            .serve_requests(ServeRequests::Unlimited)
            // Exactly the types the owner offered, no text types added.
            .omit_additional_text_mime_types(true);
        options
            .copy_multi(sources)
            .map_err(WaylandClipboardError::Offer)
    }

    /// Whether the clipboard offers every type of this copy now (the restore
    /// can lose a race with a clipboard manager re-taking the selection).
    pub fn is_offered(&self) -> bool {
        let Ok(now) = paste::get_mime_types(ClipboardType::Regular, Seat::Unspecified) else {
            return false;
        };
        self.types().all(|mime| now.contains(mime))
    }
}

/// One type's data, or `None` when the owner does not deliver it within the
/// deadline or it would pass `limit` bytes.
fn read_type(mime: &str, deadline: Instant, limit: usize) -> Option<Vec<u8>> {
    let (pipe, _) = paste::get_contents(
        ClipboardType::Regular,
        Seat::Unspecified,
        paste::MimeType::Specific(mime),
    )
    .map_err(|e| tracing::debug!("clipboard type {mime} not read: {e}"))
    .ok()?;
    read_until(pipe, deadline, limit)
        .map_err(|why| tracing::debug!("clipboard type {mime} not kept: {why}"))
        .ok()
}

/// Reads `pipe` to its end, waiting in poll(2) so an owner that never writes
/// or never closes cannot hold us past `deadline`.
fn read_until(
    mut pipe: impl Read + AsRawFd,
    deadline: Instant,
    limit: usize,
) -> Result<Vec<u8>, &'static str> {
    let mut data = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("its owner was too slow");
        }
        let mut fds = [libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: one valid pollfd for a pipe we own for this call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, left.as_millis() as i32 + 1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err("the pipe failed");
        }
        if ready == 0 {
            continue; // the deadline check above ends it
        }
        match pipe.read(&mut chunk) {
            Ok(0) => return Ok(data),
            Ok(n) if data.len() + n > limit => return Err("it is too large"),
            Ok(n) => data.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err("the pipe failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_read_to_its_end() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let writing = std::thread::spawn(move || {
            use std::io::Write;
            writer.write_all(&vec![7u8; 200_000]).unwrap();
        });
        let data = read_until(reader, Instant::now() + Duration::from_secs(5), MAX_BYTES).unwrap();
        writing.join().unwrap();
        assert_eq!(data.len(), 200_000);
    }

    #[test]
    fn a_writer_that_never_closes_is_given_up_at_the_deadline() {
        let (reader, writer) = std::io::pipe().unwrap();
        let started = Instant::now();
        let result = read_until(
            reader,
            Instant::now() + Duration::from_millis(200),
            MAX_BYTES,
        );
        assert_eq!(result, Err("its owner was too slow"));
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(writer);
    }

    #[test]
    fn data_over_the_limit_is_not_kept() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let writing = std::thread::spawn(move || {
            use std::io::Write;
            let _ = writer.write_all(&[1u8; 10_000]);
        });
        let result = read_until(reader, Instant::now() + Duration::from_secs(5), 100);
        assert_eq!(result, Err("it is too large"));
        writing.join().unwrap();
    }
}
