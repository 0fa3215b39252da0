//! A recorded meeting's transcript: both channels on one timeline, the
//! microphone's stretches that only the loudspeaker explains left out, the
//! others diarized, everything merged in time order with a speaker each.

use std::path::{Path, PathBuf};

use utter_models::diarize::echo::{loudspeaker_spans, EchoOptions};
use utter_models::diarize::{DiarizeOptions, SpeakerModels};

use super::{MeetingError, MeetingPhase, MeetingRecord, OTHERS_WAV, YOU_WAV};
use crate::audio::wav::WavRecorder;
use crate::audio::ENGINE_RATE;
use crate::transcribe::{self, FileOptions, Segmentation};
use crate::transcript::{FileTranscript, SpeakerLabels};
use utter_engine::vad::SpeechDetector;
use utter_engine::Engine;

/// How to transcribe a meeting.
pub struct MeetingTranscription<'a> {
    pub engines: &'a [Engine],
    pub model_name: &'a str,
    pub options: &'a FileOptions,
    /// Cuts each channel at its pauses; `None`: fixed windows.
    pub detector: Option<&'a mut SpeechDetector>,
    /// Tells the others apart (Speaker 1, Speaker 2…); `None`: they are all
    /// "Others".
    pub speakers: Option<&'a SpeakerModels>,
    pub diarize: DiarizeOptions,
    /// The microphone's speaker ("You").
    pub your_name: &'a str,
}

/// The others' label when they are not told apart.
const OTHERS: &str = "Others";

/// A drift under this (a fifth of a second an hour) is left alone: it is
/// within what the measurement can tell.
const MIN_DRIFT_PPM: f64 = 50.0;

/// The prepared channels are made this many samples at a time (two
/// minutes): a meeting of hours is never held whole for that. Ten minutes
/// cost 12 MB more at the peak for the same transcript (docs/benchmarks.md).
const CHUNK: usize = 2 * 60 * ENGINE_RATE as usize;

/// Each chunk's loudspeaker search starts this much earlier, so that its
/// first frames have the system audio's past (the echo comes later); what
/// it finds there is the previous chunk's and is not written again.
const ECHO_LEAD: usize = 4 * ENGINE_RATE as usize;

/// Transcribes the meeting in `dir`; its record then says `transcribed`.
/// `stage` is told what is being done ("your microphone", "who spoke when"…).
pub fn transcribe_meeting(
    dir: &Path,
    how: MeetingTranscription,
    stage: &mut dyn FnMut(&str),
) -> Result<FileTranscript, MeetingError> {
    let mut record = MeetingRecord::read(dir)?;
    // The prepared channels, for the file pipeline; removed when done.
    let work = dir.join(".transcribing");
    std::fs::create_dir_all(&work).map_err(|e| MeetingError::disk(&work, e))?;
    let result = prepare_channels(dir, &work, record.drift_ppm, stage)
        .and_then(|(you, others)| transcribe_channels(&you, &others, how, stage));
    let _ = std::fs::remove_dir_all(&work);
    let mut transcript = result?;
    transcript.file = dir.to_path_buf();
    record.phase = MeetingPhase::Transcribed;
    record.write(dir)?;
    Ok(transcript)
}

/// Both channels on one timeline and of one length, written to `work`: the
/// system audio resampled by the measured drift, and the microphone's
/// stretches that only the loudspeaker explains silenced (without headphones
/// the microphone hears the others too: not "You"). Chunk by chunk, so a
/// long meeting costs [`CHUNK`]s of memory, not hours.
fn prepare_channels(
    dir: &Path,
    work: &Path,
    drift_ppm: Option<f64>,
    stage: &mut dyn FnMut(&str),
) -> Result<(PathBuf, PathBuf), MeetingError> {
    let mut you = WavChannel::open(&dir.join(YOU_WAV))?;
    let mut others = Aligned::new(WavChannel::open(&dir.join(OTHERS_WAV))?, drift_ppm);
    let total = you.len().max(others.len());
    let (you_path, others_path) = (work.join(YOU_WAV), work.join(OTHERS_WAV));
    let create = |path: &Path| WavRecorder::create(path).map_err(|e| MeetingError::disk(path, e));
    let (mut you_out, mut others_out) = (create(&you_path)?, create(&others_path)?);
    let mut told = false;
    let mut start = 0;
    while start < total {
        let n = CHUNK.min(total - start);
        let lead = ECHO_LEAD.min(start);
        let mut mic = you.read(start - lead, n + lead);
        let system = others.read(start - lead, n + lead);
        if system.iter().any(|s| s.abs() > 1e-4) {
            if !told {
                stage("what your microphone heard from the loudspeaker");
                told = true;
            }
            for (start_s, end_s) in loudspeaker_spans(&mic, &system, &EchoOptions::default()) {
                let len = mic.len();
                let at = |s: f64| ((s * ENGINE_RATE as f64) as usize).min(len);
                mic[at(start_s)..at(end_s)].fill(0.0);
            }
        }
        you_out
            .write(&mic[lead..])
            .map_err(|e| MeetingError::disk(&you_path, e))?;
        others_out
            .write(&system[lead..])
            .map_err(|e| MeetingError::disk(&others_path, e))?;
        start += n;
    }
    let you_path = you_out
        .finish()
        .map_err(|e| MeetingError::disk(&you_path, e))?;
    let others_path = others_out
        .finish()
        .map_err(|e| MeetingError::disk(&others_path, e))?;
    Ok((you_path, others_path))
}

