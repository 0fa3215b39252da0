//! Transcript output formats: plain text, Markdown, SRT, WebVTT and JSON; each
//! shows who spoke when the transcript has speakers, and is as before when not.

use std::fmt::Write;

use crate::subtitles;
use crate::transcript::{clock, FileTranscript};

/// Output format of `utter transcribe` and the app's exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum Format {
    Txt,
    /// Markdown: one paragraph per speaker turn (per segment without speakers), with its time.
    Md,
    Srt,
    Vtt,
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Md => "md",
            Format::Srt => "srt",
            Format::Vtt => "vtt",
            Format::Json => "json",
        }
    }
}

/// A format name that is none of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}` (expected txt, md, srt, vtt or json)")]
pub struct UnknownFormat(pub String);

/// The serde spellings in any case (`--format SRT`), and the names people
/// also use for two of them.
impl std::str::FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, UnknownFormat> {
        let lower = s.to_ascii_lowercase();
        let name = match lower.as_str() {
            "text" => "txt",
            "webvtt" => "vtt",
            "markdown" => "md",
            other => other,
        };
        crate::settings::parse_value(name).map_err(|_| UnknownFormat(lower))
    }
}

/// Cue times made safe for subtitle players: monotonic, never overlapping,
/// never empty; each with its segment's speaker, if any.
fn cues(t: &FileTranscript) -> Vec<(i64, i64, &str, Option<&str>)> {
    let mut out: Vec<(i64, i64, &str, Option<&str>)> = Vec::new();
    for (i, s) in t.segments.iter().enumerate() {
        let prev_end = out.last().map_or(0, |c| c.1);
        let start = s.start_ms.max(prev_end);
        let end = s.end_ms.max(start + 1);
        out.push((start, end, s.text.trim(), speaker(t, i)));
    }
    out
}

fn speaker(t: &FileTranscript, segment: usize) -> Option<&str> {
    t.speakers.as_ref()?.name_of(segment)
}

/// One speaker's consecutive segments: (start ms, speaker, text).
fn turns(t: &FileTranscript) -> Vec<(i64, Option<&str>, String)> {
    let mut out: Vec<(i64, Option<&str>, String)> = Vec::new();
    for (i, s) in t.segments.iter().enumerate() {
        let who = speaker(t, i);
        let text = s.text.trim();
        match out.last_mut() {
            // Without speakers, every segment is its own paragraph.
            Some(last) if t.speakers.is_some() && last.1 == who => {
                last.2 = crate::text::join_segments([last.2.as_str(), text]);
            }
            _ => out.push((s.start_ms, who, text.to_string())),
        }
    }
    out
}

