//! The CLI's main thread: it runs the platform's event loop while the work
//! (the dictation service) runs on a worker thread.
//!
//! - Windows and macOS: a windowless tao event loop. global-hotkey's README:
//!   on Windows "a win32 event loop must be running on the thread" that
//!   created the manager; on macOS the manager must be created on the main
//!   thread and an event loop must run there. tao pumps both (the same loop
//!   Tauri runs in the desktop app).
//! - Linux: global-hotkey's X11 backend has its own thread, so the jobs
//!   posted to the "main thread" run in order on a thread of their own.

use super::MainThread;

/// Runs `work` on a worker thread, with a [`MainThread`] whose jobs run on
/// this (the main) thread, until `work` returns; returns its result.
pub fn run<T: Send + 'static>(work: impl FnOnce(MainThread) -> T + Send + 'static) -> T {
    imp::run(work)
}

#[cfg(not(any(windows, target_os = "macos")))]
mod imp {
    use crossbeam_channel::bounded;

    use super::super::MainThread;

    /// The jobs run on a thread of their own (X11 does not mind which), not
    /// on this one: a job stuck on a display server that is gone (a hotkey
    /// unregistered as the session ends) must not keep the process from
    /// returning once `work` has.
    pub fn run<T: Send + 'static>(work: impl FnOnce(MainThread) -> T + Send + 'static) -> T {
        let (done_tx, done) = bounded(1);
        let main = MainThread::dedicated();
        std::thread::Builder::new()
            .name("utter-worker".into())
            .spawn(move || {
                let _ = done_tx.send(work(main));
            })
            .expect("spawn the worker thread");
        done.recv().expect("the worker panicked")
    }
}

#[cfg(any(windows, target_os = "macos"))]
mod imp {
    use std::sync::{Arc, Mutex};

    use tao::event::Event;
    use tao::event_loop::{ControlFlow, EventLoopBuilder};
    use tao::platform::run_return::EventLoopExtRunReturn;

    use super::super::{Job, MainThread, MainThreadError};

    enum Wake {
        Job(Job),
        Done,
    }

    pub fn run<T: Send + 'static>(work: impl FnOnce(MainThread) -> T + Send + 'static) -> T {
        let mut event_loop = EventLoopBuilder::<Wake>::with_user_event().build();
        #[cfg(target_os = "macos")]
        {
            // A command-line tool: no Dock icon, no menu bar.
            use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
            event_loop.set_activation_policy(ActivationPolicy::Prohibited);
        }
        let proxy = Arc::new(Mutex::new(event_loop.create_proxy()));
        let job_proxy = proxy.clone();
        let main = MainThread::new(move |job| {
            job_proxy
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .send_event(Wake::Job(job))
                .map_err(|_| MainThreadError::Stopped)
        });
        let result = Arc::new(Mutex::new(None));
        let worker_result = result.clone();
        std::thread::Builder::new()
            .name("utter-worker".into())
            .spawn(move || {
                let value = work(main);
                *worker_result.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
                let _ = proxy
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .send_event(Wake::Done);
            })
            .expect("spawn the worker thread");
        event_loop.run_return(|event, _, control_flow| {
            *control_flow = ControlFlow::Wait;
            match event {
                Event::UserEvent(Wake::Job(job)) => job(),
                Event::UserEvent(Wake::Done) => *control_flow = ControlFlow::Exit,
                _ => {}
            }
        });
        let value = result.lock().unwrap_or_else(|e| e.into_inner()).take();
        value.expect("the worker panicked")
    }
}
