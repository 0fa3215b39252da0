//! Waiting for a thread with a bound. Shutdown must end even when a thread
//! is stuck in a call that a vanished server never answers (an audio
//! stream's close with the sound server gone, an engine run): past the
//! bound the thread is left to finish on its own, or to end with the
//! process. A leaf module: anything may use it.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Joins `handle` if it finishes within `limit`; otherwise leaves it
/// running (detached) and says so in the log, naming `what`.
/// `Some(result)` when it was joined.
pub fn join_within<T>(handle: JoinHandle<T>, limit: Duration, what: &str) -> Option<T> {
    let deadline = Instant::now() + limit;
    while !handle.is_finished() {
        if Instant::now() >= deadline {
            tracing::warn!("{what} did not end within {limit:?}; not waiting for it");
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    handle.join().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_thread_is_joined_and_a_stuck_one_is_left() {
        let quick = std::thread::spawn(|| 7);
        assert_eq!(join_within(quick, Duration::from_secs(5), "quick"), Some(7));
        let (_hold, wait) = crossbeam_channel::bounded::<()>(0);
        let stuck = std::thread::spawn(move || {
            let _ = wait.recv(); // until the test ends
        });
        let started = Instant::now();
        assert_eq!(
            join_within(stuck, Duration::from_millis(100), "stuck"),
            None
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
