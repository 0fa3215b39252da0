//! Voice activity detection: the Silero model scores 32 ms frames (run by the
//! engine), and [`Segmenter`] turns those scores into speech spans online.

mod segmenter;

pub use segmenter::{Segmenter, SegmenterConfig, SpeechSpan, FRAME_SAMPLES};

use std::path::Path;

use transcribe_cpp::{Model, Role, VadSession, VadSessionOptions};

use crate::engine::EngineError;

/// A loaded Silero VAD in streaming mode.
pub struct SpeechDetector {
    session: Scorer,
}

enum Scorer {
    Silero(VadSession),
    /// Tests of the dictation service: loud frames are speech.
    #[cfg(test)]
    Loudness {
        pending: Vec<f32>,
    },
}

impl SpeechDetector {
    pub fn load(path: &Path) -> Result<Self, EngineError> {
        let load_error = |message: String| EngineError::Load {
            path: path.to_path_buf(),
            message,
        };
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
        Ok(Self {
            session: Scorer::Silero(session),
        })
    }

    /// A detector that calls every 32 ms frame with an RMS over 0.05 speech.
    #[cfg(test)]
    pub(crate) fn loudness() -> Self {
        Self {
            session: Scorer::Loudness {
                pending: Vec::new(),
            },
        }
    }

    /// Scores 16 kHz mono audio; returns one speech probability per completed frame.
    pub fn feed(&mut self, pcm: &[f32]) -> Result<Vec<f32>, EngineError> {
        match &mut self.session {
            Scorer::Silero(session) => session
                .stream_feed(pcm)
                .map(|r| r.probs)
                .map_err(|e| EngineError::Run(format!("VAD: {e}"))),
            #[cfg(test)]
            Scorer::Loudness { pending } => {
                pending.extend_from_slice(pcm);
                let frame = FRAME_SAMPLES as usize;
                let whole = pending.len() / frame * frame;
                let probs = pending[..whole].chunks(frame).map(loudness).collect();
                pending.drain(..whole);
                Ok(probs)
            }
        }
    }

    /// Scores the partial last frame and resets the stream.
    pub fn flush(&mut self) -> Result<Vec<f32>, EngineError> {
        match &mut self.session {
            Scorer::Silero(session) => session
                .stream_flush()
                .map(|r| r.probs)
                .map_err(|e| EngineError::Run(format!("VAD: {e}"))),
            #[cfg(test)]
            Scorer::Loudness { pending } => {
                let last = (!pending.is_empty()).then(|| loudness(pending));
                pending.clear();
                Ok(last.into_iter().collect())
            }
        }
    }

    /// Speech spans of a whole clip (convenience for short audio and tests).
    pub fn detect(
        &mut self,
        pcm: &[f32],
        config: SegmenterConfig,
    ) -> Result<Vec<SpeechSpan>, EngineError> {
        match &mut self.session {
            Scorer::Silero(session) => session.stream_reset(),
            #[cfg(test)]
            Scorer::Loudness { pending } => pending.clear(),
        }
        let mut seg = Segmenter::new(config);
        let mut spans = Vec::new();
        let mut probs = self.feed(pcm)?;
        probs.extend(self.flush()?);
        for p in probs {
            spans.extend(seg.push(p));
        }
        spans.extend(seg.finish());
        for s in &mut spans {
            s.end = s.end.min(pcm.len() as u64);
        }
        Ok(spans)
    }
}

#[cfg(test)]
fn loudness(frame: &[f32]) -> f32 {
    let rms = (frame.iter().map(|x| x * x).sum::<f32>() / frame.len().max(1) as f32).sqrt();
    if rms > 0.05 {
        1.0
    } else {
        0.0
    }
}