fn transcribe_channels(
    you_path: &Path,
    others_path: &Path,
    how: MeetingTranscription,
    stage: &mut dyn FnMut(&str),
) -> Result<FileTranscript, MeetingError> {
    let MeetingTranscription {
        engines,
        model_name,
        options,
        mut detector,
        speakers,
        diarize,
        your_name,
    } = how;
    stage("your microphone");
    let mine = transcribe::transcribe_file(
        engines,
        detector.as_deref_mut().into(),
        you_path,
        model_name,
        options,
        |_| {},
    )?;
    let theirs = match speakers {
        Some(models) => {
            stage("who spoke when among the others");
            // Diarization clusters voices across the whole meeting, but
            // reads the channel from disk a ten-second window at a time.
            let mut others = WavChannel::open(others_path)?;
            let turns = utter_models::diarize::diarize_source(models, &mut others, &diarize)
                .map_err(|e| MeetingError::Speakers(Box::new(e)))?;
            let spans = transcribe::speaker_spans(&turns);
            stage("the others");
            transcribe::transcribe_file(
                engines,
                Segmentation::Turns(&spans),
                others_path,
                model_name,
                options,
                |_| {},
            )?
        }
        None => {
            stage("the others");
            let mut t = transcribe::transcribe_file(
                engines,
                detector.into(),
                others_path,
                model_name,
                options,
                |_| {},
            )?;
            t.speakers = Some(SpeakerLabels {
                names: vec![OTHERS.into()],
                of_segment: vec![Some(0); t.segments.len()],
            });
            t
        }
    };
    Ok(merge(mine, theirs, your_name))
}

/// A channel's 16 kHz samples. A WAV cut off by a crash reads up to its last
/// flushed header.
#[cfg(test)]
fn read_channel(path: &Path) -> Result<Vec<f32>, MeetingError> {
    let mut channel = WavChannel::open(path)?;
    let n = channel.len();
    Ok(channel.read(0, n))
}

/// Samples of a channel, read a stretch at a time.
pub(super) trait Samples {
    fn len(&self) -> usize;
    /// `n` samples from `start`; silence past the end.
    fn read(&mut self, start: usize, n: usize) -> Vec<f32>;
}

/// A meeting channel's WAV (16 kHz mono 16-bit), read where asked.
pub(super) struct WavChannel {
    path: PathBuf,
    reader: hound::WavReader<std::io::BufReader<std::fs::File>>,
}

impl WavChannel {
    pub(super) fn open(path: &Path) -> Result<Self, MeetingError> {
        let not_a_meeting = |reason: String| MeetingError::NotAMeeting {
            path: path.to_path_buf(),
            reason,
        };
        let reader = hound::WavReader::open(path).map_err(|e| not_a_meeting(e.to_string()))?;
        let spec = reader.spec();
        if spec.sample_rate != ENGINE_RATE || spec.channels != 1 || spec.bits_per_sample != 16 {
            return Err(not_a_meeting(format!(
                "{} Hz, {} channels, {} bits instead of 16 kHz mono 16-bit",
                spec.sample_rate, spec.channels, spec.bits_per_sample
            )));
        }
        Ok(Self {
            path: path.to_path_buf(),
            reader,
        })
    }
}

impl Samples for WavChannel {
    fn len(&self) -> usize {
        self.reader.duration() as usize
    }

    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(n);
        if start < self.len() {
            if let Err(e) = self.reader.seek(start as u32) {
                tracing::warn!("{}: cannot seek to {start}: {e}", self.path.display());
            } else {
                // A WAV cut off by a crash ends early: what is there.
                out.extend(
                    self.reader
                        .samples::<i16>()
                        .take(n)
                        .map_while(Result::ok)
                        .map(|s| f32::from(s) / f32::from(i16::MAX)),
                );
            }
        }
        out.resize(n, 0.0);
        out
    }
}

