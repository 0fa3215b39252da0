//! The live transcript while a meeting records: each channel cut at its
//! pauses by the voice detector, each finished turn transcribed at once.
//!
//! Live text is for following along; the transcript written at the end is
//! made again from the whole recording, with the others told apart
//! ([`super::transcribe_meeting`]). Here the others are one voice, and a
//! turn of the microphone that the loudspeaker explains is left out, as it
//! is there.

use std::collections::VecDeque;
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};
use utter_models::diarize::echo::{loudspeaker_spans, EchoOptions};
use utter_postprocess::TextRules;

use super::Channel;
use crate::audio::{samples_to_ms, ENGINE_RATE};
use utter_engine::vad::{Segmenter, SegmenterConfig, SpeechDetector, SpeechSpan};
use utter_engine::{Engine, RunParams};

/// One turn of the live transcript, in meeting time.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveLine {
    pub channel: Channel,
    pub start_ms: u64,
    pub end_ms: u64,
    pub text: String,
}

/// Audio of one channel, as the recorder wrote it.
pub type LiveAudio = (Channel, Vec<f32>);

/// Turns split at pauses this long: a sentence or two of a conversation.
fn live_segmenter() -> SegmenterConfig {
    SegmenterConfig {
        min_silence_ms: 600,
        max_segment_ms: 20_000,
        soft_max_ms: 12_000,
        ..SegmenterConfig::for_files()
    }
}

/// A turn of the microphone more than this much explained by the
/// loudspeaker is the others', heard again, and not transcribed at all.
const ECHO_SHARE: f64 = 0.5;
/// Audio kept before the present while nobody speaks: more than a turn's
/// pad reaches back.
const PAD_KEPT: u64 = ENGINE_RATE as u64 / 2;
/// The others' audio kept for that comparison.
const OTHERS_KEPT_S: usize = 40;

/// How a live transcript is made.
pub struct LiveConfig {
    pub engine: Engine,
    pub you: SpeechDetector,
    pub others: SpeechDetector,
    pub language: Option<String>,
    pub vocabulary: Vec<String>,
    pub rules: TextRules,
}

/// The live transcript of a meeting being recorded: feed it the recorder's
/// audio ([`LiveTranscriber::audio`]), read [`LiveTranscriber::lines`].
pub struct LiveTranscriber {
    audio: Sender<LiveAudio>,
    lines: Receiver<LiveLine>,
    thread: Option<JoinHandle<Option<Engine>>>,
}

impl LiveTranscriber {
    /// Starts the thread; when it cannot start, the config (and its engine)
    /// comes back.
    pub fn start(config: LiveConfig) -> Result<Self, (std::io::Error, Box<LiveConfig>)> {
        let (audio, audio_rx) = unbounded();
        let (lines_tx, lines) = unbounded();
        let (config_tx, config_rx) = crossbeam_channel::bounded::<LiveConfig>(1);
        let spawned = std::thread::Builder::new()
            .name("utter-meeting-live".into())
            .spawn(move || {
                let config = config_rx.recv().ok()?;
                Some(run(config, audio_rx, lines_tx))
            });
        let thread = match spawned {
            Ok(t) => t,
            Err(e) => return Err((e, Box::new(config))),
        };
        config_tx
            .send(config)
            .expect("the thread waits for its config");
        Ok(Self {
            audio,
            lines,
            thread: Some(thread),
        })
    }

    /// Where the recorder sends what it writes.
    pub fn audio(&self) -> Sender<LiveAudio> {
        self.audio.clone()
    }

    pub fn lines(&self) -> &Receiver<LiveLine> {
        &self.lines
    }

    /// Transcribes what is left (the turns still open) and ends; gives back
    /// the lines not read yet and the engine (for the final transcript).
    pub fn finish(self) -> (Vec<LiveLine>, Option<Engine>) {
        let Self {
            audio,
            lines,
            thread,
        } = self;
        drop(audio);
        let engine = thread.and_then(|t| t.join().ok().flatten());
        (lines.try_iter().collect(), engine)
    }
}

/// One channel: its detector, its open turn and the audio since it began.
struct Track {
    channel: Channel,
    detector: SpeechDetector,
    segmenter: Segmenter,
    /// Audio from sample `kept_from` on.
    kept: VecDeque<f32>,
    kept_from: u64,
    /// Samples received.
    heard: u64,
    /// The detector failed: this channel has no live text (the final
    /// transcript still has it).
    failed: bool,
}

impl Track {
    fn new(channel: Channel, detector: SpeechDetector) -> Self {
        Self {
            channel,
            detector,
            segmenter: Segmenter::new(live_segmenter()),
            kept: VecDeque::new(),
            kept_from: 0,
            heard: 0,
            failed: false,
        }
    }

