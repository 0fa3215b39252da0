//! Transcript output formats: plain text, SRT, WebVTT and JSON.

use std::fmt::Write;

use crate::transcript::{clock, FileTranscript};

/// Output format of `utter transcribe` and the app's exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum Format {
    Txt,
    Srt,
    Vtt,
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Srt => "srt",
            Format::Vtt => "vtt",
            Format::Json => "json",
        }
    }
}

/// A format name that is none of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}` (expected txt, srt, vtt or json)")]
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
            other => other,
        };
        crate::settings::parse_value(name).map_err(|_| UnknownFormat(lower))
    }
}

/// Cue times made safe for subtitle players: monotonic, never overlapping,
/// never empty.
fn cues(t: &FileTranscript) -> Vec<(i64, i64, &str)> {
    let mut out: Vec<(i64, i64, &str)> = Vec::new();
    for s in &t.segments {
        let prev_end = out.last().map_or(0, |c| c.1);
        let start = s.start_ms.max(prev_end);
        let end = s.end_ms.max(start + 1);
        out.push((start, end, s.text.trim()));
    }
    out
}

pub fn render(t: &FileTranscript, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Txt => {
            let text = t.text();
            if !text.is_empty() {
                out.push_str(&text);
                out.push('\n');
            }
        }
        Format::Srt => {
            for (i, (a, b, text)) in cues(t).into_iter().enumerate() {
                let _ = write!(
                    out,
                    "{}\n{} --> {}\n{}\n\n",
                    i + 1,
                    clock(a, ','),
                    clock(b, ','),
                    text
                );
            }
        }
        Format::Vtt => {
            out.push_str("WEBVTT\n\n");
            for (a, b, text) in cues(t) {
                let _ = write!(out, "{} --> {}\n{}\n\n", clock(a, '.'), clock(b, '.'), text);
            }
        }
        Format::Json => {
            let value = serde_json::json!({
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
            out = serde_json::to_string_pretty(&value).expect("json");
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::TimedText;

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
        for format in [Format::Txt, Format::Srt, Format::Vtt, Format::Json] {
            let spelled = serde_json::to_value(format).unwrap();
            assert_eq!(spelled.as_str().unwrap().parse::<Format>(), Ok(format));
        }
        let err = "docx".parse::<Format>().unwrap_err().to_string();
        assert!(err.contains("expected txt, srt, vtt or json"), "{err}");
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
}
