//! File transcription: decode → (VAD spans → windows | fixed windows) →
//! engine worker in batches → segments in file time. The windows follow the
//! model: Whisper's padded 30 s are filled with packed speech; a model whose
//! cost follows its input gets one run per speech span, cut only at its
//! limit. A run the model cut short is split in two and run again.
//!
//! Audio is streamed: only the part of the file that a future window may
//! still need is held in memory, so multi-hour files stay bounded.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use utter_postprocess::TextRules;

use crate::audio::{self, AudioError};
use crate::coverage::{self, Coverage, TextEnd};
use crate::packing::{assemble, Packing, Window, WindowPacker};
use crate::transcript::FileTranscript;
use utter_engine::vad::{Segmenter, SegmenterConfig, SpeechDetector};
use utter_engine::{Engine, EngineError, Run, RunParams, Utterance};
use utter_engine::{ModelInfo, RunCost};
use utter_models::diarize::SpeakerTurn;

/// How many times a window the model cut short is split again: four levels
/// take a 30 s window down to pieces of about 2 s.
const MAX_SPLITS: u32 = 4;

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
    /// Text said before this audio (Whisper's previous-context slot), given
    /// with every window: the local API's `prompt` field.
    pub prompt: Option<String>,
    /// Replacements and clean-up, applied to each segment.
    pub rules: TextRules,
    /// How much audio the file may hold (the decoder stops past it).
    pub limits: audio::AudioLimits,
    /// Set by whoever gave the job (a client that went away): the decoder
    /// and the engine stop within a packet and a run.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
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
            prompt: None,
            rules: TextRules::default(),
            limits: audio::AudioLimits::default(),
            cancel: None,
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

/// Why a file could not be diarized.
#[derive(Debug, thiserror::Error)]
pub enum DiarizeFileError {
    #[error("{}: {source}", path.display())]
    Audio { path: PathBuf, source: AudioError },
    #[error("{}: speaker diarization failed: {source}", path.display())]
    Speakers {
        path: PathBuf,
        // Boxed: the diarizer's error is large (on Windows past clippy's
        // result_large_err bound), and this is the cold path.
        source: Box<utter_models::diarize::DiarizeError>,
    },
    #[error("{}: the diarization model failed: {source}", path.display())]
    Engine { path: PathBuf, source: EngineError },
    /// The decoded audio could not be written to the temporary folder (full?).
    #[error("cannot keep the decoded audio of {} in {}: {source}", path.display(), scratch.display())]
    Scratch {
        path: PathBuf,
        scratch: PathBuf,
        source: std::io::Error,
    },
}

