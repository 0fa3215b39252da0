//! The engine's session at the width the machine can give it: rebuilt with
//! fewer threads while other programs keep cores busy, and with more again
//! when they stop (issue 30, `cpu_load`). transcribe.cpp fixes a session's
//! thread count when the session is made, so a change makes a new session;
//! the model's weights stay loaded.

use std::time::Instant;

use transcribe_cpp::{CancelToken, Model, Session, SessionOptions};

use super::cpu::Threads;
use super::cpu_load::{self, CpuLoadError, LoadWatch, Marker};

/// A session and the thread count it was made with.
pub(super) struct FittedSession {
    session: Session,
    threads: usize,
    fit: Fit,
}

/// Whether the thread count follows the load.
enum Fit {
    /// The user's count, a GPU model, a single core, or no load reading.
    Fixed,
    ToLoad {
        max: usize,
        watch: LoadWatch,
    },
}

fn make(model: &Model, threads: usize, token: &CancelToken) -> transcribe_cpp::Result<Session> {
    let mut session = model.session_with(&SessionOptions {
        n_threads: threads as i32,
        ..Default::default()
    })?;
    session.set_cancel_token(token);
    Ok(session)
}

/// The load watcher for `threads`, started before the model loads so that
/// its first reading is ready when the session is made; `None` where the
/// count is fixed.
pub(super) fn early_watch(threads: Threads) -> Option<Result<LoadWatch, CpuLoadError>> {
    match threads {
        Threads::FitToLoad { max } if max > 1 => Some(LoadWatch::start()),
        _ => None,
    }
}

impl FittedSession {
    /// A session for `model` at the thread count the load allows now
    /// (`watch`: from [`early_watch`]).
    pub fn new(
        model: &Model,
        threads: Threads,
        watch: Option<Result<LoadWatch, CpuLoadError>>,
        token: &CancelToken,
    ) -> transcribe_cpp::Result<Self> {
        let most = threads.most();
        let on_cpu = model.backend().eq_ignore_ascii_case("cpu");
        let fit = match watch {
            Some(Ok(watch)) if on_cpu => Fit::ToLoad { max: most, watch },
            Some(Err(why)) => {
                tracing::warn!("the engine keeps {most} threads whatever the load: {why}");
                Fit::Fixed
            }
            _ => Fit::Fixed,
        };
        let threads = match &fit {
            Fit::ToLoad { max, watch } => {
                cpu_load::fit_threads(*max, watch.others_demand_measured(), most)
            }
            Fit::Fixed => most,
        };
        tracing::info!("engine threads: {threads}");
        Ok(Self {
            session: make(model, threads, token)?,
            threads,
            fit,
        })
    }

    /// Before each engine call: a new session when the load asks for
    /// another thread count. If it cannot be made, the current one stays.
    pub fn refit(&mut self, model: &Model, token: &CancelToken) {
        let Fit::ToLoad { max, watch } = &self.fit else {
            return;
        };
        let demand = watch.others_demand();
        let threads = cpu_load::fit_threads(*max, demand, self.threads);
        if threads == self.threads {
            return;
        }
        let started = Instant::now();
        match make(model, threads, token) {
            Ok(session) => {
                // The old session is freed here; both exist for a moment
                // (their compute buffers, ~14 MB for tiny.en).
                self.session = session;
                tracing::info!(
                    from = self.threads,
                    to = threads,
                    busy_elsewhere = format!("{demand:.2} cores"),
                    ms = started.elapsed().as_millis() as u64,
                    "engine threads changed with the load"
                );
                self.threads = threads;
            }
            Err(e) => tracing::warn!("engine threads stay {}: {e}", self.threads),
        }
    }

    /// Marks engine calls for the load watcher; held apart from the
    /// session, so a call can be marked while the session is borrowed.
    pub fn computing_marker(&self) -> ComputeMarker {
        ComputeMarker {
            marker: match &self.fit {
                Fit::ToLoad { watch, .. } => Some(watch.marker()),
                Fit::Fixed => None,
            },
            threads: self.threads,
        }
    }

    pub fn session(&mut self) -> &mut Session {
        &mut self.session
    }
}

