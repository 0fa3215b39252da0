//! Speaker diarization by a model of the engine's own (the DIARIZE role:
//! NVIDIA's Sortformer, `Model::diarize_session`), in this process, as the
//! voice detector's model can run. Utter's own diarization (pyannote
//! segmentation + CAM++, crates/diarize) needs no such model; this is the
//! choice for a user who has one. Sortformer weights are only on a model hub,
//! so here only the refusal of a model without the role is tested.

use std::path::Path;

use transcribe_cpp::{
    DiarizeExtension, DiarizeOptions, DiarizeSession, DiarizeSessionOptions, Model, Role,
    SortformerDiarizeOptions, SortformerPreset,
};

use super::EngineError;

/// Who spoke when, as the model tells it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiarizedTurn {
    pub start_ms: i64,
    pub end_ms: i64,
    /// The model's own speaker number.
    pub speaker: usize,
}

/// A loaded diarization model.
pub struct EngineDiarizer {
    session: DiarizeSession,
    arch: String,
}

impl EngineDiarizer {
    /// Loads `path`; a model without the DIARIZE role is refused by name.
    pub fn load(path: &Path, threads: usize) -> Result<Self, EngineError> {
        let load_error = |message: String| EngineError::Load {
            path: path.to_path_buf(),
            message,
        };
        super::backends::ensure_loaded().map_err(|e| load_error(e.to_string()))?;
        let model = Model::load(path).map_err(|e| load_error(e.to_string()))?;
        if !model.roles().contains(Role::Diarize) {
            return Err(load_error(format!(
                "`{}` cannot tell speakers apart: it has no diarization role (a Sortformer model has one)",
                model.variant()
            )));
        }
        let session = model
            .diarize_session_with(&DiarizeSessionOptions {
                n_threads: threads as i32,
            })
            .map_err(|e| load_error(e.to_string()))?;
        Ok(Self {
            session,
            arch: model.arch(),
        })
    }

    /// The turns of 16 kHz mono `pcm`, whole file at once (Sortformer's
    /// offline operating point, ~30 s lookahead).
    pub fn run(&mut self, pcm: &[f32]) -> Result<Vec<DiarizedTurn>, EngineError> {
        let family = self
            .arch
            .to_ascii_lowercase()
            .contains("sortformer")
            .then_some(DiarizeExtension::Sortformer(SortformerDiarizeOptions {
                preset: Some(SortformerPreset::VeryHighLatency),
            }));
        let segments = self
            .session
            .run(pcm, &DiarizeOptions { family })
            .map_err(|e| EngineError::Run(format!("diarization: {e}")))?;
        Ok(segments
            .into_iter()
            .filter(|s| s.t1_ms > s.t0_ms && s.speaker_id >= 0)
            .map(|s| DiarizedTurn {
                start_ms: s.t0_ms,
                end_ms: s.t1_ms,
                speaker: s.speaker_id as usize,
            })
            .collect())
    }
}