/// Who spoke when in `path` (any format [`audio::decode_file`] reads), with
/// `progress` told the share of the analysis done (`false` stops it). The
/// file is decoded once to 16 kHz samples in the temporary folder (230 MB an
/// hour, removed after) and analysed from there a window at a time: a
/// recording of hours is never held in memory.
pub fn diarize_file(
    models: &utter_models::diarize::SpeakerModels,
    path: &Path,
    options: &utter_models::diarize::DiarizeOptions,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Vec<SpeakerTurn>, DiarizeFileError> {
    let mut decoded = DecodedOnDisk::decode(path)?;
    utter_models::diarize::diarize_source_with_progress(models, &mut decoded, options, progress)
        .map_err(|source| DiarizeFileError::Speakers {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
}

/// Who spoke when in `path`, told by a diarization model of the engine's own
/// (Sortformer) instead of Utter's; speakers numbered by first appearance.
pub fn diarize_file_with_engine(
    diarizer: &mut utter_engine::diarize_model::EngineDiarizer,
    path: &Path,
) -> Result<Vec<SpeakerTurn>, DiarizeFileError> {
    let pcm = decode_whole(path)?;
    let mut turns = diarizer
        .run(&pcm)
        .map_err(|source| DiarizeFileError::Engine {
            path: path.to_path_buf(),
            source,
        })?;
    turns.sort_by_key(|t| t.start_ms);
    let mut seen: Vec<usize> = Vec::new();
    Ok(turns
        .into_iter()
        .map(|t| {
            let speaker = seen
                .iter()
                .position(|&s| s == t.speaker)
                .unwrap_or_else(|| {
                    seen.push(t.speaker);
                    seen.len() - 1
                });
            SpeakerTurn {
                start_s: t.start_ms as f64 / 1000.0,
                end_s: t.end_ms as f64 / 1000.0,
                speaker,
            }
        })
        .collect())
}

/// A recording decoded to 16 kHz samples (f32, native order) in an unnamed
/// file of the temporary folder, read where asked. Having no name, the file
/// goes when its handle does, even if the process is killed.
struct DecodedOnDisk {
    file: std::fs::File,
    len: usize,
}

impl DecodedOnDisk {
    fn decode(path: &Path) -> Result<Self, DiarizeFileError> {
        use std::io::Write;
        let folder = std::env::temp_dir();
        let failed = |source: std::io::Error| DiarizeFileError::Scratch {
            path: path.to_path_buf(),
            scratch: folder.clone(),
            source,
        };
        let mut decoded = Self {
            file: tempfile::tempfile_in(&folder).map_err(failed)?,
            len: 0,
        };
        let mut out = std::io::BufWriter::new(&decoded.file);
        let mut written: std::io::Result<()> = Ok(());
        audio::decode_file(path, |piece| {
            if written.is_ok() {
                let bytes: Vec<u8> = piece.iter().flat_map(|s| s.to_ne_bytes()).collect();
                written = out.write_all(&bytes);
                decoded.len += piece.len();
            }
        })
        .map_err(|source| DiarizeFileError::Audio {
            path: path.to_path_buf(),
            source,
        })?;
        written.and_then(|()| out.flush()).map_err(failed)?;
        drop(out);
        Ok(decoded)
    }
}

impl utter_models::diarize::AudioSource for DecodedOnDisk {
    fn len(&self) -> usize {
        self.len
    }

    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        use std::io::{Read, Seek, SeekFrom};
        let mut bytes = vec![0u8; n * 4];
        let read = self
            .file
            .seek(SeekFrom::Start(start as u64 * 4))
            .and_then(|_| self.file.read_exact(&mut bytes));
        if let Err(e) = read {
            // The file was just written: a failing read is the disk's; the
            // window is silence rather than a stopped diarization.
            tracing::warn!("cannot read back the decoded recording at sample {start}: {e}");
            return vec![0.0; n];
        }
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }
}

/// All of `path` as 16 kHz samples, for a diarization that looks at the whole.
fn decode_whole(path: &Path) -> Result<Vec<f32>, DiarizeFileError> {
    let mut pcm = Vec::new();
    audio::decode_file(path, |piece| pcm.extend_from_slice(piece)).map_err(|source| {
        DiarizeFileError::Audio {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(pcm)
}

/// Pauses shorter than this between two spans of one speaker are transcribed
/// with them (one run, and the sentence is not cut).
const SAME_SPEAKER_GAP_S: f64 = 2.0;
/// Silence given to each side of a span (at most half the pause to the next):
/// the engine hears a word's onset and tail.
const SPAN_PAD_S: f64 = 0.2;

/// The diarized turns as spans to transcribe: sorted, not overlapping, one
/// speaker each. Where two voices overlap, the boundary is the middle of the
/// overlap; a turn inside another speaker's turn (a "mm-hm") is left to that
/// turn, which would otherwise be cut in mid-sentence; close spans of one
/// speaker are joined; each is padded into the silence around it.
pub fn speaker_spans(turns: &[SpeakerTurn]) -> Vec<SpeakerTurn> {
    let mut sorted: Vec<SpeakerTurn> = turns
        .iter()
        .filter(|t| t.end_s > t.start_s)
        .copied()
        .collect();
    sorted.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut out: Vec<SpeakerTurn> = Vec::new();
    for t in sorted {
        let Some(last) = out.last_mut() else {
            out.push(t);
            continue;
        };
        if t.end_s <= last.end_s {
            continue; // inside the previous span
        }
        let same = last.speaker == t.speaker;
        if t.start_s < last.end_s || (same && t.start_s - last.end_s <= SAME_SPEAKER_GAP_S) {
            if same {
                last.end_s = t.end_s;
                continue;
            }
            let middle = (t.start_s + last.end_s) / 2.0;
            last.end_s = middle;
            out.push(SpeakerTurn {
                start_s: middle,
                ..t
            });
        } else {
            out.push(t);
        }
    }
    // Cutting at an overlap's middle can leave a span of one speaker next to
    // an earlier one of the same speaker (A, B inside A's end, A): join them.
    let mut joined: Vec<SpeakerTurn> = Vec::new();
    for t in out {
        match joined.last_mut() {
            Some(last)
                if last.speaker == t.speaker && t.start_s - last.end_s <= SAME_SPEAKER_GAP_S =>
            {
                last.end_s = t.end_s;
            }
            _ => joined.push(t),
        }
    }
    let bounds: Vec<(f64, f64)> = joined.iter().map(|t| (t.start_s, t.end_s)).collect();
    for (i, t) in joined.iter_mut().enumerate() {
        let before = if i == 0 {
            t.start_s
        } else {
            (t.start_s - bounds[i - 1].1) / 2.0
        };
        let after = bounds
            .get(i + 1)
            .map_or(SPAN_PAD_S, |next| (next.0 - t.end_s) / 2.0);
        t.start_s -= before.clamp(0.0, SPAN_PAD_S);
        t.end_s += after.clamp(0.0, SPAN_PAD_S);
    }
    joined
}

/// Spans in samples, each cut into equal pieces of at most `max` samples.
fn turn_windows(spans: &[SpeakerTurn], max: u64) -> Vec<(u64, u64)> {
    let rate = f64::from(audio::ENGINE_RATE);
    let mut out = Vec::new();
    for t in spans {
        let start = (t.start_s.max(0.0) * rate) as u64;
        let end = (t.end_s.max(0.0) * rate) as u64;
        if end <= start {
            continue;
        }
        let pieces = (end - start).div_ceil(max.max(1));
        let step = (end - start).div_ceil(pieces);
        let mut a = start;
        while a < end {
            out.push((a, (a + step).min(end)));
            a += step;
        }
    }
    out
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
    /// Consecutive windows of `window` samples (no VAD model installed).
    Fixed { window: u64 },
    /// One window per speaker span (`--speakers`), so that no window holds two voices.
    Turns { spans: Vec<(u64, u64)>, next: usize },
}

/// Holds the streamed audio and turns it into windows.
struct WindowSource<'a> {
    splitter: Splitter<'a>,
    /// Audio from `buffer_start` (absolute sample) on.
    buffer: Vec<f32>,
    buffer_start: u64,
    /// The audio of the open window's finished spans, copied out of
    /// `buffer`: a window may pack spans minutes apart (a meeting's
    /// microphone), and the silence between them must not be held.
    kept_spans: Vec<((u64, u64), Vec<f32>)>,
    total: u64,
    ready: Vec<Window>,
}

impl<'a> WindowSource<'a> {
    fn new(splitter: Splitter<'a>) -> Self {
        Self {
            splitter,
            buffer: Vec::new(),
            buffer_start: 0,
            kept_spans: Vec::new(),
            total: 0,
            ready: Vec::new(),
        }
    }

    fn read(&self, start: u64, end: u64) -> Vec<f32> {
        if let Some((_, pcm)) = self.kept_spans.iter().find(|(s, _)| *s == (start, end)) {
            return pcm.clone();
        }
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
            Splitter::Fixed { window } => {
                let window = *window;
                while self.total - self.buffer_start >= window {
                    let s = self.buffer_start;
                    self.emit(vec![(s, s + window)]);
                    self.trim(s + window);
                }
            }
            Splitter::Vad {
                detector,
                segmenter,
                packer,
            } => {
                let mut done = Vec::new();
                for span in segmenter.push_all(detector.feed(pcm)?) {
                    done.extend(packer.push(span.start, span.end));
                }
                let open = packer.open_spans().to_vec();
                // The buffer keeps the segment in progress (or, in silence,
                // the padding a span starting now would reach back to) and
                // any span of the open window that ends after that: it may
                // still grow. The window's other spans are final (a later
                // span starts after them) and are copied out below.
                let next_span_from = segmenter
                    .open_start()
                    .unwrap_or(self.total.saturating_sub(16_000));
                let keep = open
                    .iter()
                    // `>=`: a span ending where the next may start can still be
                    // merged with it (the packer merges when start <= end).
                    .filter(|s| s.1 >= next_span_from)
                    .map(|s| s.0)
                    .fold(next_span_from, u64::min);
                for spans in done {
                    self.emit(spans);
                }
                self.keep_spans_before(&open, keep);
                self.trim(keep);
            }
            Splitter::Turns { spans, next } => {
                let mut done = Vec::new();
                while *next < spans.len() && spans[*next].1 <= self.total {
                    done.push(spans[*next]);
                    *next += 1;
                }
                let keep = spans.get(*next).map_or(self.total, |s| s.0);
                for span in done {
                    self.emit(vec![span]);
                }
                self.trim(keep);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        match &mut self.splitter {
            Splitter::Fixed { .. } => {
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
                let mut spans = segmenter.push_all(detector.flush()?);
                spans.extend(segmenter.finish());
                for span in spans {
                    done.extend(packer.push(span.start, span.end.min(self.total)));
                }
                done.extend(packer.take());
                for spans in done {
                    self.emit(spans);
                }
            }
            Splitter::Turns { spans, next } => {
                let total = self.total;
                let rest: Vec<(u64, u64)> = spans[*next..]
                    .iter()
                    .filter(|s| s.0 < total)
                    .map(|&(a, b)| (a, b.min(total)))
                    .collect();
                *next = spans.len();
                for span in rest {
                    self.emit(vec![span]);
                }
            }
        }
        Ok(())
    }

    /// Copies out the audio of the open window's spans that end before
    /// `keep` (and forgets that of spans no longer open: emitted).
    fn keep_spans_before(&mut self, open: &[(u64, u64)], keep: u64) {
        self.kept_spans.retain(|(span, _)| open.contains(span));
        for &span in open {
            let kept = self.kept_spans.iter().any(|(s, _)| *s == span);
            if span.1 <= keep && !kept {
                let pcm = self.read(span.0, span.1);
                self.kept_spans.push((span, pcm));
            }
        }
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

/// Windows on their way through the engines: submitted in batches,
/// round-robin over the engines, and merged into the transcript in order.
struct Batches<'a> {
    engines: &'a [Engine],
    next_engine: usize,
    params: RunParams,
    size: usize,
    in_flight: VecDeque<(Vec<Window>, Run)>,
    /// Windows are speech the VAD found: their text must cover it (fixed
    /// windows hold silence too, so no text could be checked against them).
    check_coverage: bool,
}

impl<'a> Batches<'a> {
    fn new(engines: &'a [Engine], params: RunParams, size: usize, check_coverage: bool) -> Self {
        Self {
            check_coverage,
            engines,
            next_engine: 0,
            params,
            size: size.max(1),
            in_flight: VecDeque::new(),
        }
    }

    /// Submits the full batches of `ready` (all of it when `finished`).
    fn submit(&mut self, ready: &mut Vec<Window>, finished: bool) {
        while ready.len() >= self.size || (finished && !ready.is_empty()) {
            let windows: Vec<Window> = ready.drain(..self.size.min(ready.len())).collect();
            let engine = &self.engines[self.next_engine % self.engines.len()];
            self.next_engine += 1;
            let run = engine.submit(
                windows.iter().map(|w| w.pcm.clone()).collect(),
                self.params.clone(),
            );
            self.in_flight.push_back((windows, run));
        }
    }

    /// More batches in flight than keeps every engine busy (two each):
    /// waiting now bounds the memory held by pending windows.
    fn too_many(&self) -> bool {
        self.in_flight.len() > 2 * self.engines.len()
    }

    /// Waits for the oldest batch and merges it into `transcript`; the file
    /// time transcribed so far (ms), or `None` with nothing in flight.
    fn collect_oldest(
        &mut self,
        transcript: &mut FileTranscript,
        rules: &TextRules,
    ) -> Result<Option<i64>, EngineError> {
        let Some((windows, run)) = self.in_flight.pop_front() else {
            return Ok(None);
        };
        let utterances = run.wait()?;
        let mut end = 0;
        let engine = &self.engines[0];
        let timed = engine.info().timestamps != utter_engine::Timestamps::None;
        for (w, u) in windows.iter().zip(utterances) {
            for (w, u) in rerun_if_cut_short(engine, &self.params, w, u, MAX_SPLITS)? {
                let parts = match self.check_coverage {
                    true => rerun_if_uncovered(engine, &self.params, &w, u)?,
                    false => vec![(w, u)],
                };
                for (w, mut u) in parts {
                    recheck_doubts(engine, rules, &self.params, &w, &mut u);
                    merge(transcript, &w, u, rules, timed);
                }
            }
            end = w.source_span_ms().1;
        }
        Ok(Some(end))
    }
}

/// One file on its way: audio in, windows out, runs in flight, text merged.
struct FilePipeline<'a> {
    source: WindowSource<'a>,
    batches: Batches<'a>,
    transcript: FileTranscript,
    rules: &'a TextRules,
}

impl FilePipeline<'_> {
    fn decoded_ms(&self) -> i64 {
        crate::audio::samples_to_ms(self.source.total) as i64
    }

    /// Takes decoded audio, submits what is ready, and collects finished
    /// batches while too many are in flight.
    fn push(&mut self, pcm: &[f32]) -> Result<Progress, EngineError> {
        self.source.push(pcm)?;
        self.batches.submit(&mut self.source.ready, false);
        let mut transcribed_ms = 0;
        while self.batches.too_many() {
            if let Some(end) = self
                .batches
                .collect_oldest(&mut self.transcript, self.rules)?
            {
                transcribed_ms = end;
            }
        }
        Ok(Progress {
            decoded_ms: self.decoded_ms(),
            transcribed_ms,
        })
    }

    /// The end of the audio: submits the rest and collects every batch.
    fn finish(&mut self, on_progress: &mut impl FnMut(Progress)) -> Result<(), EngineError> {
        self.source.finish()?;
        self.batches.submit(&mut self.source.ready, true);
        while let Some(end) = self
            .batches
            .collect_oldest(&mut self.transcript, self.rules)?
        {
            on_progress(Progress {
                decoded_ms: self.decoded_ms(),
                transcribed_ms: end,
            });
        }
        self.transcript.duration_ms = self.decoded_ms();
        Ok(())
    }
}

/// How a file's audio is cut into runs.
pub enum Segmentation<'a> {
    /// At the pauses the voice detector finds; silence is skipped.
    Vad(&'a mut SpeechDetector),
    /// Into windows of the model's length, silence and all (`--no-vad`, or
    /// no VAD model installed).
    Fixed,
    /// At the speaker spans of [`speaker_spans`] (sorted, not overlapping):
    /// each span is transcribed on its own (cut into pieces a run can take),
    /// so each segment has one speaker, and the transcript's segments come
    /// labelled with it ([`FileTranscript::label_speakers`]); audio outside
    /// the spans is not transcribed.
    Turns(&'a [SpeakerTurn]),
}

impl<'a> From<Option<&'a mut SpeechDetector>> for Segmentation<'a> {
    fn from(detector: Option<&'a mut SpeechDetector>) -> Self {
        detector.map_or(Self::Fixed, Self::Vad)
    }
}

/// Transcribes one file.
/// Batches go round-robin to `engines` (several single-threaded workers
/// use a multi-core CPU better than one multi-threaded worker).
pub fn transcribe_file(
    engines: &[Engine],
    segmentation: Segmentation,
    path: &Path,
    model_name: &str,
    options: &FileOptions,
    on_progress: impl FnMut(Progress),
) -> Result<FileTranscript, FileError> {
    transcribe_file_streamed(
        engines,
        segmentation,
        path,
        model_name,
        options,
        on_progress,
        |_| {},
    )
}

/// [`transcribe_file`], telling `on_segment` each segment as soon as it is
/// settled, in file order (the local API's streamed responses).
pub fn transcribe_file_streamed(
    engines: &[Engine],
    segmentation: Segmentation,
    path: &Path,
    model_name: &str,
    options: &FileOptions,
    mut on_progress: impl FnMut(Progress),
    mut on_segment: impl FnMut(&utter_engine::TimedText),
) -> Result<FileTranscript, FileError> {
    assert!(!engines.is_empty(), "at least one engine");
    let model = engines[0].info();
    let (window, packing) = windows_for(model);
    let speaker_turns = match &segmentation {
        Segmentation::Turns(turns) => Some(*turns),
        _ => None,
    };
    let splitter = match segmentation {
        Segmentation::Vad(detector) => {
            detector.flush().ok(); // start from a clean stream
            let mut segmenter = options.segmenter;
            // Spans (with their pads) fit one run of this model.
            segmenter.max_segment_ms = segmenter
                .max_segment_ms
                .min(crate::audio::samples_to_ms(window).saturating_sub(1_000) as u32);
            segmenter.soft_max_ms = segmenter.soft_max_ms.min(segmenter.max_segment_ms);
            Splitter::Vad {
                detector,
                segmenter: Segmenter::new(segmenter),
                packer: WindowPacker::new(window, packing),
            }
        }
        Segmentation::Fixed => Splitter::Fixed { window },
        Segmentation::Turns(turns) => {
            // As the VAD's spans: pieces that fit one run of this model.
            let max_ms = u64::from(options.segmenter.max_segment_ms)
                .min(crate::audio::samples_to_ms(window).saturating_sub(1_000));
            Splitter::Turns {
                spans: turn_windows(turns, crate::audio::ms_to_samples(max_ms)),
                next: 0,
            }
        }
    };
    let check_coverage = matches!(splitter, Splitter::Vad { .. } | Splitter::Turns { .. });
    let params = RunParams {
        language: options.language.clone(),
        translate: options.translate,
        vocabulary: options.vocabulary.clone(),
        prompt: options.prompt.clone(),
        ..Default::default()
    };
    let mut pipeline = FilePipeline {
        source: WindowSource::new(splitter),
        batches: Batches::new(engines, params, options.batch_size, check_coverage),
        transcript: FileTranscript {
            file: path.to_path_buf(),
            model: model_name.to_string(),
            ..Default::default()
        },
        rules: &options.rules,
    };
    // The decoder calls back with audio; the first engine failure, or a
    // cancel, stops the decoder too.
    let mut failed: Option<EngineError> = None;
    let mut told = 0;
    let cancelled = || {
        options
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst))
    };
    let decoded = audio::decode_file_within(path, &options.limits, |pcm| {
        if cancelled() {
            failed = Some(EngineError::Cancelled);
            return false;
        }
        match pipeline.push(pcm) {
            Ok(progress) => on_progress(progress),
            Err(e) => failed = Some(e),
        }
        for segment in &pipeline.transcript.segments[told..] {
            on_segment(segment);
        }
        told = pipeline.transcript.segments.len();
        failed.is_none()
    });
    let engine_fail = |source: EngineError| FileError::Engine {
        path: path.to_path_buf(),
        source,
    };
    if let Some(e) = failed {
        return Err(engine_fail(e));
    }
    let report = decoded.map_err(|source| FileError::Audio {
        path: path.to_path_buf(),
        source,
    })?;
    pipeline.finish(&mut on_progress).map_err(engine_fail)?;
    for segment in &pipeline.transcript.segments[told..] {
        on_segment(segment);
    }
    let mut transcript = pipeline.transcript;
    if let Some(turns) = speaker_turns {
        transcript.label_speakers(turns);
    }
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

/// The window length and packing a model needs (see the module comment).
fn windows_for(model: &ModelInfo) -> (u64, Packing) {
    let window = crate::audio::ms_to_samples(model.window_ms() as u64);
    match model.run_cost {
        RunCost::Padded { .. } => (window, Packing::Fill),
        RunCost::GrowsWithAudio => (window, Packing::OnePerSpan),
    }
}

/// A window's result, or, when the model stopped before the end of the
/// audio, the results of its two halves (split again while still cut short,
/// up to `splits` times): a transcript is never silently missing its end.
fn rerun_if_cut_short(
    engine: &Engine,
    params: &RunParams,
    window: &Window,
    utterance: Utterance,
    splits: u32,
) -> Result<Vec<(Window, Utterance)>, EngineError> {
    let halves = if utterance.truncated && splits > 0 {
        window.split()
    } else {
        None
    };
    let Some((first, second)) = halves else {
        let mut utterance = utterance;
        if utterance.truncated {
            utterance.warning.get_or_insert_with(|| {
                "the model stopped before the end of this speech; some words may be missing"
                    .to_string()
            });
        }
        return Ok(vec![(window.clone(), utterance)]);
    };
    tracing::info!(
        window_s = window.len() as f64 / f64::from(crate::audio::ENGINE_RATE),
        "the model cut a run short: running its halves again"
    );
    let mut results = Vec::new();
    for half in [first, second] {
        let reply = engine.submit(vec![half.pcm.clone()], params.clone());
        let u = reply.wait()?.pop().unwrap_or_default();
        results.extend(rerun_if_cut_short(engine, params, &half, u, splits - 1)?);
    }
    Ok(results)
}

/// Runs over the rest of a window whose text ends well before its speech
/// (the model ended its output early; see [`crate::coverage`]), up to
/// twice; speech that still yields nothing gets a warning, never silence.
fn rerun_if_uncovered(
    engine: &Engine,
    params: &RunParams,
    window: &Window,
    utterance: Utterance,
) -> Result<Vec<(Window, Utterance)>, EngineError> {
    const ROUNDS: usize = 2;
    let timed = engine.info().timestamps != utter_engine::Timestamps::None;
    let mut results = vec![(window.clone(), utterance)];
    if !timed {
        // Files are never prefixed, so a model with timestamps always has
        // them here; without any, only the text's length could judge, and
        // that misfires on terse output (the synthetic Qwen3 model's
        // "Hello" became three overlapping cues).
        return Ok(results);
    }
    // Window time where the text ends, and the text so far.
    let (mut end, mut text) = {
        let u = &results[0].1;
        (TextEnd::of(u, timed), u.text.clone())
    };
    let spans = window.piece_spans();
    for round in 0..=ROUNDS {
        let Coverage::EndsEarly { from, missing_ms } = coverage::check(&text, end, &spans) else {
            break;
        };
        if round == ROUNDS {
            results[0]
                .1
                .warning
                .get_or_insert(untranscribed(missing_ms));
            break;
        }
        tracing::info!(
            missing_ms,
            from_ms = crate::audio::samples_to_ms(from),
            "a window's text ends before its speech: running the rest again"
        );
        let tail = window.tail_from(from);
        let mut u = engine
            .submit(vec![tail.pcm.clone()], params.clone())
            .wait()?
            .pop()
            .unwrap_or_default();
        if u.text.trim().is_empty() {
            results[0]
                .1
                .warning
                .get_or_insert(untranscribed(missing_ms));
            break;
        }
        let repeated = coverage::repeated_words(&text, &u.text);
        if repeated == u.text.split_whitespace().count() {
            break; // it heard only what the text has: the speech was covered
        }
        text = coverage::join_recovered(&text, &u.text);
        end = match TextEnd::of(&u, timed) {
            TextEnd::At(e) => TextEnd::At(from + e),
            TextEnd::Unknown => TextEnd::Unknown,
        };
        drop_leading_words(&mut u, repeated);
        results.push((tail, u));
    }
    Ok(results)
}

fn untranscribed(missing_ms: u64) -> String {
    coverage::untranscribed_warning(missing_ms).unwrap_or_default()
}

/// Removes `n` words from the start of `u`'s text and segments (words a
/// run over overlapping audio repeated).
fn drop_leading_words(u: &mut Utterance, n: usize) {
    let strip = |text: &str, n: usize| {
        text.split_whitespace()
            .skip(n)
            .collect::<Vec<_>>()
            .join(" ")
    };
    u.text = strip(&u.text, n);
    let mut left = n;
    for s in &mut u.segments {
        let words = s.text.split_whitespace().count();
        let cut = left.min(words);
        s.text = strip(&s.text, cut);
        left -= cut;
    }
    u.segments.retain(|s| !s.text.is_empty());
}

/// The words of a window's text that the vocabulary doubts, rechecked by
/// the engine (see [`crate::recheck`]).
fn recheck_doubts(
    engine: &Engine,
    rules: &TextRules,
    params: &RunParams,
    window: &Window,
    u: &mut Utterance,
) {
    if u.segments.is_empty() {
        let mut pieces = [std::mem::take(&mut u.text)];
        crate::recheck::recheck_pieces(engine, rules, &mut pieces, &window.pcm, params);
        let [text] = pieces;
        u.text = text;
    } else {
        let mut pieces: Vec<String> = u.segments.iter().map(|s| s.text.clone()).collect();
        crate::recheck::recheck_pieces(engine, rules, &mut pieces, &window.pcm, params);
        for (segment, text) in u.segments.iter_mut().zip(pieces) {
            segment.text = text;
        }
    }
}

/// Adds one window's result, mapped to file time. A model without
/// timestamps (`timed` false: Moonshine gives one segment timed 0–0) gets
/// its cues from the window's speech ([`Window::untimed_cues`]).
fn merge(
    transcript: &mut FileTranscript,
    window: &Window,
    u: Utterance,
    rules: &TextRules,
    timed: bool,
) {
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
    if u.segments.is_empty() || !timed {
        // The text, or the segments' (the recheck edits those).
        let text = match u.text.trim().is_empty() {
            true => u
                .segments
                .iter()
                .map(|s| s.text.trim())
                .collect::<Vec<_>>()
                .join(" "),
            false => u.text,
        };
        for (start_ms, end_ms, cue) in window.untimed_cues(&text) {
            transcript.push_segment(start_ms, end_ms, cue, rules);
        }
        return;
    }
    for s in u.segments {
        let (start_ms, end_ms) = window.map_span_ms(s.start_ms, s.end_ms);
        transcript.push_segment(start_ms, end_ms, s.text, rules);
    }
}

#[cfg(test)]
mod speaker_tests {
    use super::*;

    fn turn(start_s: f64, end_s: f64, speaker: usize) -> SpeakerTurn {
        SpeakerTurn {
            start_s,
            end_s,
            speaker,
        }
    }

    fn plain(spans: &[SpeakerTurn]) -> Vec<(f64, f64, usize)> {
        spans
            .iter()
            .map(|t| {
                let r = |v: f64| (v * 100.0).round() / 100.0;
                (r(t.start_s), r(t.end_s), t.speaker)
            })
            .collect()
    }

    #[test]
    fn overlaps_are_cut_in_their_middle_and_a_turn_inside_another_is_dropped() {
        let turns = [
            turn(1.0, 4.0, 0),
            turn(3.0, 6.0, 1), // overlaps the first by 1 s
            turn(4.5, 5.0, 0), // inside speaker 1's turn
            turn(10.0, 12.0, 0),
        ];
        assert_eq!(
            plain(&speaker_spans(&turns)),
            [(0.8, 3.5, 0), (3.5, 6.2, 1), (9.8, 12.2, 0)]
        );
    }

    #[test]
    fn close_spans_of_one_speaker_are_joined_and_padding_stops_halfway_to_the_next() {
        let turns = [turn(0.1, 1.0, 0), turn(2.5, 3.0, 0), turn(3.2, 4.0, 1)];
        assert_eq!(
            plain(&speaker_spans(&turns)),
            [(0.0, 3.1, 0), (3.1, 4.2, 1)]
        );
        assert!(speaker_spans(&[turn(2.0, 2.0, 0)]).is_empty());
    }

    #[test]
    fn long_spans_are_cut_into_equal_pieces_that_fit_a_run() {
        let rate = f64::from(audio::ENGINE_RATE);
        let spans = [turn(0.0, 1.0, 0), turn(2.0, 72.0, 1)];
        let max = (29.0 * rate) as u64;
        let windows = turn_windows(&spans, max);
        assert_eq!(windows.len(), 4, "{windows:?}");
        assert_eq!(windows[0], (0, 16_000));
        assert_eq!(windows[1].0, 32_000);
        assert_eq!(windows[3].1, (72.0 * rate) as u64);
        assert!(windows.iter().all(|w| w.1 - w.0 <= max));
        assert!(windows[1..].windows(2).all(|p| p[0].1 == p[1].0));
    }
}

#[cfg(test)]
mod streaming_tests {
    use super::*;

    /// The VAD model the tests install (`npm test` provisions it).
    fn detector() -> SpeechDetector {
        let store = utter_models::ModelStore::new(utter_base::paths::models_dir());
        let vad = store
            .vad()
            .unwrap()
            .expect("the VAD model is installed: run `npm test`'s setup");
        SpeechDetector::load(&store.path_of(&vad)).unwrap()
    }

    fn clip(name: &str) -> Vec<f32> {
        let path = format!("/usr/share/pocketsphinx/test/data/librivox/{name}.wav");
        let mut pcm = Vec::new();
        audio::decode_file(Path::new(&path), |p| pcm.extend_from_slice(p)).unwrap();
        pcm
    }

    /// The diarization's copy of a recording is on disk, not in memory: read
    /// back where asked it is the decoded audio, and it has no name in the
    /// folder (so nothing is left there, whatever ends the process).
    #[test]
    fn a_recording_decoded_to_disk_reads_back_and_has_no_name() {
        use utter_models::diarize::AudioSource;
        let path = Path::new(
            "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
        );
        let whole = decode_whole(path).unwrap();
        let mut decoded = DecodedOnDisk::decode(path).unwrap();
        assert_eq!(decoded.len(), whole.len());
        assert_eq!(decoded.read(1000, 4000), whole[1000..5000]);
        let tail = whole.len() - 16;
        assert_eq!(decoded.read(tail, 16), whole[tail..]);
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = decoded.file.as_raw_fd();
            let name = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
            assert!(
                name.to_string_lossy().ends_with("(deleted)"),
                "the decoded recording has a name: {}",
                name.display()
            );
        }
        let missing = DecodedOnDisk::decode(Path::new("/nonexistent.wav"))
            .err()
            .unwrap();
        assert!(
            matches!(missing, DiarizeFileError::Audio { .. }),
            "{missing}"
        );
    }

    /// A window may pack speech minutes apart (a meeting's microphone: a
    /// sentence, then minutes of listening): the silence between must not be
    /// held until the window is full. It was: a 2-hour meeting's microphone
    /// grew the finish to 527 MB.
    #[test]
    fn spans_packed_from_minutes_apart_hold_their_speech_not_the_silence() {
        let mut detector = detector();
        let (a, b) = (
            clip("sense_and_sensibility_01_austen_64kb-0880"),
            clip("sense_and_sensibility_01_austen_64kb-0930"),
        );
        let mut source = WindowSource::new(Splitter::Vad {
            detector: &mut detector,
            segmenter: Segmenter::new(SegmenterConfig::for_files()),
            // Whisper's 30 s window, filled: both sentences fit one.
            packer: WindowPacker::new(30 * 16_000, Packing::Fill),
        });
        let second = 16_000usize;
        let stream: Vec<f32> = [
            &a[..],
            &vec![0.0; 300 * second],
            &b[..],
            &vec![0.0; 2 * second],
        ]
        .concat();
        let mut longest_buffer = 0;
        for chunk in stream.chunks(second) {
            source.push(chunk).unwrap();
            longest_buffer = longest_buffer.max(source.buffer.len());
        }
        source.finish().unwrap();
        assert!(
            longest_buffer < 30 * second,
            "held {} s of audio at once",
            longest_buffer / second
        );
        assert_eq!(source.ready.len(), 1, "both sentences in one window");
        let window = &source.ready[0];
        assert_eq!(window.pieces.len(), 2, "{:?}", window.pieces);
        // Each piece is the audio from where it was said.
        for p in &window.pieces {
            let (from, len) = (p.source_start as usize, p.len as usize);
            let got = &window.pcm[p.window_start as usize..p.window_start as usize + len];
            assert_eq!(got, &stream[from..from + len]);
            assert!(got.iter().any(|s| s.abs() > 0.1), "speech in {p:?}");
        }
        assert!(window.pieces[1].source_start >= (a.len() + 299 * second) as u64);
    }
}
