//! One submitted run as a handle: its reply, and a cancel that reaches that
//! run and no other. A cancel that comes after its run has finished is
//! dropped, so it can never stop the run after it; one still queued is
//! answered `Cancelled` without being run.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use transcribe_cpp::CancelToken;

use super::{BatchReply, EngineError};

/// Names one run of one engine; later runs have larger ids.
pub type RunId = u64;

/// A run submitted with [`super::Engine::submit`].
pub struct Run {
    id: RunId,
    reply: Receiver<BatchReply>,
    canceller: Canceller,
}

/// How a cancel reaches the engine: the thread's gate directly (its thread
/// is busy computing), a worker process's supervisor by message. The
/// supervisor's cancel channel is not its request channel, so a handle kept
/// after its engine was dropped never keeps the engine alive.
#[derive(Clone)]
pub(super) enum Canceller {
    Gate(Arc<RunGate>),
    Message(Sender<CancelRequest>),
}

/// A cancel for a worker process's supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CancelRequest {
    /// This run, if it is queued or running.
    Run(RunId),
    /// Every run up to this one, queued or running.
    Through(RunId),
}

impl Canceller {
    /// Cancels every run up to `last`.
    pub fn cancel_through(&self, last: RunId) {
        match self {
            Self::Gate(gate) => gate.cancel_through(last),
            Self::Message(tx) => {
                let _ = tx.send(CancelRequest::Through(last));
            }
        }
    }
}

impl Run {
    pub(super) fn new(id: RunId, reply: Receiver<BatchReply>, canceller: Canceller) -> Self {
        Self {
            id,
            reply,
            canceller,
        }
    }

    /// Stops this run (its reply is then `Cancelled`); no effect once it has finished.
    pub fn cancel(&self) {
        match &self.canceller {
            Canceller::Gate(gate) => gate.cancel(self.id),
            Canceller::Message(tx) => {
                let _ = tx.send(CancelRequest::Run(self.id));
            }
        }
    }

    /// The reply, if it has come (an engine that went away is an error).
    pub fn try_result(&self) -> Option<BatchReply> {
        match self.reply.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(EngineError::WorkerGone)),
        }
    }

    /// The channel the reply comes on, for a loop that waits on several
    /// things at once (`crossbeam_channel::Select::ready`); take the reply
    /// itself with [`Run::try_result`].
    pub fn reply_channel(&self) -> &Receiver<BatchReply> {
        &self.reply
    }

    /// Waits for the reply.
    pub fn wait(self) -> BatchReply {
        self.reply.recv().unwrap_or(Err(EngineError::WorkerGone))
    }
}

/// Which run the engine thread is on, so that a cancel stops only its own
/// run: the thread marks each run's start and end under the lock a cancel takes.
#[derive(Default)]
pub(super) struct RunGate {
    state: Mutex<GateState>,
    token: CancelToken,
}

#[derive(Default)]
struct GateState {
    running: Option<RunId>,
    /// The newest run begun: a cancel for it or an older one that is not
    /// running came too late.
    last_begun: RunId,
    /// Cancelled while still queued.
    cancelled: HashSet<RunId>,
    /// Every run up to this one is cancelled ([`RunGate::cancel_through`]).
    cancelled_through: RunId,
}

impl RunGate {
    /// The token the engine's session watches.
    pub fn token(&self) -> &CancelToken {
        &self.token
    }

    pub fn cancel(&self, run: RunId) {
        let mut state = self.lock();
        if state.running == Some(run) {
            self.token.cancel();
        } else if run > state.last_begun {
            state.cancelled.insert(run);
        }
    }

    /// Cancels every run up to `last`, running or queued.
    pub fn cancel_through(&self, last: RunId) {
        let mut state = self.lock();
        state.cancelled_through = state.cancelled_through.max(last);
        if state.running.is_some_and(|r| r <= last) {
            self.token.cancel();
        }
    }

    /// Marks `run` as running; false when it was cancelled while queued.
    pub fn begin(&self, run: RunId) -> bool {
        let mut state = self.lock();
        state.last_begun = state.last_begun.max(run);
        if state.cancelled.remove(&run) || run <= state.cancelled_through {
            return false;
        }
        state.running = Some(run);
        true
    }

    /// The run is over: a cancel for it can no longer reach the next one.
    pub fn end(&self) {
        let mut state = self.lock();
        state.running = None;
        self.token.reset();
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // The state stays consistent even if a holder panicked.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_only_its_own_run() {
        let gate = RunGate::default();
        assert!(gate.begin(1));
        gate.cancel(2); // queued behind 1
        assert!(!gate.token().is_cancelled(), "run 1 goes on");
        gate.end();
        assert!(!gate.begin(2), "run 2 was cancelled while queued");
        assert!(gate.begin(3));
        gate.cancel(1); // late: run 1 is long over
        assert!(
            !gate.token().is_cancelled(),
            "a late cancel cannot stop run 3"
        );
        gate.cancel(3);
        assert!(gate.token().is_cancelled());
        gate.end();
        assert!(!gate.token().is_cancelled(), "reset for the next run");
    }

    #[test]
    fn cancelling_all_submitted_runs_spares_the_later_ones() {
        let gate = RunGate::default();
        assert!(gate.begin(1));
        gate.cancel_through(3); // 1 running, 2 and 3 queued
        assert!(gate.token().is_cancelled());
        gate.end();
        assert!(!gate.begin(2) && !gate.begin(3));
        assert!(gate.begin(4), "submitted after the cancel");
        assert!(!gate.token().is_cancelled());
    }
}
