//! Voice activity detection: the Silero model scores 32 ms frames (run by the
//! engine, in a worker process of its own), and [`Segmenter`] turns those
//! scores into speech spans online.

mod segmenter;

pub use segmenter::{Segmenter, SegmenterConfig, SpeechSpan, FRAME_SAMPLES};

use std::path::Path;

use crate::{EngineError, SileroVad, VadHost};

/// A Silero VAD in streaming mode, in its own worker process where this
/// binary can host one (a crash in it is then survived: see
/// [`crate::VadHost`]), else in this process.
pub struct SpeechDetector {
    scorer: Scorer,
}

enum Scorer {
    Worker(VadHost),
    InProcess(SileroVad),
    /// Tests of the dictation service: loud frames are speech.
    #[cfg(any(test, feature = "test-support"))]
    Loudness {
        pending: Vec<f32>,
    },
}

impl SpeechDetector {
    /// Loads the detector in a worker process when this binary can host
    /// one, unless `UTTER_ENGINE_IN_PROCESS=1` asks for threads (as it does
    /// for the engine); in this process otherwise (test binaries, examples).
    pub fn load(path: &Path) -> Result<Self, EngineError> {
        let scorer = match crate::worker::worker_binary() {
            Some(exe) => Scorer::Worker(VadHost::start(&exe, path)?),
            None => Scorer::InProcess(SileroVad::load(path)?),
        };
        Ok(Self { scorer })
    }

    /// Frees the worker's memory while nobody dictates (the next feed or
    /// [`SpeechDetector::prewarm`] starts it again). True when a worker was
    /// running; a detector in this process stays.
    pub fn unload(&mut self) -> bool {
        match &mut self.scorer {
            Scorer::Worker(host) => host.unload(),
            _ => false,
        }
    }

    /// Starts an unloaded worker now, before the audio needs it.
    pub fn prewarm(&mut self) {
        if let Scorer::Worker(host) = &mut self.scorer {
            host.prewarm();
        }
    }

    /// Restarts of its worker since the last call, worded for the user.
    pub fn notices(&mut self) -> Vec<String> {
        match &mut self.scorer {
            Scorer::Worker(host) => host.notices(),
            _ => Vec::new(),
        }
    }

    /// A detector that calls every 32 ms frame with an RMS over 0.05 speech.
    #[cfg(any(test, feature = "test-support"))]
    pub fn loudness() -> Self {
        Self {
            scorer: Scorer::Loudness {
                pending: Vec::new(),
            },
        }
    }

    /// Scores 16 kHz mono audio; returns one speech probability per completed frame.
    pub fn feed(&mut self, pcm: &[f32]) -> Result<Vec<f32>, EngineError> {
        match &mut self.scorer {
            Scorer::Worker(host) => host.feed(pcm),
            Scorer::InProcess(silero) => silero.feed(pcm),
            #[cfg(any(test, feature = "test-support"))]
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
        match &mut self.scorer {
            Scorer::Worker(host) => host.flush(),
            Scorer::InProcess(silero) => silero.flush(),
            #[cfg(any(test, feature = "test-support"))]
            Scorer::Loudness { pending } => {
                let last = (!pending.is_empty()).then(|| loudness(pending));
                pending.clear();
                Ok(last.into_iter().collect())
            }
        }
    }

    /// A fresh stream: what was fed before is forgotten.
    fn reset(&mut self) -> Result<(), EngineError> {
        match &mut self.scorer {
            Scorer::Worker(host) => host.flush().map(drop),
            Scorer::InProcess(silero) => {
                silero.reset();
                Ok(())
            }
            #[cfg(any(test, feature = "test-support"))]
            Scorer::Loudness { pending } => {
                pending.clear();
                Ok(())
            }
        }
    }

    /// Speech spans of a whole clip (convenience for short audio and tests).
    pub fn detect(
        &mut self,
        pcm: &[f32],
        config: SegmenterConfig,
    ) -> Result<Vec<SpeechSpan>, EngineError> {
        self.reset()?;
        let mut seg = Segmenter::new(config);
        let mut probs = self.feed(pcm)?;
        probs.extend(self.flush()?);
        let mut spans = seg.push_all(probs);
        spans.extend(seg.finish());
        for s in &mut spans {
            s.end = s.end.min(pcm.len() as u64);
        }
        Ok(spans)
    }
}

#[cfg(any(test, feature = "test-support"))]
fn loudness(frame: &[f32]) -> f32 {
    let rms = (frame.iter().map(|x| x * x).sum::<f32>() / frame.len().max(1) as f32).sqrt();
    if rms > 0.05 {
        1.0
    } else {
        0.0
    }
}
