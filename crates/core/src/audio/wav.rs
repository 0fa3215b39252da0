//! Incremental WAV recording: every dictation is written to disk as it is
//! captured, and the header is rewritten at least once a second, so a crash
//! or `kill -9` loses at most the last second of audio.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// 16 kHz mono 16-bit PCM: what the engine needs, at 32 kB/s.
fn spec() -> hound::WavSpec {
    hound::WavSpec {
        channels: 1,
        sample_rate: super::ENGINE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    }
}

/// A WAV file being written.
pub struct WavRecorder {
    path: PathBuf,
    writer: hound::WavWriter<BufWriter<File>>,
    last_flush: Instant,
    samples: u64,
}

impl WavRecorder {
    pub const FLUSH_EVERY: Duration = Duration::from_millis(500);

    pub fn create(path: &Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut writer = hound::WavWriter::create(path, spec()).map_err(std::io::Error::other)?;
        // The header reaches the disk now, so a full disk is found before
        // the user speaks, not at the first flush.
        writer.flush().map_err(std::io::Error::other)?;
        Ok(Self {
            path: path.to_path_buf(),
            writer,
            last_flush: Instant::now(),
            samples: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Samples written so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    pub fn duration_ms(&self) -> u64 {
        super::samples_to_ms(self.samples)
    }

    /// Appends 16 kHz mono audio; flushes (header included) when due.
    pub fn write(&mut self, pcm: &[f32]) -> std::io::Result<()> {
        for s in pcm {
            let v = (s.clamp(-1.0, 1.0) * i16::MAX as f32).round() as i16;
            self.writer.write_sample(v).map_err(std::io::Error::other)?;
        }
        self.samples += pcm.len() as u64;
        if self.last_flush.elapsed() >= Self::FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.last_flush = Instant::now();
        self.writer.flush().map_err(std::io::Error::other)
    }

    pub fn finish(self) -> std::io::Result<PathBuf> {
        self.writer.finalize().map_err(std::io::Error::other)?;
        Ok(self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushed_audio_is_readable_while_the_file_is_still_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.wav");
        let mut rec = WavRecorder::create(&path).unwrap();
        rec.write(&vec![0.25; 16_000]).unwrap();
        rec.flush().unwrap();
        rec.write(&vec![0.25; 800]).unwrap(); // not flushed yet
                                              // Another reader (as after a crash) sees the flushed second.
        let reader = hound::WavReader::open(&path).unwrap();
        assert_eq!(reader.duration(), 16_000);
        let first: i16 = reader.into_samples::<i16>().next().unwrap().unwrap();
        assert_eq!(first, (0.25 * i16::MAX as f32).round() as i16);
        std::mem::forget(rec); // like a kill: no finalize
    }
}
