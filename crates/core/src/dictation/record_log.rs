//! Recordings on disk and what became of them. Each dictation's WAV gets a
//! JSON sidecar once its text is delivered (or it was cancelled); a WAV
//! without one is a dictation that never finished, which the next start
//! transcribes.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordingStatus {
    Delivered,
    Cancelled,
    Recovered,
    NoSpeech,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordingRecord {
    pub status: RecordingStatus,
    pub text: String,
    pub model: String,
    pub audio_ms: u64,
    pub finished_unix_ms: u64,
}

pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A new, unique recording path.
pub fn new_recording_path(dir: &Path) -> PathBuf {
    let mut ms = unix_ms();
    loop {
        let p = dir.join(format!("dictation-{ms}.wav"));
        if !p.exists() {
            return p;
        }
        ms += 1;
    }
}

fn sidecar(wav: &Path) -> PathBuf {
    wav.with_extension("json")
}

/// Records the outcome next to the WAV (atomically). When the sidecar cannot
/// be written (a full disk), the WAV goes instead: its outcome is settled, and
/// a WAV without a sidecar would be transcribed again at every start. The
/// sidecar is then tried once more in the space that freed. `Err` says the
/// audio was not kept.
pub fn write_record(wav: &Path, record: &RecordingRecord) -> std::io::Result<()> {
    let Err(e) = write_sidecar(wav, record) else {
        return Ok(());
    };
    let _ = std::fs::remove_file(wav.with_extension("json.tmp"));
    match std::fs::remove_file(wav) {
        Ok(()) => tracing::warn!(
            "{}: its outcome cannot be recorded ({e}); the audio was deleted so it is not transcribed again",
            wav.display()
        ),
        Err(gone) if gone.kind() == std::io::ErrorKind::NotFound => {}
        Err(stuck) => tracing::error!(
            "{}: its outcome cannot be recorded ({e}) nor the audio deleted ({stuck}): it will be transcribed again at the next start",
            wav.display()
        ),
    }
    let _ = write_sidecar(wav, record);
    Err(e)
}

fn write_sidecar(wav: &Path, record: &RecordingRecord) -> std::io::Result<()> {
    let tmp = wav.with_extension("json.tmp");
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(record).expect("serialisable"),
    )?;
    std::fs::rename(tmp, sidecar(wav))
}

/// WAVs whose dictation never finished, oldest first.
pub fn unfinished(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wav") && !sidecar(p).exists())
        .collect();
    out.sort();
    out
}

/// Keeps the newest `keep` finished recordings' audio; older WAVs are deleted
/// (their sidecars, with the text, stay).
pub fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut finished: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wav") && sidecar(p).exists())
        .collect();
    finished.sort();
    let excess = finished.len().saturating_sub(keep);
    for p in finished.into_iter().take(excess) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_recordings_are_those_without_a_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("dictation-1.wav");
        let b = dir.path().join("dictation-2.wav");
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(&b, b"x").unwrap();
        let record = RecordingRecord {
            status: RecordingStatus::Delivered,
            text: "hi".into(),
            model: "m".into(),
            audio_ms: 1,
            finished_unix_ms: 1,
        };
        write_record(&a, &record).unwrap();
        assert_eq!(unfinished(dir.path()), vec![b.clone()]);
        write_record(&b, &record).unwrap();
        prune(dir.path(), 1);
        assert!(!a.exists() && b.exists(), "oldest audio pruned");
        assert!(
            dir.path().join("dictation-1.json").exists(),
            "its text is kept"
        );
    }

    #[test]
    fn a_sidecar_that_cannot_be_written_removes_the_audio_so_it_is_not_transcribed_again() {
        let dir = tempfile::tempdir().unwrap();
        let wav = dir.path().join("dictation-1.wav");
        std::fs::write(&wav, b"x").unwrap();
        // A directory where the sidecar's temp file goes: every write fails.
        std::fs::create_dir(wav.with_extension("json.tmp")).unwrap();
        let record = RecordingRecord {
            status: RecordingStatus::Delivered,
            text: "hi".into(),
            model: "m".into(),
            audio_ms: 1,
            finished_unix_ms: 1,
        };
        assert!(
            write_record(&wav, &record).is_err(),
            "the audio was not kept"
        );
        assert!(!wav.exists());
        assert!(unfinished(dir.path()).is_empty());
    }
}
