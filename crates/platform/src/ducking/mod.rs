//! Other audio lowered while a dictation records (ducking): every other
//! program's playback stream turned down to a level, and given back after.
//! The volumes are written to disk before any is changed, so a crash
//! leaves nothing turned down for good: the next start puts them back
//! ([`restore_after_crash`]).
//!
//! Linux: the sound server's playback streams ("sink inputs"), through
//! PulseAudio's native protocol (PipeWire answers it through
//! pipewire-pulse). Utter's own streams (its sounds) are left alone, and a
//! meeting's capture is a recording stream, which this never touches.
//! macOS and Windows: not built yet; [`Ducker::lower`] says so.

#[cfg(target_os = "linux")]
mod pulse;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use utter_ports::other_audio::OtherAudio;

/// One stream turned down: its volumes before, and what Utter set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lowered {
    pub index: u32,
    pub name: String,
    /// Per channel, the sound server's raw volume (65536 = 100 %).
    pub before: Vec<u32>,
    pub set: Vec<u32>,
}

/// Why other audio could not be lowered or given back.
#[derive(Debug, thiserror::Error)]
pub enum DuckError {
    #[error("no sound server to ask (PulseAudio or PipeWire's pulse socket): {0}")]
    NoServer(String),
    #[error("the sound server: {0}")]
    Server(String),
    #[error("{}: {source}", path.display())]
    Journal {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("lowering other audio is not built for this system yet")]
    Unsupported,
}

/// Lowers the other programs' playback to `level` (0.0 mutes) and gives it back.
#[derive(Debug)]
pub struct Ducker {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    level: f32,
    journal: PathBuf,
    lowered: Vec<Lowered>,
}

/// Where the volumes before a duck are kept until they are given back.
pub fn journal_path() -> PathBuf {
    utter_base::paths::data_dir().join("ducked-volumes.json")
}

impl Ducker {
    pub fn new(level: f32, journal: PathBuf) -> Self {
        Self {
            level: level.clamp(0.0, 1.0),
            journal,
            lowered: Vec::new(),
        }
    }

    /// Turns every other playback stream down; the streams lowered.
    pub fn lower_streams(&mut self) -> Result<usize, DuckError> {
        if !self.lowered.is_empty() {
            return Ok(self.lowered.len());
        }
        #[cfg(target_os = "linux")]
        {
            let mut server = pulse::Server::connect()?;
            let own = std::process::id();
            let plan: Vec<Lowered> = server
                .playback_streams()?
                .into_iter()
                .filter(|s| s.volume_writable && s.pid != Some(own))
                .map(|s| Lowered {
                    index: s.index,
                    set: s
                        .volumes
                        .iter()
                        .map(|v| (*v as f32 * self.level).round() as u32)
                        .collect(),
                    before: s.volumes,
                    name: s.name,
                })
                .collect();
            if plan.is_empty() {
                return Ok(0);
            }
            // On disk first: a crash from here on is undone at the next start.
            write_journal(&self.journal, &plan)?;
            for stream in &plan {
                if let Err(e) = server.set_volume(stream.index, &stream.set) {
                    // Gone since the list (it ended): nothing to lower.
                    tracing::debug!(stream = stream.name, "not lowered: {e}");
                }
            }
            self.lowered = plan;
            Ok(self.lowered.len())
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(DuckError::Unsupported)
        }
    }

    /// Gives back what [`Self::lower_streams`] changed.
    pub fn restore_streams(&mut self) -> Result<(), DuckError> {
        if self.lowered.is_empty() {
            return Ok(());
        }
        let lowered = std::mem::take(&mut self.lowered);
        restore(&lowered)?;
        remove_journal(&self.journal)
    }
}

impl OtherAudio for Ducker {
    fn lower(&mut self) -> Result<usize, String> {
        self.lower_streams()
            .map_err(|e| format!("other audio could not be lowered: {e}"))
    }

    fn restore(&mut self) -> Result<(), String> {
        self.restore_streams().map_err(|e| {
            format!(
                "other audio could not be turned back up: {e} (it is restored at the next start)"
            )
        })
    }
}

impl Drop for Ducker {
    fn drop(&mut self) {
        if let Err(e) = self.restore_streams() {
            tracing::warn!("{e}");
        }
    }
}

/// Whether other audio can be lowered here, for `utter doctor`: the
/// sound server answers, and how many programs play now.
pub fn probe() -> Result<String, DuckError> {
    #[cfg(target_os = "linux")]
    {
        let playing = pulse::Server::connect()?.playback_streams()?.len();
        Ok(format!(
            "the sound server answers ({playing} playback stream(s) now): --duck PERCENT lowers them while recording"
        ))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(DuckError::Unsupported)
    }
}

/// Gives back the volumes a run that ended while ducking left turned down;
/// the streams restored.
pub fn restore_after_crash(journal: &Path) -> Result<usize, DuckError> {
    let text = match std::fs::read(journal) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(source) => {
            return Err(DuckError::Journal {
                path: journal.to_path_buf(),
                source,
            })
        }
    };
    let lowered: Vec<Lowered> = serde_json::from_slice(&text).unwrap_or_else(|e| {
        tracing::warn!("{}: unreadable ({e}); removed", journal.display());
        Vec::new()
    });
    let restored = restore(&lowered)?;
    remove_journal(journal)?;
    Ok(restored)
}

/// Sets each stream back where it still has the volume Utter set (one the
/// user turned meanwhile keeps theirs; one that ended is gone).
fn restore(lowered: &[Lowered]) -> Result<usize, DuckError> {
    if lowered.is_empty() {
        return Ok(0);
    }
    #[cfg(target_os = "linux")]
    {
        let mut server = pulse::Server::connect()?;
        let now = server.playback_streams()?;
        let mut restored = 0;
        for stream in lowered {
            let untouched = now
                .iter()
                .any(|s| s.index == stream.index && s.volumes == stream.set);
            if untouched && server.set_volume(stream.index, &stream.before).is_ok() {
                restored += 1;
            }
        }
        Ok(restored)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(DuckError::Unsupported)
    }
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn write_journal(path: &Path, lowered: &[Lowered]) -> Result<(), DuckError> {
    let err = |source| DuckError::Journal {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let text = serde_json::to_vec_pretty(lowered).expect("plain data");
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, text).map_err(err)?;
    std::fs::rename(&partial, path).map_err(err)
}

fn remove_journal(path: &Path) -> Result<(), DuckError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(DuckError::Journal {
            path: path.to_path_buf(),
            source,
        }),
    }
}