/// `HH:MM:SS`.
fn seconds_clock(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

pub fn render(t: &FileTranscript, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Txt if t.speakers.is_some() => {
            for (_, who, text) in turns(t) {
                match who {
                    Some(who) => {
                        let _ = writeln!(out, "{who}: {text}");
                    }
                    None => {
                        let _ = writeln!(out, "{text}");
                    }
                }
            }
        }
        Format::Txt => {
            let text = t.text();
            if !text.is_empty() {
                out.push_str(&text);
                out.push('\n');
            }
        }
        Format::Md => {
            for (start, who, text) in turns(t) {
                if let Some(who) = who {
                    let _ = write!(out, "**{who}** ");
                }
                let _ = write!(out, "[{}] {text}\n\n", seconds_clock(start));
            }
        }
        Format::Srt => {
            for (i, (a, b, text, who)) in cues(t).into_iter().enumerate() {
                let who = who.map(|w| format!("{w}: ")).unwrap_or_default();
                let _ = write!(
                    out,
                    "{}\n{} --> {}\n{}\n\n",
                    i + 1,
                    clock(a, ','),
                    clock(b, ','),
                    subtitles::lines(&format!("{who}{text}")),
                );
            }
        }
        Format::Vtt => {
            out.push_str("WEBVTT\n\n");
            for (a, b, text, who) in cues(t) {
                // WebVTT's voice span: players show or style the speaker.
                let who = who.map(|w| format!("<v {w}>")).unwrap_or_default();
                let _ = write!(
                    out,
                    "{} --> {}\n{who}{}\n\n",
                    clock(a, '.'),
                    clock(b, '.'),
                    subtitles::lines(text)
                );
            }
        }
        Format::Json => {
            let mut value = serde_json::json!({
                "file": t.file,
                "model": t.model,
                "backend": t.backend,
                "device": t.device,
                "language": t.language,
                "duration_ms": t.duration_ms,
                "text": t.text(),
                "segments": t.segments,
                "warnings": t.warnings,
            });
            if let Some(labels) = &t.speakers {
                // Times in seconds as well: what diarization tools read.
                value["segments"] = t
                    .segments
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        serde_json::json!({
                            "start": s.start_ms as f64 / 1000.0,
                            "end": s.end_ms as f64 / 1000.0,
                            "start_ms": s.start_ms,
                            "end_ms": s.end_ms,
                            "speaker": labels.name_of(i),
                            "text": s.text,
                        })
                    })
                    .collect();
                value["speakers"] = serde_json::json!(labels.names);
            }
            out = serde_json::to_string_pretty(&value).expect("json");
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use utter_engine::TimedText;

    #[test]
    fn format_names_are_serdes_in_any_case_plus_two_common_ones() {
        for (name, format) in [
            ("srt", Format::Srt),
            ("SRT", Format::Srt),
            ("Json", Format::Json),
            ("text", Format::Txt),
            ("WebVTT", Format::Vtt),
        ] {
            assert_eq!(name.parse::<Format>(), Ok(format), "{name}");
        }
        assert_eq!("Markdown".parse::<Format>(), Ok(Format::Md));
        for format in [
            Format::Txt,
            Format::Md,
            Format::Srt,
            Format::Vtt,
            Format::Json,
        ] {
            let spelled = serde_json::to_value(format).unwrap();
            assert_eq!(spelled.as_str().unwrap().parse::<Format>(), Ok(format));
        }
        let err = "docx".parse::<Format>().unwrap_err().to_string();
        assert!(err.contains("expected txt, md, srt, vtt or json"), "{err}");
    }

    fn sample() -> FileTranscript {
        FileTranscript {
            model: "m".into(),
            duration_ms: 4_000_000,
            segments: vec![
                TimedText {
                    start_ms: 0,
                    end_ms: 1500,
                    text: " Hello there.".into(),
                },
                TimedText {
                    start_ms: 1400,
                    end_ms: 1400,
                    text: "Overlap.".into(),
                },
                TimedText {
                    start_ms: 3_723_004,
                    end_ms: 3_725_000,
                    text: "Late.".into(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn srt_has_indices_comma_times_and_no_overlap() {
        let srt = render(&sample(), Format::Srt);
        assert!(srt.starts_with("1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n2\n00:00:01,500 --> 00:00:01,501\nOverlap."));
        assert!(srt.contains("3\n01:02:03,004 --> 01:02:05,000\nLate.\n"));
    }

    #[test]
    fn vtt_has_header_and_dot_times() {
        let vtt = render(&sample(), Format::Vtt);
        assert!(vtt.starts_with("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n"));
    }

    #[test]
    fn json_and_txt_carry_text() {
        assert_eq!(
            render(&sample(), Format::Txt),
            "Hello there. Overlap. Late.\n"
        );
        let v: serde_json::Value = serde_json::from_str(&render(&sample(), Format::Json)).unwrap();
        assert_eq!(v["model"], "m");
        assert_eq!(v["segments"][2]["start_ms"], 3_723_004);
        assert_eq!(render(&FileTranscript::default(), Format::Txt), "");
    }

    /// `sample()` with Speaker 1, Speaker 2, Speaker 2 (the last two make one turn).
    fn with_speakers() -> FileTranscript {
        let mut t = sample();
        t.speakers = Some(crate::transcript::SpeakerLabels {
            names: vec!["Speaker 1".into(), "Speaker 2".into()],
            of_segment: vec![Some(0), Some(1), Some(1)],
        });
        t
    }

    #[test]
    fn markdown_has_a_paragraph_per_turn_with_its_speaker_and_time() {
        assert_eq!(
            render(&with_speakers(), Format::Md),
            "**Speaker 1** [00:00:00] Hello there.\n\n**Speaker 2** [00:00:01] Overlap. Late.\n\n"
        );
        assert_eq!(
            render(&sample(), Format::Md),
            "[00:00:00] Hello there.\n\n[00:00:01] Overlap.\n\n[01:02:03] Late.\n\n"
        );
    }

    #[test]
    fn subtitles_and_text_name_the_speaker() {
        let srt = render(&with_speakers(), Format::Srt);
        assert!(
            srt.starts_with("1\n00:00:00,000 --> 00:00:01,500\nSpeaker 1: Hello there.\n\n2\n"),
            "{srt}"
        );
        assert!(srt.contains("\nSpeaker 2: Late.\n"), "{srt}");
        let vtt = render(&with_speakers(), Format::Vtt);
        assert!(
            vtt.starts_with("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n<v Speaker 1>Hello there.\n"),
            "{vtt}"
        );
        assert_eq!(
            render(&with_speakers(), Format::Txt),
            "Speaker 1: Hello there.\nSpeaker 2: Overlap. Late.\n"
        );
    }

    #[test]
    fn json_gives_each_segment_seconds_and_a_speaker_and_the_speaker_list() {
        let v: serde_json::Value =
            serde_json::from_str(&render(&with_speakers(), Format::Json)).unwrap();
        assert_eq!(v["speakers"], serde_json::json!(["Speaker 1", "Speaker 2"]));
        let last = &v["segments"][2];
        assert_eq!(last["start"], 3723.004);
        assert_eq!(last["end"], 3725.0);
        assert_eq!(last["speaker"], "Speaker 2");
        assert_eq!(last["text"], "Late.");
        // Without speakers the JSON is as it always was.
        let plain: serde_json::Value =
            serde_json::from_str(&render(&sample(), Format::Json)).unwrap();
        assert!(plain.get("speakers").is_none());
        assert!(plain["segments"][0].get("speaker").is_none());
    }
}
