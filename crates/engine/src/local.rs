//! The engine in a thread of this process: one thread owns the loaded model
//! and its session (the engine allows one compute at a time per model) and
//! serves requests from a queue. The worker process runs this same code.

use std::collections::VecDeque;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use std::sync::Arc;

use transcribe_cpp::{Model, RunOptions, Task, TimestampKind};

use super::compute;
use super::fitted_session::{self, FittedSession};
use super::run::RunGate;
use super::{
    describe, BatchReply, Compute, EngineConfig, EngineError, ModelInfo, Request, RunParams,
    StreamEvent, TimedText, Utterance,
};

/// A model loaded and ready in its thread.
pub(super) struct Loaded {
    /// What was loaded; `info.fallback` says why Auto ended on the CPU.
    pub info: ModelInfo,
    /// The backend the model runs on ("CPU", "CUDA0", "Vulkan0"...).
    pub backend: String,
}

/// Starts the engine thread and waits until the model is loaded. With
/// `cpu_only`, the model is loaded on the CPU even when a GPU is present.
pub(super) fn start(
    config: EngineConfig,
    cpu_only: bool,
    gate: Arc<RunGate>,
) -> Result<(Sender<Request>, Loaded, JoinHandle<()>), EngineError> {
    let (tx, rx) = unbounded::<Request>();
    let (ready_tx, ready_rx) = bounded(1);
    let thread = std::thread::Builder::new()
        .name("utter-engine".into())
        .spawn(move || worker(config, cpu_only, rx, ready_tx, gate))
        .map_err(|e| EngineError::Run(format!("cannot start the engine thread: {e}")))?;
    let loaded = ready_rx.recv().map_err(|_| EngineError::WorkerGone)??;
    Ok((tx, loaded, thread))
}

/// Loads a model where `compute` says. Auto takes the best backend this
/// build has (CUDA, Vulkan, Metal...) and, if that fails (no driver, out of
/// GPU memory), loads on the CPU instead of failing the dictation and says
/// why (the second value); a named device is loaded there or not at all.
/// `cpu_only` (after a crash on the GPU) overrides both.
fn load(
    path: &Path,
    compute: &Compute,
    cpu_only: bool,
) -> Result<(Model, Option<String>), EngineError> {
    let load_error = |e: transcribe_cpp::Error| EngineError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let on_cpu = transcribe_cpp::ModelOptions {
        backend: transcribe_cpp::Backend::Cpu,
        ..Default::default()
    };
    super::backends::ensure_loaded().map_err(|e| EngineError::Load {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let load_on_cpu = || Model::load_with(path, &on_cpu).map_err(load_error);
    match compute {
        _ if cpu_only => Ok((load_on_cpu()?, None)),
        Compute::Cpu => Ok((load_on_cpu()?, None)),
        Compute::Device(name) => {
            let device = compute::find_device(name).map_err(|available| EngineError::NoDevice {
                name: name.clone(),
                available,
            })?;
            let on_device = transcribe_cpp::ModelOptions {
                device: Some(device),
                ..Default::default()
            };
            let model = Model::load_with(path, &on_device).map_err(load_error)?;
            Ok((model, None))
        }
        Compute::Auto => match Model::load(path) {
            Ok(model) => {
                let fallback = compute::missing_gpu(&model.backend());
                Ok((model, fallback))
            }
            Err(
                e @ (transcribe_cpp::Error::Backend(_) | transcribe_cpp::Error::OutOfMemory(_)),
            ) => {
                tracing::warn!("GPU load failed ({e}); falling back to the CPU");
                Ok((
                    load_on_cpu()?,
                    Some(format!("the GPU could not load it: {e}")),
                ))
            }
            Err(e) => Err(load_error(e)),
        },
    }
}

fn worker(
    config: EngineConfig,
    cpu_only: bool,
    rx: Receiver<Request>,
    ready: Sender<Result<Loaded, EngineError>>,
    gate: Arc<RunGate>,
) {
    let started = Instant::now();
    let load_error = |e: transcribe_cpp::Error| EngineError::Load {
        path: config.model_path.clone(),
        message: e.to_string(),
    };
    let watch = fitted_session::early_watch(config.threads);
    let (model, fallback) = match load(&config.model_path, &config.compute, cpu_only) {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let info = ModelInfo {
        fallback,
        ..describe(&model, started)
    };
    if !info.is_speech {
        let _ = ready.send(Err(EngineError::Load {
            path: config.model_path.clone(),
            message: format!(
                "`{}` is a {} model, not a speech-to-text model",
                info.variant, info.arch
            ),
        }));
        return;
    }
    let mut session = match FittedSession::new(&model, config.threads, watch, gate.token()) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(load_error(e)));
            return;
        }
    };
    let backend = model.backend();
    let _ = ready.send(Ok(Loaded { info, backend }));

    // Requests that arrive while a stream is open wait here (one compute at a time).
    let mut backlog: VecDeque<Request> = VecDeque::new();
    while let Some(request) = backlog.pop_front().or_else(|| rx.recv().ok()) {
        match request {
            Request::Batch {
                run,
                pcms,
                params,
                reply,
            } => {
                session.refit(&model, gate.token());
                let result = match gate.begin(run) {
                    true => session
                        .computing_marker()
                        .during(|| run_batch(session.session(), &pcms, &params)),
                    false => Err(EngineError::Cancelled),
                };
                gate.end();
                let _ = reply.send(result);
            }
            Request::StreamBegin { params, events } => {
                session.refit(&model, gate.token());
                run_stream(&mut session, &params, &rx, &events, &mut backlog);
            }
            // Stray stream messages (after an abort or a failed begin); runs
            // are cancelled through the gate, and a thread needs no warming.
            Request::StreamFeed(_)
            | Request::StreamFinish
            | Request::StreamAbort
            | Request::Prewarm => {}
        }
    }
}

