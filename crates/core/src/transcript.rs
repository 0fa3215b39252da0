//! A file's transcript in file time: what the file pipeline produces and
//! every export format reads.

use std::path::PathBuf;

use utter_postprocess::TextRules;

use crate::engine::TimedText;

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
}

impl FileTranscript {
    /// The whole text, segments joined with single spaces.
    pub fn text(&self) -> String {
        crate::text::join_segments(self.segments.iter().map(|s| s.text.as_str()))
    }

    /// The engine's whole text, where the text rules changed it.
    pub fn raw_text(&self) -> Option<String> {
        let raw = crate::text::join_segments(self.raw_segments.iter().map(String::as_str));
        (raw != self.text()).then_some(raw)
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
