//! Live dictation: microphone → disk + streaming VAD → eager transcription →
//! text delivered to the focused app, driven by global hotkeys.
//!
//! Pipeline order: [`service`] serialises all inputs and owns the mic; a
//! [`session::Dictation`] records, segments and queues engine work;
//! [`trigger`] maps keys to intents; [`events`] reports progress;
//! [`record_log`] keeps each recording's outcome so none is ever lost.

pub mod context;
pub mod defaults;
pub mod events;
pub mod record_log;
pub mod service;
pub mod session;
pub mod trigger;

use std::path::Path;

use crate::engine::Engine;
use crate::postprocess::{Processed, TextRules};
use crate::transcribe::{transcribe_file, FileOptions};
use crate::vad::SpeechDetector;

use events::DictationEvent;
use record_log::{RecordingRecord, RecordingStatus};

/// Transcribes recordings a previous run left unfinished (crash, kill, power
/// loss) and marks them recovered. Their text is reported, never pasted:
/// the user is not where they were.
pub fn recover_unfinished(
    dir: &Path,
    engine: &Engine,
    vad: &mut SpeechDetector,
    model_name: &str,
    rules: &TextRules,
    emit: &mut dyn FnMut(DictationEvent),
) {
    for wav in record_log::unfinished(dir) {
        let result = transcribe_file(
            std::slice::from_ref(engine),
            Some(&mut *vad),
            &wav,
            model_name,
            &FileOptions::default(),
            |_| {},
        );
        let transcript = match result {
            // A WAV cut off by a crash may claim more audio than it has: its
            // transcript covers what is there (`truncated`), which is all of it.
            Ok(t) => t,
            Err(e) => {
                emit(DictationEvent::Error {
                    message: format!("recovering {}: {e}", wav.display()),
                });
                continue;
            }
        };
        let raw = crate::text::join_dictation(transcript.segments.iter().map(|s| s.text.as_str()));
        let Processed { text, raw } = rules.dictation(&raw, false);
        let _ = record_log::write_record(
            &wav,
            &RecordingRecord {
                status: RecordingStatus::Recovered,
                text: text.clone(),
                model: model_name.to_string(),
                audio_ms: transcript.duration_ms.max(0) as u64,
                finished_unix_ms: record_log::unix_ms(),
            },
        );
        emit(DictationEvent::Recovered {
            audio_path: wav.display().to_string(),
            text,
            raw_text: raw,
        });
    }
}
