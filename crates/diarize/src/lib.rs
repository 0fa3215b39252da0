//! Speaker diarization: who spoke when in a 16 kHz mono recording, in plain Rust.
//!
//! Pipeline (module by module, in order):
//! 1. [`segmentation`]: pyannote's segmentation-3.0 over sliding 10 s windows gives, per
//!    16.9 ms frame, which of up to three *local* speakers talk (overlap included).
//! 2. [`fbank`] + [`campplus`]: a CAM++ embedding per local speaker per window, from the
//!    frames where that speaker talks alone.
//! 3. [`cluster`]: agglomerative clustering (cosine, average linkage) across the whole
//!    recording makes local speakers global.
//! 4. `pipeline`: per-frame global activity and the turns, speakers numbered by first
//!    appearance.
//!
//! [`der`] scores a result against a reference (diarization error rate), and [`echo`]
//! finds where a microphone only hears the loudspeaker. The weights come from PyTorch
//! checkpoints read by [`checkpoint`] without Python; nothing here touches the network or
//! a device. What it does not do: voice activity outside the segmentation model, speaker
//! names, or overlap-aware transcription.

pub mod campplus;
mod checkpoint;
pub mod cluster;
pub mod der;
pub mod echo;
mod error;
pub mod fbank;
mod ops;
mod pipeline;
pub mod segmentation;

use std::path::Path;

pub use error::DiarizeError;

/// The two networks, loaded once and shared by any number of diarizations.
pub struct SpeakerModels {
    segmentation: segmentation::Segmentation,
    embedding: campplus::CamPlus,
}

impl SpeakerModels {
    /// Loads pyannote segmentation-3.0 (`pytorch_model.bin`) and CAM++
    /// (`campplus_cn_en_common.pt`); every tensor's shape is checked.
    pub fn load(segmentation: &Path, embedding: &Path) -> Result<Self, DiarizeError> {
        Ok(Self {
            segmentation: segmentation::Segmentation::load(segmentation)?,
            embedding: campplus::CamPlus::load(embedding)?,
        })
    }
}

/// How to diarize; [`Default`] is what the tests and benchmarks measured.
#[derive(Debug, Clone)]
pub struct DiarizeOptions {
    /// Seconds between the starts of two 10 s windows.
    pub step_s: f32,
    /// Cosine distance under which two speaker clusters merge.
    pub threshold: f32,
    /// Bounds on the number of speakers, when the caller knows them.
    pub min_speakers: Option<usize>,
    pub max_speakers: Option<usize>,
    /// Embeddings from fewer filterbank frames (10 ms each) only join clusters.
    pub min_cluster_frames: usize,
    /// Pauses shorter than this inside one speaker's speech are bridged.
    pub min_gap_s: f32,
    /// Turns shorter than this are dropped.
    pub min_turn_s: f32,
    /// Windows analysed at once (one thread each).
    pub threads: usize,
}

impl Default for DiarizeOptions {
    fn default() -> Self {
        Self {
            step_s: 2.5,
            threshold: 0.5,
            min_speakers: None,
            max_speakers: None,
            min_cluster_frames: 150,
            min_gap_s: 0.0,
            min_turn_s: 0.0,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl DiarizeOptions {
    fn validate(&self) -> Result<(), DiarizeError> {
        let bad = |m: &str| Err(DiarizeError::InvalidOptions(m.into()));
        if !(self.step_s > 0.0 && self.step_s <= 10.0) {
            return bad("step_s must be in (0, 10]");
        }
        if !(self.threshold >= 0.0 && self.threshold <= 2.0) {
            return bad("threshold must be in [0, 2]");
        }
        if let (Some(lo), Some(hi)) = (self.min_speakers, self.max_speakers) {
            if lo > hi {
                return bad("min_speakers is above max_speakers");
            }
        }
        if self.max_speakers == Some(0) {
            return bad("max_speakers must be at least 1");
        }
        Ok(())
    }
}

/// One speaker's stretch of speech; turns of different speakers may overlap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeakerTurn {
    pub start_s: f64,
    pub end_s: f64,
    /// 0 for the first speaker heard, 1 for the next new voice, …
    pub speaker: usize,
}

/// 16 kHz mono audio the pipeline reads a window at a time, in order: a recording of
/// hours need not be held (a file read where asked), only each ten-second window.
pub trait AudioSource {
    /// Samples in all.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `n` samples from `start` (never past `len`).
    fn read(&mut self, start: usize, n: usize) -> Vec<f32>;
}

impl AudioSource for &[f32] {
    fn len(&self) -> usize {
        <[f32]>::len(self)
    }

    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        self[start..start + n].to_vec()
    }
}

/// Diarizes `pcm_16k_mono`; turns are sorted by start.
pub fn diarize(
    models: &SpeakerModels,
    pcm_16k_mono: &[f32],
    opts: &DiarizeOptions,
) -> Result<Vec<SpeakerTurn>, DiarizeError> {
    pipeline::run(models, &mut { pcm_16k_mono }, opts, &mut |_| true)
}

/// [`diarize`] reading its audio from `source` a window at a time (a meeting's channel
/// on disk): memory stays that of the windows and their results, not the recording.
pub fn diarize_source(
    models: &SpeakerModels,
    source: &mut dyn AudioSource,
    opts: &DiarizeOptions,
) -> Result<Vec<SpeakerTurn>, DiarizeError> {
    pipeline::run(models, source, opts, &mut |_| true)
}

/// [`diarize_source`] with [`diarize_with_progress`]'s progress hook.
pub fn diarize_source_with_progress(
    models: &SpeakerModels,
    source: &mut dyn AudioSource,
    opts: &DiarizeOptions,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<SpeakerTurn>, DiarizeError> {
    pipeline::run(models, source, opts, progress)
}

/// [`diarize`] with a progress hook: called with the fraction of windows done (0–1);
/// returning `false` stops with [`DiarizeError::Cancelled`].
pub fn diarize_with_progress(
    models: &SpeakerModels,
    pcm_16k_mono: &[f32],
    opts: &DiarizeOptions,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<SpeakerTurn>, DiarizeError> {
    pipeline::run(models, &mut { pcm_16k_mono }, opts, progress)
}
