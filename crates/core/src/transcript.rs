//! A file's transcript in file time: what the file pipeline produces and
//! every export format reads.

use std::path::PathBuf;

use utter_models::diarize::SpeakerTurn;
use utter_postprocess::TextRules;

use utter_engine::TimedText;

/// The transcript of one file, in file time.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct FileTranscript {
    pub file: PathBuf,
    pub model: String,
    /// Where the model ran: `cpu`, `vulkan`, `cuda`, `metal`...
    pub backend: String,
    /// The device the model ran on, with the engine's description of it
    /// (`Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits)`).
    pub device: String,
    pub language: Option<String>,
    pub duration_ms: i64,
    pub segments: Vec<TimedText>,
    /// Problems that did not stop the transcription (a garbled window, a
    /// file cut off before its end).
    pub warnings: Vec<String>,
    /// The file ended before its header said: the transcript covers the
    /// decoded part, and `warnings` says why. The CLI exits non-zero for it.
    #[serde(skip)]
    pub truncated: bool,
    /// The engine's text of each segment, before the text rules.
    #[serde(skip)]
    pub raw_segments: Vec<String>,
    /// Who said each segment, when the recording was diarized (`--speakers`);
    /// the exports show them only then.
    #[serde(skip)]
    pub speakers: Option<SpeakerLabels>,
}

/// The speakers of a transcript's segments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpeakerLabels {
    /// Display names in order of first appearance in the transcript: `Speaker 1`, `Speaker 2`…
    pub names: Vec<String>,
    /// Per segment, an index into `names`; `None` where no speaker was heard near it.
    pub of_segment: Vec<Option<usize>>,
}

impl SpeakerLabels {
    /// The user's names for the speakers, in order of first appearance
    /// ("Anna", "Ben"); speakers past the list keep `Speaker N`, a blank
    /// name keeps its speaker's. Returns how many names had no speaker.
    pub fn rename(&mut self, names: &[String]) -> usize {
        for (label, name) in self.names.iter_mut().zip(names) {
            let name = name.trim();
            if !name.is_empty() {
                *label = name.to_string();
            }
        }
        names.len().saturating_sub(self.names.len())
    }

    /// The name of segment `i`'s speaker.
    pub fn name_of(&self, i: usize) -> Option<&str> {
        let who = (*self.of_segment.get(i)?)?;
        self.names.get(who).map(String::as_str)
    }
}

/// A segment further than this from every turn gets no speaker: it is not
/// anybody's by proximity.
const NEAREST_TURN_MAX_S: f64 = 1.0;

/// The diarized speaker who talks most during `[start_s, end_s]`; where no
/// turn overlaps it (a segment's times are the engine's, and can fall in a
/// pause), the nearest turn within [`NEAREST_TURN_MAX_S`].
fn speaker_of(start_s: f64, end_s: f64, turns: &[SpeakerTurn]) -> Option<usize> {
    let mut talk: Vec<f64> = Vec::new();
    for t in turns {
        let overlap = end_s.min(t.end_s) - start_s.max(t.start_s);
        if overlap > 0.0 {
            if talk.len() <= t.speaker {
                talk.resize(t.speaker + 1, 0.0);
            }
            talk[t.speaker] += overlap;
        }
    }
    let most = talk
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(who, _)| who);
    most.or_else(|| {
        turns
            .iter()
            .map(|t| {
                (
                    t.speaker,
                    (t.start_s - end_s).max(start_s - t.end_s).max(0.0),
                )
            })
            .filter(|(_, gap)| *gap <= NEAREST_TURN_MAX_S)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(who, _)| who)
    })
}

impl FileTranscript {
    /// The whole text, segments joined with single spaces.
    pub fn text(&self) -> String {
        crate::text::join_segments(self.segments.iter().map(|s| s.text.as_str()))
    }

    /// Who speaks segment `i`, when the speakers were told apart.
    pub fn speaker_of(&self, i: usize) -> Option<&str> {
        self.speakers.as_ref()?.name_of(i)
    }

