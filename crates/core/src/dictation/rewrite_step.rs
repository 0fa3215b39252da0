//! The optional AI step after the text rules: the dictated text goes to the
//! user's language model in a mode (clean-up, formal...) on its own thread,
//! so the service keeps hearing keys and audio while it waits. Whatever the
//! model does, an [`Outcome`] comes back within the time budget (the HTTP
//! client enforces it), and a kept outcome carries the dictated words.

use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, Select, TryRecvError};
use serde::{Deserialize, Serialize};
use utter_rewrite::{
    ApiKey, ClientError, KeyError, Notice, Outcome, ProviderConfig, RewriteConfig, Rewriter,
};

/// What the service needs to rewrite each dictation: the settings, the key
/// read from the keychain once at start (never logged: `ApiKey` redacts
/// itself), and the HTTP client whose connections are reused.
#[derive(Clone)]
pub struct RewriteStep {
    rewriter: Rewriter,
    config: RewriteConfig,
    /// The keychain's answer; when it failed, each dictation is delivered
    /// as dictated with the reason.
    key: Result<Option<ApiKey>, KeyError>,
}

impl RewriteStep {
    /// `None` when rewriting is off in `config`.
    pub fn new(
        config: RewriteConfig,
        key: Result<Option<ApiKey>, KeyError>,
    ) -> Result<Option<Self>, ClientError> {
        if !config.enabled {
            return Ok(None);
        }
        Ok(Some(Self {
            rewriter: Rewriter::new()?,
            config,
            key,
        }))
    }

    /// The mode applied after each dictation (unless a profile says otherwise).
    pub fn mode(&self) -> &str {
        &self.config.mode
    }

    /// Sends `text` off to be rewritten in `mode`; the outcome arrives later.
    pub fn start(&self, mode: &str, text: &str, vocabulary: &[String]) -> PendingRewrite {
        let mode_id = mode.to_string();
        self.spawn(mode, text, vocabulary, move |step, key, said, words| {
            step.rewriter
                .rewrite(&step.config, key, &mode_id, said, words)
        })
    }

    /// Sends a spoken `instruction` off to be carried out on `selection`
    /// (or answered, without one). A kept outcome means: leave the
    /// selection as it is.
    pub fn start_command(
        &self,
        instruction: &str,
        selection: Option<&str>,
        vocabulary: &[String],
    ) -> PendingRewrite {
        let selection = selection.map(str::to_string);
        let selected = selection.clone();
        let mut pending = self.spawn(
            COMMAND_MODE,
            instruction,
            vocabulary,
            move |step, key, said, words| {
                step.rewriter
                    .command(&step.config, key, said, selected.as_deref(), words)
            },
        );
        pending.selection = selection;
        pending
    }

    fn spawn(
        &self,
        mode: &str,
        text: &str,
        vocabulary: &[String],
        call: impl FnOnce(&RewriteStep, Option<&ApiKey>, &str, &[String]) -> Outcome + Send + 'static,
    ) -> PendingRewrite {
        let (tx, rx) = bounded(1);
        let key = match &self.key {
            Ok(key) => key.clone(),
            Err(e) => {
                return PendingRewrite::failed(
                    mode,
                    text,
                    Notice::KeychainFailed {
                        detail: e.to_string(),
                    },
                )
            }
        };
        let step = self.clone();
        let (said, words) = (text.to_string(), vocabulary.to_vec());
        let spawned = std::thread::Builder::new()
            .name("utter-rewrite".into())
            .spawn(move || {
                let _ = tx.send(call(&step, key.as_ref(), &said, &words));
            });
        let failed = spawned.err().map(|e| Notice::Failed {
            detail: format!("cannot start a thread: {e}"),
        });
        PendingRewrite {
            mode: mode.to_string(),
            dictated: text.to_string(),
            selection: None,
            started: Instant::now(),
            outcome: rx,
            failed,
        }
    }
}

/// The `mode` a command's [`RewriteReport`] carries.
pub const COMMAND_MODE: &str = "command";

impl std::fmt::Debug for RewriteStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewriteStep")
            .field("config", &self.config)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A rewrite in flight.
pub struct PendingRewrite {
    mode: String,
    dictated: String,
    /// A command's selected text.
    selection: Option<String>,
    started: Instant,
    outcome: Receiver<Outcome>,
    /// The thread never started: the text is kept at once.
    failed: Option<Notice>,
}