    /// Takes audio; returns the turns it closed.
    fn push(&mut self, pcm: &[f32]) -> Vec<SpeechSpan> {
        self.kept.extend(pcm);
        self.heard += pcm.len() as u64;
        let mut spans = Vec::new();
        if !self.failed {
            match self.detector.feed(pcm) {
                Ok(probs) => spans = self.segmenter.push_all(probs),
                Err(e) => {
                    tracing::warn!(channel = %self.channel, "live transcript: voice detector failed: {e}");
                    self.failed = true;
                }
            }
        }
        spans
    }

    /// The audio of `[start, end)` (what is still kept of it).
    fn slice(&self, span: SpeechSpan) -> Vec<f32> {
        let from = span.start.saturating_sub(self.kept_from) as usize;
        let to = (span.end.saturating_sub(self.kept_from) as usize).min(self.kept.len());
        self.kept.range(from.min(to)..to).copied().collect()
    }

    /// Forgets audio before `sample` (and all but `keep` samples at most).
    fn forget_before(&mut self, sample: u64) {
        let drop = sample
            .saturating_sub(self.kept_from)
            .min(self.kept.len() as u64);
        self.kept.drain(..drop as usize);
        self.kept_from += drop;
    }

    /// Where the audio still needed starts: the open turn's start (with its
    /// pad), or the pad a turn starting now reaches back to.
    fn needed_from(&self) -> u64 {
        self.segmenter
            .open_start()
            .unwrap_or(self.heard.saturating_sub(PAD_KEPT))
    }
}

fn run(config: LiveConfig, audio: Receiver<LiveAudio>, lines: Sender<LiveLine>) -> Engine {
    let LiveConfig {
        engine,
        you,
        others,
        language,
        vocabulary,
        rules,
    } = config;
    let mut you = Track::new(Channel::You, you);
    let mut others = Track::new(Channel::Others, others);
    let params = RunParams {
        language,
        vocabulary,
        ..Default::default()
    };
    let transcribe = |pcm: Vec<f32>| -> Option<String> {
        match engine.transcribe(vec![pcm], params.clone()) {
            Ok(mut replies) => {
                let raw = replies.pop().map(|u| u.text).unwrap_or_default();
                let text = rules.transcript(&raw).text;
                (!text.trim().is_empty()).then(|| text.trim().to_string())
            }
            Err(e) => {
                tracing::warn!("live transcript: {e}");
                None
            }
        }
    };
    let handle = |track: &mut Track, others: Option<&Track>, span: SpeechSpan| {
        let mut pcm = track.slice(span);
        if let Some(others) = others {
            // What the loudspeaker played then, heard by the microphone, is
            // silenced (as in the final transcript); a turn that was only
            // that is not yours.
            let played = others.slice(span);
            let mut explained = 0.0;
            for (a, b) in loudspeaker_spans(&pcm, &played, &EchoOptions::default()) {
                let n = pcm.len();
                let at = |s: f64| ((s * ENGINE_RATE as f64) as usize).min(n);
                pcm[at(a)..at(b)].fill(0.0);
                explained += b - a;
            }
            if explained > ECHO_SHARE * pcm.len() as f64 / ENGINE_RATE as f64 {
                return;
            }
        }
        if let Some(text) = transcribe(pcm) {
            let _ = lines.send(LiveLine {
                channel: track.channel,
                start_ms: samples_to_ms(span.start),
                end_ms: samples_to_ms(span.end),
                text,
            });
        }
    };
    for (channel, pcm) in audio.iter() {
        match channel {
            Channel::You => {
                for span in you.push(&pcm) {
                    handle(&mut you, Some(&others), span);
                }
            }
            Channel::Others => {
                for span in others.push(&pcm) {
                    handle(&mut others, None, span);
                }
            }
        }
        you.forget_before(you.needed_from());
        // The others' audio is kept a while for the microphone's comparison.
        let keep_from = others.needed_from().min(
            others
                .heard
                .saturating_sub((OTHERS_KEPT_S * ENGINE_RATE as usize) as u64),
        );
        others.forget_before(keep_from);
    }
    // The recording stopped: the turns still open end here.
    if let Some(span) = others.segmenter.finish() {
        handle(&mut others, None, span);
    }
    if let Some(span) = you.segmenter.finish() {
        handle(&mut you, Some(&others), span);
    }
    engine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_track_keeps_only_the_audio_still_needed() {
        let mut track = Track::new(Channel::You, SpeechDetector::loudness());
        // 1 s of silence, 1 s of loud "speech", 1 s of silence.
        let mut spans = track.push(&vec![0.0; 16_000]);
        track.forget_before(track.needed_from());
        assert_eq!(
            track.kept_from, 8_000,
            "silence is forgotten, but for a pad's worth"
        );
        spans.extend(track.push(&vec![0.5; 16_000]));
        track.forget_before(track.needed_from());
        spans.extend(track.push(&vec![0.0; 16_000]));
        assert_eq!(spans.len(), 1, "{spans:?}");
        let pcm = track.slice(spans[0]);
        assert!(
            pcm.iter().filter(|s| **s == 0.5).count() >= 15_000,
            "the turn's audio is whole"
        );
    }
}
