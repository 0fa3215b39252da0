//! File transcription: decode → (VAD spans → packed windows | fixed 30 s
//! windows) → engine worker in batches → segments in file time.
//!
//! Audio is streamed: only the part of the file that a future window may
//! still need is held in memory, so multi-hour files stay bounded.

use std::path::{Path, PathBuf};

use crossbeam_channel::Receiver;

use crate::audio::{self, AudioError};
use crate::engine::{Engine, EngineError, RunParams, Utterance};
use crate::packing::{assemble, Window, WindowPacker};
use crate::postprocess::TextRules;
use crate::transcript::FileTranscript;
use crate::vad::{Segmenter, SegmenterConfig, SpeechDetector};

/// Longest audio per engine call: whisper's 30 s context.
pub const WINDOW_SAMPLES: u64 = 30 * 16_000;

/// How to transcribe a file.
#[derive(Debug, Clone)]
pub struct FileOptions {
    pub language: Option<String>,
    /// Translate into English (models that can).
    pub translate: bool,
    /// Windows per engine call.
    pub batch_size: usize,
    pub segmenter: SegmenterConfig,
    /// The user's words, passed to the engine with every window.
    pub vocabulary: Vec<String>,
    /// Replacements and clean-up, applied to each segment.
    pub rules: TextRules,
}

impl Default for FileOptions {
    fn default() -> Self {
        Self {
            language: None,
            translate: false,
            // On CPU the engine runs a batch serially anyway; single windows
            // give finer-grained progress and spread across workers.
            batch_size: 1,
            segmenter: SegmenterConfig::for_files(),
            vocabulary: Vec::new(),
            rules: TextRules::default(),
        }
    }
}

/// Why a file could not be (fully) transcribed.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{}: {source}", path.display())]
    Audio { path: PathBuf, source: AudioError },
    #[error("{}: {source}", path.display())]
    Engine { path: PathBuf, source: EngineError },
}

/// Progress through a file, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Audio decoded so far (ms).
    pub decoded_ms: i64,
    /// Audio transcribed so far (ms of file time).
    pub transcribed_ms: i64,
}

/// Where windows come from: VAD-driven or fixed.
enum Splitter<'a> {
    Vad {
        detector: &'a mut SpeechDetector,
        segmenter: Segmenter,
        packer: WindowPacker,
    },
    Fixed,
}

/// Holds the streamed audio and turns it into windows.
struct WindowSource<'a> {
    splitter: Splitter<'a>,
    /// Audio from `buffer_start` (absolute sample) on.
    buffer: Vec<f32>,
    buffer_start: u64,
    total: u64,
    ready: Vec<Window>,
}

impl<'a> WindowSource<'a> {
    fn new(splitter: Splitter<'a>) -> Self {
        Self {
            splitter,
            buffer: Vec::new(),
            buffer_start: 0,
            total: 0,
            ready: Vec::new(),
        }
    }

    fn read(&self, start: u64, end: u64) -> Vec<f32> {
        let from = (start.max(self.buffer_start) - self.buffer_start) as usize;
        let to = (end.min(self.total) - self.buffer_start) as usize;
        self.buffer[from.min(to)..to].to_vec()
    }

    fn emit(&mut self, spans: Vec<(u64, u64)>) {
        let w = assemble(&spans, |a, b| self.read(a, b));
        if !w.is_empty() {
            self.ready.push(w);
        }
    }

