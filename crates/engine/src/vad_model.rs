//! Silero VAD through transcribe.cpp, in this process: what the voice
//! detector's worker runs (and, where no worker can be started, the app).

use std::path::Path;

use transcribe_cpp::{Model, Role, VadSession, VadSessionOptions};

use super::EngineError;

/// A loaded Silero VAD in streaming mode.
pub struct SileroVad(VadSession);

impl SileroVad {
    pub fn load(path: &Path) -> Result<Self, EngineError> {
        let load_error = |message: String| EngineError::Load {
            path: path.to_path_buf(),
            message,
        };
        super::backends::ensure_loaded().map_err(|e| load_error(e.to_string()))?;
        let model = Model::load(path).map_err(|e| load_error(e.to_string()))?;
        if !model.roles().contains(Role::Vad) {
            return Err(load_error(format!(
                "`{}` is not a VAD model",
                model.variant()
            )));
        }
        let session = model
            .vad_session_with(&VadSessionOptions { n_threads: 1 })
            .map_err(|e| load_error(e.to_string()))?;
        Ok(Self(session))
    }

    /// One speech probability per completed 32 ms frame.
    pub fn feed(&mut self, pcm: &[f32]) -> Result<Vec<f32>, EngineError> {
        self.0
            .stream_feed(pcm)
            .map(|r| r.probs)
            .map_err(|e| EngineError::Run(format!("VAD: {e}")))
    }

    /// Scores the partial last frame and resets the stream.
    pub fn flush(&mut self) -> Result<Vec<f32>, EngineError> {
        self.0
            .stream_flush()
            .map(|r| r.probs)
            .map_err(|e| EngineError::Run(format!("VAD: {e}")))
    }

    pub fn reset(&mut self) {
        self.0.stream_reset();
    }
}
