//! A recorded meeting's transcript: both channels on one timeline, the
//! microphone's stretches that only the loudspeaker explains left out, the
//! others diarized, everything merged in time order with a speaker each.

use std::path::{Path, PathBuf};

use utter_models::diarize::echo::{loudspeaker_spans, EchoOptions};
use utter_models::diarize::{DiarizeOptions, SpeakerModels};

use super::{MeetingError, MeetingPhase, MeetingRecord, OTHERS_WAV, YOU_WAV};
use crate::audio::wav::WavRecorder;
use crate::audio::ENGINE_RATE;
use crate::engine::Engine;
use crate::transcribe::{self, FileOptions, Segmentation};
use crate::transcript::{FileTranscript, SpeakerLabels};
use crate::vad::SpeechDetector;

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

/// Transcribes the meeting in `dir`; its record then says `transcribed`.
/// `stage` is told what is being done ("your microphone", "who spoke when"…).
pub fn transcribe_meeting(
    dir: &Path,
    how: MeetingTranscription,
    stage: &mut dyn FnMut(&str),
) -> Result<FileTranscript, MeetingError> {
    let mut record = MeetingRecord::read(dir)?;
    let you = read_channel(&dir.join(YOU_WAV))?;
    let others = read_channel(&dir.join(OTHERS_WAV))?;
    let (mut you, others) = align(you, others, record.drift_ppm);
    // Without headphones the microphone hears the others too: not "You".
    if others.iter().any(|s| s.abs() > 1e-4) {
        stage("what your microphone heard from the loudspeaker");
        for (start_s, end_s) in loudspeaker_spans(&you, &others, &EchoOptions::default()) {
            let n = you.len();
            let at = |s: f64| ((s * ENGINE_RATE as f64) as usize).min(n);
            you[at(start_s)..at(end_s)].fill(0.0);
        }
    }
    // The prepared channels, for the file pipeline; removed when done.
    let work = dir.join(".transcribing");
    std::fs::create_dir_all(&work).map_err(|e| MeetingError::disk(&work, e))?;
    let you_path = write_channel(&work.join(YOU_WAV), &you)?;
    let others_path = write_channel(&work.join(OTHERS_WAV), &others)?;
    drop(you);
    let result = transcribe_channels(&you_path, &others_path, &others, how, stage);
    let _ = std::fs::remove_dir_all(&work);
    let mut transcript = result?;
    transcript.file = dir.to_path_buf();
    record.phase = MeetingPhase::Transcribed;
    record.write(dir)?;
    Ok(transcript)
}

fn transcribe_channels(
    you_path: &Path,
    others_path: &Path,
    others: &[f32],
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
            let turns = utter_models::diarize::diarize(models, others, &diarize)
                .map_err(|e| MeetingError::Speakers(Box::new(e)))?;
            let spans = transcribe::speaker_spans(&turns);
            stage("the others");
            let mut t = transcribe::transcribe_file(
                engines,
                Segmentation::Turns(&spans),
                others_path,
                model_name,
                options,
                |_| {},
            )?;
            t.label_speakers(&spans);
            t
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
fn read_channel(path: &Path) -> Result<Vec<f32>, MeetingError> {
    let reader = hound::WavReader::open(path).map_err(|e| MeetingError::NotAMeeting {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let spec = reader.spec();
    if spec.sample_rate != ENGINE_RATE || spec.channels != 1 || spec.bits_per_sample != 16 {
        return Err(MeetingError::NotAMeeting {
            path: path.to_path_buf(),
            reason: format!(
                "{} Hz, {} channels, {} bits instead of 16 kHz mono 16-bit",
                spec.sample_rate, spec.channels, spec.bits_per_sample
            ),
        });
    }
    Ok(reader
        .into_samples::<i16>()
        .map_while(Result::ok)
        .map(|s| f32::from(s) / f32::from(i16::MAX))
        .collect())
}

fn write_channel(path: &Path, pcm: &[f32]) -> Result<PathBuf, MeetingError> {
    let mut wav = WavRecorder::create(path).map_err(|e| MeetingError::disk(path, e))?;
    wav.write(pcm).map_err(|e| MeetingError::disk(path, e))?;
    wav.finish().map_err(|e| MeetingError::disk(path, e))
}

/// Both channels on the microphone's timeline and of one length: the system
/// audio resampled by the drift measured while recording (its clock ran
/// `drift_ppm` fast), then the shorter padded with silence (one device
/// stopped early, or a crash cut the two at different flushes).
pub fn align(mut you: Vec<f32>, others: Vec<f32>, drift_ppm: Option<f64>) -> (Vec<f32>, Vec<f32>) {
    let mut others = match drift_ppm {
        Some(ppm) if ppm.abs() >= MIN_DRIFT_PPM && others.len() > 1 => {
            let len = (others.len() as f64 / (1.0 + ppm / 1e6)).round() as usize;
            stretch(&others, len.max(1))
        }
        _ => others,
    };
    let n = you.len().max(others.len());
    you.resize(n, 0.0);
    others.resize(n, 0.0);
    (you, others)
}

/// `pcm` resampled to `len` samples by linear interpolation: a drift of
/// parts per million moves a sample by a fraction of itself; nothing
/// audible is lost.
fn stretch(pcm: &[f32], len: usize) -> Vec<f32> {
    let step = (pcm.len() - 1) as f64 / (len - 1).max(1) as f64;
    (0..len)
        .map(|i| {
            let x = i as f64 * step;
            let j = (x.floor() as usize).min(pcm.len() - 1);
            let frac = (x - j as f64) as f32;
            let next = pcm.get(j + 1).copied().unwrap_or(pcm[j]);
            pcm[j] * (1.0 - frac) + next * frac
        })
        .collect()
}

/// One transcript from both: segments in time order, "You" first among the
/// speakers when you spoke first.
pub fn merge(mine: FileTranscript, theirs: FileTranscript, your_name: &str) -> FileTranscript {
    let their_labels = theirs.speakers.clone().unwrap_or_default();
    let mut rows: Vec<(crate::engine::TimedText, String, String)> = Vec::new();
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
    use crate::engine::TimedText;

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
        let you = vec![0.0; 160_000];
        let others: Vec<f32> = (0..160_016).map(|i| i as f32).collect();
        let (you, stretched) = align(you, others, Some(100.0));
        assert_eq!(stretched.len(), you.len());
        assert_eq!(stretched[0], 0.0);
        assert!((stretched[159_999] - 160_015.0).abs() < 1e-3);
        // The middle sample lands in the middle.
        assert!(
            (stretched[80_000] - 80_008.0).abs() < 0.01,
            "{}",
            stretched[80_000]
        );
        // One device stopped a second early (no drift measured): silence.
        let (you, others) = align(vec![0.5; 160_000], vec![0.5; 144_000], None);
        assert_eq!(others.len(), you.len());
        assert_eq!(others[150_000], 0.0);
        assert_eq!(others[100], 0.5);
        // A drift within the measurement's error is left alone.
        let (_, same) = align(vec![0.0; 4], vec![1.0, 2.0, 3.0, 4.0], Some(10.0));
        assert_eq!(same, [1.0, 2.0, 3.0, 4.0]);
    }
}