    /// The text as a line per turn, `Speaker: words` (consecutive segments
    /// of one speaker joined); the plain [`text`](Self::text) when nobody's
    /// speakers were told apart.
    pub fn text_by_speaker(&self) -> String {
        if self.speakers.is_none() {
            return self.text();
        }
        let mut lines: Vec<(&str, Vec<&str>)> = Vec::new();
        for (i, s) in self.segments.iter().enumerate() {
            let (who, text) = (self.speaker_of(i).unwrap_or(""), s.text.trim());
            if text.is_empty() {
                continue;
            }
            match lines.last_mut() {
                Some((last, said)) if *last == who => said.push(text),
                _ => lines.push((who, vec![text])),
            }
        }
        lines
            .into_iter()
            .map(|(who, said)| {
                let said = crate::text::join_segments(said);
                if who.is_empty() {
                    said
                } else {
                    format!("{who}: {said}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The engine's whole text, where the text rules changed it.
    pub fn raw_text(&self) -> Option<String> {
        let raw = crate::text::join_segments(self.raw_segments.iter().map(String::as_str));
        (raw != self.text()).then_some(raw)
    }

    /// Gives each segment the diarized speaker who talks most during it (segment by
    /// segment: the engine's segments carry no word times to split them by), and
    /// numbers the speakers by their first segment.
    pub fn label_speakers(&mut self, turns: &[SpeakerTurn]) {
        let mut renumbered: Vec<usize> = Vec::new();
        let of_segment = self
            .segments
            .iter()
            .map(|s| {
                let who = speaker_of(s.start_ms as f64 / 1000.0, s.end_ms as f64 / 1000.0, turns)?;
                Some(match renumbered.iter().position(|&d| d == who) {
                    Some(i) => i,
                    None => {
                        renumbered.push(who);
                        renumbered.len() - 1
                    }
                })
            })
            .collect();
        self.speakers = Some(SpeakerLabels {
            names: (1..=renumbered.len())
                .map(|n| format!("Speaker {n}"))
                .collect(),
            of_segment,
        });
    }

    pub(crate) fn push_segment(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        raw: String,
        rules: &TextRules,
    ) {
        let text = rules.transcript(&raw).text;
        // A segment that was only a filler is gone.
        if text.is_empty() && !raw.trim().is_empty() {
            return;
        }
        self.segments.push(TimedText {
            start_ms,
            end_ms,
            text,
        });
        self.raw_segments.push(raw);
    }
}

/// `HH:MM:SS<sep>mmm`.
pub fn clock(ms: i64, sep: char) -> String {
    let ms = ms.max(0);
    format!(
        "{:02}:{:02}:{:02}{sep}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(start_s: f64, end_s: f64, speaker: usize) -> SpeakerTurn {
        SpeakerTurn {
            start_s,
            end_s,
            speaker,
        }
    }

    fn transcript(spans: &[(i64, i64)]) -> FileTranscript {
        FileTranscript {
            segments: spans
                .iter()
                .map(|&(start_ms, end_ms)| TimedText {
                    start_ms,
                    end_ms,
                    text: "words".into(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn each_segment_goes_to_the_speaker_who_talks_most_in_it() {
        // Diarized speaker 1 talks first in the turns but only in the second segment.
        let turns = [turn(0.0, 2.0, 0), turn(1.8, 6.0, 1), turn(5.5, 9.0, 0)];
        let mut t = transcript(&[(0, 1900), (2000, 5600), (5800, 9000), (20_000, 21_000)]);
        t.label_speakers(&turns);
        let labels = t.speakers.unwrap();
        assert_eq!(labels.names, ["Speaker 1", "Speaker 2"]);
        assert_eq!(labels.of_segment, [Some(0), Some(1), Some(0), None]);
        assert_eq!(labels.name_of(1), Some("Speaker 2"));
        assert_eq!(labels.name_of(3), None);
    }

    #[test]
    fn a_segment_in_a_pause_takes_the_nearest_turn_and_speakers_are_numbered_by_the_transcript() {
        // Diarized speaker 0 has no segment: the transcript's first voice is Speaker 1.
        let turns = [turn(0.0, 1.0, 0), turn(3.0, 5.0, 1), turn(6.5, 8.0, 2)];
        let mut t = transcript(&[(5200, 5800), (3000, 4000)]);
        t.label_speakers(&turns);
        let labels = t.speakers.unwrap();
        assert_eq!(labels.names, ["Speaker 1"]);
        assert_eq!(labels.of_segment, [Some(0), Some(0)]);
    }

    #[test]
    fn text_by_speaker_is_a_line_per_turn() {
        let mut t = FileTranscript::default();
        for (i, text) in ["Hello there.", "How are you?", "Fine.", "Good."]
            .iter()
            .enumerate()
        {
            t.segments.push(utter_engine::TimedText {
                start_ms: i as i64 * 1000,
                end_ms: i as i64 * 1000 + 900,
                text: format!(" {text}"),
            });
        }
        assert_eq!(t.text_by_speaker(), t.text(), "no speakers: the plain text");
        t.speakers = Some(SpeakerLabels {
            names: vec!["You".into(), "Speaker 1".into()],
            of_segment: vec![Some(0), Some(0), Some(1), None],
        });
        assert_eq!(
            t.text_by_speaker(),
            "You: Hello there. How are you?\nSpeaker 1: Fine.\nGood."
        );
        assert_eq!(t.speaker_of(2), Some("Speaker 1"));
        assert_eq!(t.speaker_of(3), None);
    }

    #[test]
    fn speakers_take_the_users_names_in_order_of_appearance() {
        let mut labels = SpeakerLabels {
            names: vec!["Speaker 1".into(), "Speaker 2".into(), "Speaker 3".into()],
            of_segment: vec![Some(0), Some(1), Some(2), Some(0)],
        };
        let unused = labels.rename(&["Anna".into(), " ".into()]);
        assert_eq!(unused, 0);
        assert_eq!(labels.names, ["Anna", "Speaker 2", "Speaker 3"]);
        assert_eq!(labels.name_of(3), Some("Anna"));
        let unused = labels.rename(&["A".into(), "B".into(), "C".into(), "D".into()]);
        assert_eq!((unused, labels.names.join(",")), (1, "A,B,C".to_string()));
    }
}
