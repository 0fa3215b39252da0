//! The engine's second look at words the vocabulary doubts: where the
//! engine's text has an ordinary word that sounds like a listed one ("close"
//! for "clubs"), the same audio is decoded again with the listed words in the
//! model's prompt, and the doubted words take what that decode wrote there
//! (`utter_postprocess::doubts` says which words, and why this is the check).
//! Only models that take a prompt (Whisper) can be asked; for the others the
//! text stays as heard. Dictation and files both use it.

use std::ops::Range;

use crossbeam_channel::Receiver;

use utter_engine::{Engine, EngineError, Run, RunParams, Utterance};
use utter_postprocess::doubts::{self, Doubt};
use utter_postprocess::TextRules;

/// Audio longer than this is not rechecked in one decode (a dictation's
/// text for it comes from several windows; a file's segments are shorter).
const MAX_RECHECK_SAMPLES: usize = 30 * 16_000;

/// A recheck under way.
pub struct Recheck {
    run: Run,
    doubts: Vec<Doubt>,
}

impl Recheck {
    /// Starts a recheck of `text`, the engine's words for `pcm`, when the
    /// text has doubts and the model takes a prompt; `None` otherwise.
    pub fn start(
        engine: &Engine,
        rules: &TextRules,
        text: &str,
        pcm: &[f32],
        params: &RunParams,
    ) -> Option<Self> {
        if !engine.info().takes_prompt || pcm.is_empty() || pcm.len() > MAX_RECHECK_SAMPLES {
            return None;
        }
        let doubts = rules.vocabulary_doubts(text);
        if doubts.is_empty() {
            return None;
        }
        tracing::debug!(
            heard = ?doubts.iter().map(|d| (&d.heard, &d.entry)).collect::<Vec<_>>(),
            "rechecking words the vocabulary doubts"
        );
        let params = RunParams {
            prompt: Some(doubts::recheck_prompt(&doubts)),
            // The prompt is the glossary's slot too: the doubted words alone.
            vocabulary: Vec::new(),
            prefix: None,
            ..params.clone()
        };
        Some(Self {
            run: engine.submit(vec![pcm.to_vec()], params),
            doubts,
        })
    }

    /// The channel the recheck's reply comes on (for a `Select`).
    pub fn reply_channel(&self) -> &Receiver<Result<Vec<Utterance>, EngineError>> {
        self.run.reply_channel()
    }

    /// `text` as the recheck settles it, once its reply is in.
    pub fn try_finish(&self, text: &str) -> Option<String> {
        self.run
            .try_result()
            .map(|reply| settle(text, &self.doubts, reply))
    }

    /// Waits for the reply; `text` as the recheck settles it.
    pub fn finish(self, text: &str) -> String {
        let Self { run, doubts } = self;
        settle(text, &doubts, run.wait())
    }

    /// Stops the recheck (a cancelled dictation).
    pub fn cancel(&self) {
        self.run.cancel();
    }
}

/// `text` with the doubts the recheck's reply confirms; unchanged when the
/// recheck failed (the first decode stands).
fn settle(text: &str, doubts: &[Doubt], reply: Result<Vec<Utterance>, EngineError>) -> String {
    doubts::apply(text, &confirmed(text, doubts, reply))
}

fn confirmed(
    text: &str,
    doubts: &[Doubt],
    reply: Result<Vec<Utterance>, EngineError>,
) -> Vec<(Range<usize>, String)> {
    match reply {
        Ok(utterances) => {
            let recheck: Vec<&str> = utterances.iter().map(|u| u.text.as_str()).collect();
            let confirmed = doubts::confirmed(text, doubts, &recheck.join(" "));
            tracing::debug!(
                doubts = doubts.len(),
                confirmed = confirmed.len(),
                "the vocabulary recheck is in"
            );
            confirmed
        }
        Err(e) => {
            tracing::debug!("the vocabulary recheck failed ({e}); the text stays as heard");
            Vec::new()
        }
    }
}

/// Rechecks at once (for files) the engine's text for `pcm`, given as
/// `pieces` (a window's segments, in order): each piece gets the entries
/// confirmed inside it.
pub fn recheck_pieces(
    engine: &Engine,
    rules: &TextRules,
    pieces: &mut [String],
    pcm: &[f32],
    params: &RunParams,
) {
    let text = pieces.join(" ");
    let Some(Recheck { run, doubts }) = Recheck::start(engine, rules, &text, pcm, params) else {
        return;
    };
    let replacements = confirmed(&text, &doubts, run.wait());
    let mut at = 0; // where each piece starts in `text`
    for piece in pieces.iter_mut() {
        let range = at..at + piece.len();
        let inside: Vec<(Range<usize>, String)> = replacements
            .iter()
            .filter(|(r, _)| range.contains(&r.start) && r.end <= range.end)
            .map(|(r, e)| (r.start - at..r.end - at, e.clone()))
            .collect();
        at = range.end + 1;
        if !inside.is_empty() {
            *piece = doubts::apply(piece, &inside);
        }
    }
}