/// Runs one stream until it is finished or aborted.
fn run_stream(
    fitted: &mut FittedSession,
    params: &RunParams,
    rx: &Receiver<Request>,
    events: &Sender<StreamEvent>,
    backlog: &mut VecDeque<Request>,
) {
    // Only the feeds and the finish compute; the load watcher counts those.
    let computing = fitted.computing_marker();
    let session = fitted.session();
    let options = RunOptions {
        language: params.language.clone(),
        vocabulary: vocabulary_for(session, params),
        ..Default::default()
    };
    let fail = |e: transcribe_cpp::Error| {
        let _ = events.send(StreamEvent::Final(Err(EngineError::Run(e.to_string()))));
    };
    let mut stream = match session.stream(&options, &transcribe_cpp::StreamOptions::default()) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    for request in rx.iter() {
        match request {
            Request::StreamFeed(pcm) => match computing.during(|| stream.feed(&pcm)) {
                Ok(update) if update.result_changed => {
                    let text = stream.text();
                    let _ = events.send(StreamEvent::Partial {
                        committed: text.committed,
                        tentative: text.tentative,
                    });
                }
                Ok(_) => {}
                Err(e) => return fail(e),
            },
            Request::StreamFinish => {
                if let Err(e) = computing.during(|| stream.finalize()) {
                    return fail(e);
                }
                let _ = events.send(StreamEvent::Final(to_utterance(Ok(stream.snapshot()))));
                return;
            }
            Request::StreamAbort => return,
            other => backlog.push_back(other),
        }
    }
}

/// The vocabulary, where this model takes one (elsewhere the engine would
/// only warn on every run; the user's replacements still apply), fitted to
/// [`VOCABULARY_TOKEN_BUDGET`].
fn vocabulary_for(session: &transcribe_cpp::Session, params: &RunParams) -> Vec<String> {
    let model = session.model();
    if params.vocabulary.is_empty() || !model.supports(transcribe_cpp::Feature::Vocabulary) {
        return Vec::new();
    }
    fit_vocabulary(&model, &params.vocabulary)
}

/// Glossary tokens given to the model per run. Each token lengthens every
/// decode (about 1.5 ms per token for whisper tiny on 2 CPU threads, see
/// docs/benchmarks.md) and shares Whisper's 224-token context slot with the
/// dictation's previous text, so a long list is cut here, at the user's
/// order of importance, rather than by the engine.
pub const VOCABULARY_TOKEN_BUDGET: usize = 64;