/// Marks engine calls at the session's thread count (nothing where the
/// count is fixed).
pub(super) struct ComputeMarker {
    marker: Option<Marker>,
    threads: usize,
}

impl ComputeMarker {
    /// Runs `call`, counted as the engine computing.
    pub fn during<R>(&self, call: impl FnOnce() -> R) -> R {
        let _computing = self.marker.as_ref().map(|m| m.computing(self.threads));
        call()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::cpu_load::{CounterSource, Counters};

    /// Counters as if other programs kept `demand` cores busy (the CPU
    /// counters are the OS's, the one part this test plays itself).
    struct Steady {
        demand: Arc<AtomicU64>,
        busy_s: f64,
        last: Instant,
    }

    impl CounterSource for Steady {
        fn read(&mut self) -> Option<Counters> {
            let now = Instant::now();
            let demand = f64::from_bits(self.demand.load(Ordering::Relaxed));
            self.busy_s += demand * now.duration_since(self.last).as_secs_f64();
            self.last = now;
            Some(Counters {
                busy_s: self.busy_s,
                own_s: 0.0,
            })
        }
    }

    fn clip() -> (Vec<f32>, String) {
        let dir = std::path::Path::new("/usr/share/pocketsphinx/test/data/librivox");
        let mut pcm = Vec::new();
        let clip = dir.join("sense_and_sensibility_01_austen_64kb-0880.wav");
        utter_core::audio::decode_file(&clip, |p| pcm.extend_from_slice(p))
            .expect("pocketsphinx-testdata is installed");
        (pcm, "he was not an ill disposed young man".into())
    }

    fn words(session: &mut FittedSession, pcm: &[f32]) -> Vec<String> {
        let text = session
            .session()
            .run(pcm, &transcribe_cpp::RunOptions::default())
            .expect("a transcript")
            .text;
        utter_core::text::normalize_words(&text)
    }

    /// The real model: a session made beside one busy core takes one
    /// thread, grows back to two when the core is free again, and gives the
    /// same words at either width.
    #[test]
    fn the_session_follows_the_load_and_keeps_its_words() {
        let store = utter_models::ModelStore::new(utter_base::paths::models_dir());
        let path = store
            .resolve_speech(None)
            .expect("the default model (npm test installs it)")
            .1;
        let model = Model::load_with(
            &path,
            &transcribe_cpp::ModelOptions {
                backend: transcribe_cpp::Backend::Cpu,
                ..Default::default()
            },
        )
        .unwrap();
        let demand = Arc::new(AtomicU64::new(1.0f64.to_bits()));
        let source = Steady {
            demand: demand.clone(),
            busy_s: 0.0,
            last: Instant::now(),
        };
        let watch = LoadWatch::with_source(source, 2).unwrap();
        let token = CancelToken::new();
        let threads = Threads::FitToLoad { max: 2 };
        let mut session = FittedSession::new(&model, threads, Some(Ok(watch)), &token).unwrap();
        assert_eq!(session.threads, 1, "one core is busy elsewhere");
        let (pcm, truth) = clip();
        let narrow = words(&mut session, &pcm);
        // tiny.en hears "an old sposed": close, not exact.
        let errors = utter_core::text::word_edit_distance(
            &utter_core::text::normalize_words(&truth),
            &narrow,
        );
        assert!(errors <= 2, "{narrow:?}");

        demand.store(0f64.to_bits(), Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(10);
        while session.threads == 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            session.refit(&model, &token);
        }
        assert_eq!(session.threads, 2, "both cores are free again");
        assert_eq!(words(&mut session, &pcm), narrow);
    }

    #[test]
    fn a_fixed_count_is_kept_whatever_the_load() {
        let store = utter_models::ModelStore::new(utter_base::paths::models_dir());
        let path = store.resolve_speech(None).expect("the default model").1;
        let model = Model::load(&path).unwrap();
        let token = CancelToken::new();
        let mut session = FittedSession::new(&model, Threads::Fixed(3), None, &token).unwrap();
        session.refit(&model, &token);
        assert_eq!(session.threads, 3);
    }
}