/// The diarization reads the others' channel where it asks.
impl utter_models::diarize::AudioSource for WavChannel {
    fn len(&self) -> usize {
        Samples::len(self)
    }

    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        Samples::read(self, start, n)
    }
}

#[cfg(test)]
impl Samples for Vec<f32> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        let mut out: Vec<f32> = self.iter().skip(start).take(n).copied().collect();
        out.resize(n, 0.0);
        out
    }
}

/// The system audio on the microphone's timeline: resampled by the drift
/// measured while recording (its clock ran `drift_ppm` fast), by linear
/// interpolation — a drift of parts per million moves a sample by a
/// fraction of itself; nothing audible is lost.
struct Aligned<S> {
    source: S,
    len: usize,
    /// Source samples per aligned sample (1 when no drift is corrected).
    step: f64,
}

impl<S: Samples> Aligned<S> {
    fn new(source: S, drift_ppm: Option<f64>) -> Self {
        let n = source.len();
        let len = match drift_ppm {
            Some(ppm) if ppm.abs() >= MIN_DRIFT_PPM && n > 1 => {
                ((n as f64 / (1.0 + ppm / 1e6)).round() as usize).max(1)
            }
            _ => n,
        };
        let step = if len == n {
            1.0
        } else {
            (n - 1) as f64 / (len - 1).max(1) as f64
        };
        Self { source, len, step }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// `n` aligned samples from `start`; silence past the end (one device
    /// stopped early, or a crash cut the two at different flushes).
    fn read(&mut self, start: usize, n: usize) -> Vec<f32> {
        if self.step == 1.0 {
            return self.source.read(start, n);
        }
        let end = (start + n).min(self.len);
        let mut out = Vec::with_capacity(n);
        if start < end {
            let first = (start as f64 * self.step).floor() as usize;
            let last = ((end - 1) as f64 * self.step).floor() as usize + 1;
            let src = self.source.read(first, last + 1 - first);
            for i in start..end {
                let x = i as f64 * self.step;
                let j = (x.floor() as usize).min(self.source.len() - 1);
                let frac = (x - j as f64) as f32;
                let at = |k: usize| src.get(k - first).copied().unwrap_or(0.0);
                let next = if j + 1 < self.source.len() {
                    at(j + 1)
                } else {
                    at(j)
                };
                out.push(at(j) * (1.0 - frac) + next * frac);
            }
        }
        out.resize(n, 0.0);
        out
    }
}

/// One transcript from both: segments in time order, "You" first among the
/// speakers when you spoke first.
pub fn merge(mine: FileTranscript, theirs: FileTranscript, your_name: &str) -> FileTranscript {
    let their_labels = theirs.speakers.clone().unwrap_or_default();
    let mut rows: Vec<(utter_engine::TimedText, String, String)> = Vec::new();
    for (seg, raw) in mine.segments.into_iter().zip(mine.raw_segments) {
        rows.push((seg, raw, your_name.to_string()));
    }
    for (i, (seg, raw)) in theirs
        .segments
        .into_iter()
        .zip(theirs.raw_segments)
        .enumerate()
    {
        let who = their_labels.name_of(i).unwrap_or(OTHERS).to_string();
        rows.push((seg, raw, who));
    }
    rows.sort_by_key(|(seg, _, _)| (seg.start_ms, seg.end_ms));
    let mut names: Vec<String> = Vec::new();
    let mut of_segment = Vec::with_capacity(rows.len());
    let (mut segments, mut raw_segments) = (Vec::new(), Vec::new());
    for (seg, raw, who) in rows {
        let index = match names.iter().position(|n| *n == who) {
            Some(i) => i,
            None => {
                names.push(who);
                names.len() - 1
            }
        };
        of_segment.push(Some(index));
        segments.push(seg);
        raw_segments.push(raw);
    }
    let mut warnings: Vec<String> = mine
        .warnings
        .into_iter()
        .map(|w| format!("your microphone: {w}"))
        .collect();
    warnings.extend(
        theirs
            .warnings
            .into_iter()
            .map(|w| format!("the others: {w}")),
    );
    FileTranscript {
        file: mine.file,
        model: mine.model,
        backend: mine.backend,
        device: mine.device,
        language: mine.language.or(theirs.language),
        duration_ms: mine.duration_ms.max(theirs.duration_ms),
        segments,
        warnings,
        truncated: mine.truncated || theirs.truncated,
        raw_segments,
        speakers: Some(SpeakerLabels { names, of_segment }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use utter_engine::TimedText;

    fn transcript(rows: &[(i64, &str)]) -> FileTranscript {
        FileTranscript {
            segments: rows
                .iter()
                .map(|(start, text)| TimedText {
                    start_ms: *start,
                    end_ms: start + 500,
                    text: text.to_string(),
                })
                .collect(),
            raw_segments: rows.iter().map(|(_, t)| t.to_string()).collect(),
            duration_ms: rows.last().map_or(0, |r| r.0 + 500),
            ..Default::default()
        }
    }

    #[test]
    fn both_sides_merge_in_time_order_with_their_speakers() {
        let mine = transcript(&[(1_000, "Hi, it's me."), (5_000, "Sure.")]);
        let mut theirs = transcript(&[(0, "Hello?"), (3_000, "Can you hear me?")]);
        theirs.label_speakers(&[
            utter_models::diarize::SpeakerTurn {
                start_s: 0.0,
                end_s: 1.0,
                speaker: 0,
            },
            utter_models::diarize::SpeakerTurn {
                start_s: 3.0,
                end_s: 4.0,
                speaker: 1,
            },
        ]);
        let t = merge(mine, theirs, "Ann");
        let said: Vec<(&str, &str)> = (0..t.segments.len())
            .map(|i| {
                (
                    t.speakers.as_ref().unwrap().name_of(i).unwrap(),
                    t.segments[i].text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            said,
            [
                ("Speaker 1", "Hello?"),
                ("Ann", "Hi, it's me."),
                ("Speaker 2", "Can you hear me?"),
                ("Ann", "Sure."),
            ]
        );
        assert_eq!(t.speakers.unwrap().names, ["Speaker 1", "Ann", "Speaker 2"]);
        assert_eq!(t.duration_ms, 5_500);
    }

    #[test]
    fn a_drifted_channel_is_resampled_and_a_cut_one_padded() {
        // The system clock ran 100 ppm fast: 16 samples too many in 10 s.
        let others: Vec<f32> = (0..160_016).map(|i| i as f32).collect();
        let mut stretched = Aligned::new(others, Some(100.0));
        assert_eq!(stretched.len(), 160_000);
        let whole = stretched.read(0, 160_000);
        assert_eq!(whole[0], 0.0);
        assert!((whole[159_999] - 160_015.0).abs() < 1e-3);
        // The middle sample lands in the middle, read whole or in pieces.
        assert!((whole[80_000] - 80_008.0).abs() < 0.01, "{}", whole[80_000]);
        let piece = stretched.read(79_990, 20);
        assert_eq!(piece, whole[79_990..80_010]);
        // Past its end (one device stopped early): silence.
        assert_eq!(stretched.read(159_998, 4)[2..], [0.0, 0.0]);
        let mut short = Aligned::new(vec![0.5; 144_000], None);
        assert_eq!(short.read(150_000, 2), [0.0, 0.0]);
        assert_eq!(short.read(100, 1), [0.5]);
        // A drift within the measurement's error is left alone.
        let mut same = Aligned::new(vec![1.0, 2.0, 3.0, 4.0], Some(10.0));
        assert_eq!(same.read(0, 4), [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn the_channels_are_prepared_in_chunks_from_disk() {
        // Longer than a chunk, so the chunk seams are crossed: the written
        // channels are the recorded ones, sample for sample, silence padding
        // the shorter, and no sound on the system side means nothing muted.
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let n = CHUNK + CHUNK / 3;
        let you: Vec<f32> = (0..n).map(|i| ((i % 400) as f32 / 400.0) - 0.5).collect();
        let write = |name: &str, pcm: &[f32]| {
            let mut w = WavRecorder::create(&dir.path().join(name)).unwrap();
            w.write(pcm).unwrap();
            w.finish().unwrap();
        };
        write(YOU_WAV, &you);
        write(OTHERS_WAV, &vec![0.0; n - 16_000]);
        let (you_path, others_path) =
            prepare_channels(dir.path(), &work, None, &mut |_| {}).unwrap();
        let mine = read_channel(&you_path).unwrap();
        let theirs = read_channel(&others_path).unwrap();
        assert_eq!((mine.len(), theirs.len()), (n, n));
        let q = |x: f32| (x * f32::from(i16::MAX)).round();
        assert!(mine
            .iter()
            .zip(&you)
            .all(|(a, b)| (q(*a) - q(*b)).abs() <= 1.0));
        assert!(theirs.iter().all(|s| *s == 0.0));
    }
}