/// The leading entries of `words` whose glossary fits the token budget.
pub fn fit_vocabulary(model: &Model, words: &[String]) -> Vec<String> {
    // " Glossary: " and each ", " separator cost a token or two.
    let mut used = model.tokenize(" Glossary:").map_or(4, |t| t.len());
    let mut kept = Vec::new();
    for word in words {
        let cost = model
            .tokenize(&format!(" {word},"))
            .map_or(usize::MAX, |t| t.len());
        if used.saturating_add(cost) > VOCABULARY_TOKEN_BUDGET {
            tracing::debug!(
                kept = kept.len(),
                dropped = words.len() - kept.len(),
                "vocabulary cut to the token budget"
            );
            break;
        }
        used += cost;
        kept.push(word.clone());
    }
    kept
}

fn run_batch(
    session: &mut transcribe_cpp::Session,
    pcms: &[Vec<f32>],
    params: &RunParams,
) -> BatchReply {
    let model = session.model();
    let options = RunOptions {
        language: params.language.clone(),
        timestamps: timestamps_for(&model, params),
        task: if params.translate {
            Task::Translate
        } else {
            Task::Transcribe
        },
        target_language: params.translate.then(|| "en".to_string()),
        // Only where the model takes them: elsewhere the engine would warn
        // on every run, or refuse it.
        prompt: params
            .prompt
            .clone()
            .filter(|_| model.supports(transcribe_cpp::Feature::ContextPrompt)),
        prefix: params
            .prefix
            .clone()
            .filter(|_| model.supports(transcribe_cpp::Feature::TranscriptPrefix)),
        vocabulary: vocabulary_for(session, params),
        ..Default::default()
    };
    let slices: Vec<&[f32]> = pcms.iter().map(Vec::as_slice).collect();
    // A single buffer goes through `run`; the batch path has per-call overhead.
    let results = if slices.len() == 1 {
        vec![session.run(slices[0], &options)]
    } else {
        session
            .run_batch(&slices, &options)
            .map_err(|e| EngineError::Run(e.to_string()))?
    };
    // A single run's truncation comes back as `OutputTruncated`; a batch
    // only says that some run was cut (`was_truncated` describes the last
    // call), so every result is marked and the caller splits them all.
    let truncated = slices.len() > 1 && session.was_truncated();
    results
        .into_iter()
        .map(|r| {
            to_utterance(r).map(|u| Utterance {
                truncated: u.truncated || truncated,
                ..u
            })
        })
        .collect()
}

/// Segment timestamps where the model has them; none where it has none
/// (the caller times the text by its speech spans). A transcript prefix
/// does not compose with segment timestamps (the engine rejects it);
/// dictation, which uses it, needs none.
fn timestamps_for(model: &Model, params: &RunParams) -> TimestampKind {
    let has_timestamps = model
        .capabilities()
        .is_ok_and(|c| c.max_timestamp_kind != TimestampKind::None);
    if !has_timestamps {
        TimestampKind::None
    } else if params.prefix.is_some() {
        TimestampKind::Auto
    } else {
        TimestampKind::Segment
    }
}

fn to_utterance(
    result: transcribe_cpp::Result<transcribe_cpp::Transcript>,
) -> Result<Utterance, EngineError> {
    let (transcript, warning) = match result {
        Ok(t) => (t, None),
        Err(e @ transcribe_cpp::Error::Aborted { .. }) => {
            let _ = e;
            return Err(EngineError::Cancelled);
        }
        // The model's output budget ran out before the audio did: the text
        // covers the start only. Marked, so a file splits the run.
        Err(transcribe_cpp::Error::OutputTruncated {
            partial: Some(partial),
            ..
        }) => {
            return Ok(Utterance {
                truncated: true,
                ..utterance_of(&partial)
            })
        }
        // Repeating output still carries usable text.
        Err(e) => match e.partial() {
            Some(p) => (p.clone(), Some(e.to_string())),
            None => return Err(EngineError::Run(e.to_string())),
        },
    };
    Ok(Utterance {
        warning,
        ..utterance_of(&transcript)
    })
}

fn utterance_of(transcript: &transcribe_cpp::Transcript) -> Utterance {
    let segments = transcript
        .segments
        .iter()
        .filter(|s| !s.text.trim().is_empty())
        .map(|s| TimedText {
            start_ms: s.t0_ms,
            end_ms: s.t1_ms,
            text: s.text.trim().to_string(),
        })
        .collect();
    let t = &transcript.timings;
    Utterance {
        text: transcript.text.trim().to_string(),
        segments,
        language: transcript.language.clone(),
        engine_ms: (t.mel_ms + t.encode_ms + t.decode_ms) as f64,
        warning: None,
        truncated: false,
    }
}
