//! Delivers the app's events to the front end in the order they happened.
//!
//! Events come from many threads (the dictation service, file jobs, IPC
//! commands). Calling the front end's callback on each of them directly let
//! two status changes overtake each other: the shell's callback updates the
//! tray, which waits for the GUI's main thread, so a `Loading` sent before an
//! `Idle` could reach the UI after it and leave Home on "loading" with the
//! service long ready. Here senders only queue (cheap, never blocks, safe
//! under a lock, so a status is queued in the order it was set) and one
//! thread calls the callback, in queue order.

use crossbeam_channel::{unbounded, Sender};

use crate::AppEvent;

/// The sending side; the delivering thread ends once this is dropped and
/// everything queued was delivered.
pub(crate) struct EventQueue {
    queue: Sender<AppEvent>,
}

impl EventQueue {
    pub(crate) fn start(deliver: impl Fn(AppEvent) + Send + 'static) -> Self {
        let (queue, events) = unbounded::<AppEvent>();
        let spawned = std::thread::Builder::new()
            .name("utter-events".into())
            .spawn(move || {
                for event in events {
                    // A front end that panics on one event must not silence
                    // every later one (the thread would be gone).
                    let delivered =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| deliver(event)));
                    if delivered.is_err() {
                        tracing::error!("the UI's event handler panicked; later events still go");
                    }
                }
            });
        if let Err(e) = spawned {
            // Without the thread nothing reaches the UI; the app still dictates.
            tracing::error!("cannot start the thread that sends events to the UI: {e}");
        }
        Self { queue }
    }

    /// Queues `event` for delivery after every event queued before it.
    pub(crate) fn send(&self, event: AppEvent) {
        // Fails only once the delivering thread is gone (it could not start).
        let _ = self.queue.send(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn events_arrive_in_the_order_they_were_queued_even_when_delivery_is_slow() {
        let (delivered, received) = mpsc::channel();
        let queue = EventQueue::start(move |event| {
            // A slow front end (the tray waiting for the main thread).
            std::thread::sleep(Duration::from_millis(5));
            let _ = delivered.send(event);
        });
        for _ in 0..20 {
            queue.send(AppEvent::HistoryChanged);
            queue.send(AppEvent::Level(0.5));
        }
        let got: Vec<bool> = (0..40)
            .map(|_| {
                let event = received
                    .recv_timeout(Duration::from_secs(5))
                    .expect("delivered");
                matches!(event, AppEvent::HistoryChanged)
            })
            .collect();
        let expected: Vec<bool> = (0..40).map(|i| i % 2 == 0).collect();
        assert_eq!(got, expected);
    }
}
