//! After a dictation's last window run: each window's text is checked
//! against the speech the VAD heard in it ([`crate::coverage`]). Where the
//! text ends well before the speech, the engine runs over the rest (no
//! prompt, no prefix: they are what led the model to stop) and the texts are
//! joined; speech that still yields nothing is counted, and the user is told.

use crate::coverage::{self, Coverage, TextEnd};
use crossbeam_channel::Select;

use utter_engine::vad::SpeechSpan;
use utter_engine::{Run, RunParams, Utterance};

use super::events::DictationEvent;
use super::strategy::{RunContext, Tally};
use super::windows::SpeechWindows;

/// Runs over the rest of one window: a second one only when the first also
/// stopped short.
const MAX_ROUNDS: u32 = 2;

/// The coverage check of a dictation's windows.
#[derive(Default)]
pub(super) struct Recovery {
    /// Where each window's text ends, by its latest run.
    ends: Vec<TextEnd>,
    phase: Phase,
}

#[derive(Default)]
enum Phase {
    /// The audio is still coming (or the windows still running).
    #[default]
    Listening,
    /// All audio is in: the windows from `window` on are still to check.
    Checking {
        spans: Vec<SpeechSpan>,
        window: usize,
        round: u32,
    },
    /// A run over the rest of `window`, from `from` (a sample of the dictation).
    Running {
        spans: Vec<SpeechSpan>,
        window: usize,
        round: u32,
        from: u64,
        missing_ms: u64,
        run: Run,
    },
    Done,
}

impl Recovery {
    /// A window run finished: where its text ends (from the window's start).
    pub fn run_finished(&mut self, window: usize, end: TextEnd) {
        self.set_end(window, end);
    }

    fn set_end(&mut self, window: usize, end: TextEnd) {
        if self.ends.len() <= window {
            self.ends.resize(window + 1, TextEnd::Unknown);
        }
        self.ends[window] = end;
    }

    /// All audio is in and every span closed: checking may begin once the
    /// window runs are done.
    pub fn audio_done(&mut self, spans: &[SpeechSpan]) {
        if matches!(self.phase, Phase::Listening) {
            self.phase = Phase::Checking {
                spans: spans.to_vec(),
                window: 0,
                round: 0,
            };
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Adds the run in flight, if any, to what `select` waits on.
    pub fn wait_on<'a>(&'a self, select: &mut Select<'a>) {
        if let Phase::Running { run, .. } = &self.phase {
            select.recv(run.reply_channel());
        }
    }

    /// A cancelled dictation: nothing more to run.
    pub fn abort(&mut self) {
        if let Phase::Running { run, .. } = &self.phase {
            run.cancel();
        }
        self.phase = Phase::Done;
    }

    /// Advances the check: collects the run in flight and starts the next
    /// one due, while `windows` has nothing of its own to run.
    pub fn poll(
        &mut self,
        id: u64,
        windows: &mut SpeechWindows,
        cx: &RunContext,
        tally: &mut Tally,
        emit: &mut dyn FnMut(DictationEvent),
    ) {
        loop {
            match std::mem::take(&mut self.phase) {
                Phase::Listening => return,
                Phase::Done => {
                    self.phase = Phase::Done;
                    return;
                }
                Phase::Running {
                    spans,
                    window,
                    round,
                    from,
                    missing_ms,
                    run,
                } => {
                    let Some(result) = run.try_result() else {
                        self.phase = Phase::Running {
                            spans,
                            window,
                            round,
                            from,
                            missing_ms,
                            run,
                        };
                        return;
                    };
                    let u = result
                        .map(|mut us| us.pop().unwrap_or_default())
                        .unwrap_or_else(|e| {
                            tracing::warn!("a run over the rest of a dictation failed: {e}");
                            Utterance::default()
                        });
                    tally.engine_ms += u.engine_ms;
                    let (start, _) = windows.bounds(window);
                    let added = windows.append_recovered(window, &u.text);
                    let next = if u.text.trim().is_empty() {
                        // Nothing more to be had from this window's audio.
                        tally.untranscribed_ms += missing_ms;
                        (window + 1, 0)
                    } else if !added {
                        // It heard only what the text has: the speech was covered.
                        (window + 1, 0)
                    } else {
                        tracing::info!(
                            window,
                            recovered = %u.text,
                            "words recovered after a run that ended early"
                        );
                        let end = match TextEnd::of(&u, cx.timestamps) {
                            TextEnd::At(end) => TextEnd::At(from - start + end),
                            TextEnd::Unknown => TextEnd::Unknown,
                        };
                        self.set_end(window, end);
                        emit(DictationEvent::SegmentTranscribed {
                            id,
                            index: window,
                            text: u.text,
                            engine_ms: u.engine_ms,
                        });
                        (window, round + 1)
                    };
                    self.phase = Phase::Checking {
                        spans,
                        window: next.0,
                        round: next.1,
                    };
                }
                Phase::Checking {
                    spans,
                    window,
                    round,
                } => {
                    if window >= windows.windows() {
                        self.phase = Phase::Done;
                        return;
                    }
                    let next = Phase::Checking {
                        spans: spans.clone(),
                        window: window + 1,
                        round: 0,
                    };
                    let coverage = self.check(window, windows, &spans);
                    let Coverage::EndsEarly { from, missing_ms } = coverage else {
                        self.phase = next;
                        continue;
                    };
                    if cx.aborted {
                        self.phase = Phase::Done;
                        return;
                    }
                    if round >= MAX_ROUNDS {
                        // Recovered some, but the text still stops short.
                        tally.untranscribed_ms += missing_ms;
                        self.phase = next;
                        continue;
                    }
                    let (start, end) = windows.bounds(window);
                    let from = start + from;
                    tracing::info!(
                        window,
                        missing_ms,
                        from_ms = crate::audio::samples_to_ms(from),
                        "a run's text ends before the speech: running the rest again"
                    );
                    let params = RunParams {
                        prompt: None,
                        prefix: None,
                        ..cx.params.clone()
                    };
                    let run = cx.submit(from, end, params);
                    self.phase = Phase::Running {
                        spans,
                        window,
                        round,
                        from,
                        missing_ms,
                        run,
                    };
                }
            }
        }
    }

    /// The coverage of `window`'s text, its speech spans taken from `spans`.
    fn check(&self, window: usize, windows: &SpeechWindows, spans: &[SpeechSpan]) -> Coverage {
        let (start, end) = windows.bounds(window);
        let inside: Vec<(u64, u64)> = spans
            .iter()
            .filter(|s| s.end > start && s.start < end)
            .map(|s| (s.start.max(start) - start, s.end.min(end) - start))
            .collect();
        if inside.is_empty() {
            return Coverage::Full;
        }
        let text_end = self.ends.get(window).copied().unwrap_or(TextEnd::Unknown);
        coverage::check(&windows.window_text(window), text_end, &inside)
    }
}
