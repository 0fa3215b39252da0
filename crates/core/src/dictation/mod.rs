//! Live dictation: microphone → disk + streaming VAD → eager transcription →
//! text delivered to the focused app, driven by global hotkeys.
//!
//! Pipeline order: [`service`] serialises all inputs and owns the mic; a
//! [`recording::Dictation`] records, segments and hands spans to its
//! [`strategy`], which decides the engine runs;
//! [`trigger`] maps keys to intents; [`silence_stop`] ends a hands-free
//! dictation after a pause; [`events`] reports progress;
//! [`record_log`] keeps each recording's outcome so none is ever lost.

pub mod windows;

pub mod edit_commands;
pub mod events;
pub mod plan;
pub mod record_log;
pub mod recording;
mod recovery;
pub mod rewrite_step;
pub mod service;
pub mod silence_stop;
pub mod strategy;
pub mod submit;
pub mod trigger;

use std::path::Path;

use utter_postprocess::{Processed, TextRules};

use crate::transcribe::{transcribe_file, FileOptions, Segmentation};
use crate::transcript::FileTranscript;
use utter_engine::vad::SpeechDetector;
use utter_engine::Engine;

use events::DictationEvent;
use record_log::{RecordingRecord, RecordingStatus};

/// A recording transcribed again after the fact (at start-up, or retried
/// from the history): the engine's text through the rules a live dictation
/// gets, and the recording marked finished so no start transcribes it again.
pub fn recovered(wav: &Path, transcript: &FileTranscript, rules: &TextRules) -> Processed {
    let raw = crate::text::join_dictation(transcript.raw_segments.iter().map(String::as_str));
    let processed = rules.dictation(&raw, false);
    let record = RecordingRecord {
        status: RecordingStatus::Recovered,
        text: processed.text.clone(),
        model: transcript.model.clone(),
        audio_ms: transcript.duration_ms.max(0) as u64,
        finished_unix_ms: record_log::unix_ms(),
    };
    if let Err(e) = record_log::write_record(wav, &record) {
        // The text is not lost (the caller has it); the next start may transcribe it again.
        tracing::warn!(
            "{}: cannot mark the recording recovered: {e}",
            wav.display()
        );
    }
    processed
}

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
            Segmentation::Vad(&mut *vad),
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
        let Processed { text, raw, .. } = recovered(&wav, &transcript, rules);
        emit(DictationEvent::Recovered {
            audio_path: wav.display().to_string(),
            text,
            raw_text: raw,
        });
    }
}