impl PendingRewrite {
    /// Kept as dictated before anything was sent.
    fn failed(mode: &str, text: &str, notice: Notice) -> Self {
        Self {
            mode: mode.to_string(),
            dictated: text.to_string(),
            selection: None,
            started: Instant::now(),
            outcome: bounded(0).1,
            failed: Some(notice),
        }
    }

    pub fn mode(&self) -> &str {
        &self.mode
    }

    /// Adds the model's answer to what `select` waits on.
    pub fn wait_on<'a>(&'a self, select: &mut Select<'a>) {
        select.recv(&self.outcome);
    }

    /// The outcome once it is in (`None` while the model is still answering).
    /// A thread that ended without one keeps the dictated text.
    pub fn poll(&mut self) -> Option<(String, RewriteReport)> {
        let outcome = match self.failed.take() {
            Some(notice) => Outcome::kept(&self.dictated, notice),
            None => match self.outcome.try_recv() {
                Ok(outcome) => outcome,
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => Outcome::kept(
                    &self.dictated,
                    Notice::Failed {
                        detail: "the rewrite thread ended without an answer".into(),
                    },
                ),
            },
        };
        let ms = self.started.elapsed().as_millis() as u64;
        let text = outcome.text().to_string();
        let (model, notice) = match outcome {
            Outcome::Rewritten { model, .. } => (Some(model), None),
            Outcome::Kept { notice, .. } => (None, Some(notice)),
        };
        Some((
            text,
            RewriteReport {
                mode: self.mode.clone(),
                dictated: std::mem::take(&mut self.dictated),
                selection: self.selection.take(),
                model,
                notice,
                ms,
            },
        ))
    }
}

/// How a dictation's rewrite went, for the UI and History: the text as
/// dictated is always kept, one click from the rewritten one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct RewriteReport {
    pub mode: String,
    /// The text after the text rules, before the model (for a command:
    /// the spoken instruction).
    pub dictated: String,
    /// A command's selected text, which its answer replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub selection: Option<String>,
    /// The model that rewrote it; absent when the text was kept as dictated.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    /// Why the text was kept as dictated.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub notice: Option<Notice>,
    /// From sending to the answer (or to giving up).
    pub ms: u64,
}

/// One call to `provider` with the test sentence and the key saved for it
/// in the keychain (`utter doctor`, the app's Test button); a key that
/// cannot be read, or a client that cannot start, comes back as a notice.
pub fn test_provider(provider: &ProviderConfig) -> Outcome {
    let said = utter_rewrite::TEST_SENTENCE;
    let key = match utter_rewrite::KeyStore::default().key_for(provider) {
        Ok(key) => key,
        Err(e) => {
            let detail = e.to_string();
            return Outcome::kept(said, Notice::KeychainFailed { detail });
        }
    };
    match Rewriter::new() {
        Ok(rewriter) => rewriter.test(provider, key.as_ref()),
        Err(e) => Outcome::kept(
            said,
            Notice::Failed {
                detail: format!("cannot start an HTTP client: {e}"),
            },
        ),
    }
}

/// `utter doctor`'s line: whether the configured provider answers, and how
/// fast (one short request with a test sentence). Off is no fault (the front
/// end says how to turn it on).
pub fn check(config: &RewriteConfig) -> Result<String, RewriteUnanswered> {
    if !config.enabled {
        return Ok("off".into());
    }
    let provider = &config.provider;
    let what = format!(
        "{} mode, {} `{}` at {}",
        config.mode,
        provider.kind.label(),
        provider.model,
        provider.effective_base_url()
    );
    match test_provider(provider) {
        Outcome::Rewritten {
            first_token, total, ..
        } => Ok(format!(
            "{what}: answered in {} ms (first words after {} ms; budget {} ms)",
            total.as_millis(),
            first_token.as_millis(),
            provider.time_budget_ms
        )),
        Outcome::Kept { notice, .. } => Err(RewriteUnanswered { what, notice }),
    }
}

/// The configured provider did not answer [`check`]'s test sentence.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {notice} Dictations are delivered as dictated until it answers.")]
pub struct RewriteUnanswered {
    /// The mode, provider, model and address tried.
    pub what: String,
    #[source]
    pub notice: Notice,
}