    fn push(&mut self, pcm: &[f32]) -> Result<(), EngineError> {
        self.buffer.extend_from_slice(pcm);
        self.total += pcm.len() as u64;
        match &mut self.splitter {
            Splitter::Fixed => {
                while self.total - self.buffer_start >= WINDOW_SAMPLES {
                    let s = self.buffer_start;
                    self.emit(vec![(s, s + WINDOW_SAMPLES)]);
                    self.trim(s + WINDOW_SAMPLES);
                }
            }
            Splitter::Vad {
                detector,
                segmenter,
                packer,
            } => {
                let mut done = Vec::new();
                for p in detector.feed(pcm)? {
                    if let Some(span) = segmenter.push(p) {
                        done.extend(packer.push(span.start, span.end));
                    }
                }
                let keep = [packer.open_start(), segmenter.open_start()]
                    .into_iter()
                    .flatten()
                    .min()
                    // Silence: keep the padding a span starting now would reach back to.
                    .unwrap_or(self.total.saturating_sub(16_000));
                for spans in done {
                    self.emit(spans);
                }
                self.trim(keep);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        match &mut self.splitter {
            Splitter::Fixed => {
                let s = self.buffer_start;
                if self.total > s {
                    self.emit(vec![(s, self.total)]);
                }
            }
            Splitter::Vad {
                detector,
                segmenter,
                packer,
            } => {
                let mut done = Vec::new();
                for p in detector.flush()? {
                    if let Some(span) = segmenter.push(p) {
                        done.extend(packer.push(span.start, span.end.min(self.total)));
                    }
                }
                if let Some(span) = segmenter.finish() {
                    done.extend(packer.push(span.start, span.end.min(self.total)));
                }
                done.extend(packer.take());
                for spans in done {
                    self.emit(spans);
                }
            }
        }
        Ok(())
    }

    /// Drops audio before absolute sample `keep`.
    fn trim(&mut self, keep: u64) {
        if keep > self.buffer_start {
            let n = ((keep - self.buffer_start) as usize).min(self.buffer.len());
            self.buffer.drain(..n);
            self.buffer_start += n as u64;
        }
    }
}

type Pending = (Vec<Window>, Receiver<Result<Vec<Utterance>, EngineError>>);

/// Transcribes one file. `detector` = `None` means fixed 30 s windows.
/// Batches go round-robin to `engines` (several single-threaded workers
/// use a multi-core CPU better than one multi-threaded worker).
pub fn transcribe_file(
    engines: &[Engine],
    detector: Option<&mut SpeechDetector>,
    path: &Path,
    model_name: &str,
    options: &FileOptions,
    mut on_progress: impl FnMut(Progress),
) -> Result<FileTranscript, FileError> {
    let splitter = match detector {
        Some(detector) => {
            detector.flush().ok(); // start from a clean stream
            Splitter::Vad {
                detector,
                segmenter: Segmenter::new(options.segmenter),
                packer: WindowPacker::new(WINDOW_SAMPLES),
            }
        }
        None => Splitter::Fixed,
    };
    let params = RunParams {
        language: options.language.clone(),
        translate: options.translate,
        vocabulary: options.vocabulary.clone(),
        ..Default::default()
    };
    let mut source = WindowSource::new(splitter);
    let mut transcript = FileTranscript {
        file: path.to_path_buf(),
        model: model_name.to_string(),
        ..Default::default()
    };
    let mut pending: std::collections::VecDeque<Pending> = Default::default();
    let mut engine_error: Option<EngineError> = None;
    let batch = options.batch_size.max(1);
    assert!(!engines.is_empty(), "at least one engine");
    let mut next_engine = engines.iter().cycle();
    let max_in_flight = 2 * engines.len();

    // Collects the oldest batch's results into the transcript.
    let collect =
        |(windows, rx): Pending, transcript: &mut FileTranscript| -> Result<i64, EngineError> {
            let utterances = rx.recv().map_err(|_| EngineError::WorkerGone)??;
            let mut end = 0;
            for (w, u) in windows.iter().zip(utterances) {
                merge(transcript, w, u, &options.rules);
                end = w.source_span_ms().1;
            }
            Ok(end)
        };

    let decoded = audio::decode_file(path, |pcm| {
        if engine_error.is_some() {
            return;
        }
        if let Err(e) = source.push(pcm) {
            engine_error = Some(e);
            return;
        }
        while source.ready.len() >= batch {
            let windows: Vec<Window> = source.ready.drain(..batch).collect();
            let engine = next_engine.next().expect("cycle");
            let rx = engine.submit(
                windows.iter().map(|w| w.pcm.clone()).collect(),
                params.clone(),
            );
            pending.push_back((windows, rx));
        }
        // Bound memory and keep the workers busy: at most two batches each in flight.
        let mut transcribed_ms = 0;
        while pending.len() > max_in_flight {
            match collect(pending.pop_front().expect("non-empty"), &mut transcript) {
                Ok(end) => transcribed_ms = end,
                Err(e) => {
                    engine_error = Some(e);
                    return;
                }
            }
        }
        on_progress(Progress {
            decoded_ms: crate::audio::samples_to_ms(source.total) as i64,
            transcribed_ms,
        });
    });
    let engine_fail = |source: EngineError| FileError::Engine {
        path: path.to_path_buf(),
        source,
    };
    if let Some(e) = engine_error {
        return Err(engine_fail(e));
    }
    let report = decoded.map_err(|source| FileError::Audio {
        path: path.to_path_buf(),
        source,
    })?;
    source.finish().map_err(engine_fail)?;
    let rest: Vec<Window> = std::mem::take(&mut source.ready);
    for chunk in rest.chunks(batch) {
        let engine = next_engine.next().expect("cycle");
        let rx = engine.submit(
            chunk.iter().map(|w| w.pcm.clone()).collect(),
            params.clone(),
        );
        pending.push_back((chunk.to_vec(), rx));
    }
    while let Some(p) = pending.pop_front() {
        let end = collect(p, &mut transcript).map_err(engine_fail)?;
        on_progress(Progress {
            decoded_ms: crate::audio::samples_to_ms(source.total) as i64,
            transcribed_ms: end,
        });
    }
    transcript.duration_ms = crate::audio::samples_to_ms(source.total) as i64;
    // Where it ran at the end: a GPU failure mid-file moves the rest to the CPU.
    transcript.backend = engines[0].backend();
    transcript.device = engines[0].device();
    if let Some(cause) = report.truncation() {
        // Part of the file was transcribed before the problem: keep it, say so.
        transcript
            .warnings
            .push(format!("{cause} (the transcript covers the decoded part)"));
        transcript.truncated = true;
    }
    Ok(transcript)
}

/// Adds one window's result, mapped to file time.
fn merge(transcript: &mut FileTranscript, window: &Window, u: Utterance, rules: &TextRules) {
    tracing::debug!(
        window_s = window.len() as f64 / f64::from(crate::audio::ENGINE_RATE),
        pieces = window.pieces.len(),
        engine_ms = u.engine_ms,
        words = u.text.split_whitespace().count(),
        "window transcribed"
    );
    if transcript.language.is_none() {
        transcript.language = u.language.clone();
    }
    if let Some(w) = u.warning {
        let (a, b) = window.source_span_ms();
        transcript.warnings.push(format!(
            "{}–{}: {w}",
            crate::transcript::clock(a, '.'),
            crate::transcript::clock(b, '.')
        ));
    }
    if u.segments.is_empty() {
        if !u.text.is_empty() {
            let (start_ms, end_ms) = window.source_span_ms();
            transcript.push_segment(start_ms, end_ms, u.text, rules);
        }
        return;
    }
    for s in u.segments {
        let (start_ms, end_ms) = window.map_span_ms(s.start_ms, s.end_ms);
        transcript.push_segment(start_ms, end_ms, s.text, rules);
    }
}
