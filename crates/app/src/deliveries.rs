//! The app's one text sink, kept for the app's life on a thread of its own
//! and shared by the dictation service and History's Paste. On X11 and
//! Wayland a paste's clipboard server is what serves the user's previous
//! clipboard back once the paste has been read: a sink dropped while it
//! serves takes the user's copy (an image, a file list) with it. So the sink
//! is not the service's (which restarts with every settings change that
//! touches dictation) nor opened per paste; it is opened again only when the
//! output settings change. A thread, because a sink is not `Send` (enigo's
//! handles on some systems).

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use utter_platform::output::{
    open_sink, Delivery, DesktopError, Outcome, OutputConfig, OutputEnv, OutputError, TextSink,
};

/// What the thread is asked.
enum Request {
    /// Open the kept sink for `config` (or keep it, if it was opened with
    /// the same): answers what opening said.
    Open {
        config: OutputConfig,
        env: OutputEnv,
        reply: mpsc::Sender<Result<Option<String>, OutputError>>,
    },
    Deliver {
        text: String,
        how: Delivery,
        config: OutputConfig,
        env: OutputEnv,
        reply: mpsc::Sender<Result<Delivered, DesktopError>>,
    },
}

/// A delivery's outcome and what opening its sink said (a method that fell
/// back), which History's Paste tells with every paste.
struct Delivered {
    outcome: Outcome,
    opened_notice: Option<String>,
}

/// The handle the app keeps; the thread starts at the first request and is
/// waited for when the last handle goes, so that the sink's goodbye (handing
/// the clipboard to a clipboard manager on X11) happens before the exit.
#[derive(Default)]
pub(crate) struct Deliveries {
    thread: Mutex<Option<DeliveryThread>>,
}

struct DeliveryThread {
    requests: mpsc::Sender<Request>,
    handle: JoinHandle<()>,
}

impl Deliveries {
    /// Delivers `text` as `how` says through the kept sink (opened with
    /// `config` in `env`); returns the notice, if any, for the user.
    pub(crate) fn deliver(
        &self,
        text: &str,
        how: Delivery,
        config: &OutputConfig,
        env: &OutputEnv,
    ) -> Result<Option<String>, DesktopError> {
        let d = self.deliver_through(text, how, config, env)?;
        Ok(d.opened_notice.or(d.outcome.notice))
    }

    /// Opens the kept sink for `config` now and returns a handle to it for
    /// the dictation service, with what opening said (the service reports
    /// that once, as setup's `Degraded::Output`).
    pub(crate) fn open(
        self: &Arc<Self>,
        config: &OutputConfig,
        env: &OutputEnv,
    ) -> Result<(Box<dyn TextSink>, Option<String>), OutputError> {
        let (reply, answer) = mpsc::channel();
        self.send(Request::Open {
            config: config.clone(),
            env: env.clone(),
            reply,
        });
        let notice = answer
            .recv()
            .unwrap_or(Err(OutputError::ClipboardOwner(STOPPED)))?;
        let handle = SharedSink {
            deliveries: self.clone(),
            config: config.clone(),
            env: env.clone(),
        };
        Ok((Box::new(handle), notice))
    }

    fn deliver_through(
        &self,
        text: &str,
        how: Delivery,
        config: &OutputConfig,
        env: &OutputEnv,
    ) -> Result<Delivered, DesktopError> {
        let (reply, answer) = mpsc::channel();
        self.send(Request::Deliver {
            text: text.to_string(),
            how,
            config: config.clone(),
            env: env.clone(),
            reply,
        });
        answer
            .recv()
            .unwrap_or(Err(DesktopError::Clipboard(STOPPED.into())))
    }

    fn send(&self, request: Request) {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        let running = thread.get_or_insert_with(start_thread);
        if let Err(mpsc::SendError(request)) = running.requests.send(request) {
            // The thread ended (a panic in a sink): a new one.
            *running = start_thread();
            running
                .requests
                .send(request)
                .expect("a new delivery thread");
        }
    }
}

const STOPPED: &str = "the delivery thread stopped before answering";

impl Drop for Deliveries {
    fn drop(&mut self) {
        let thread = self.thread.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(DeliveryThread { requests, handle }) = thread.take() {
            drop(requests); // ends the thread's loop; the sink goes with it
            let _ = handle.join();
        }
    }
}

/// The dictation service's end of the kept sink: each delivery goes to the
/// thread with the config the service was started with.
struct SharedSink {
    deliveries: Arc<Deliveries>,
    config: OutputConfig,
    env: OutputEnv,
}

impl TextSink for SharedSink {
    fn deliver(&mut self, text: &str, how: &Delivery) -> Result<Outcome, DesktopError> {
        self.deliveries
            .deliver_through(text, *how, &self.config, &self.env)
            .map(|d| d.outcome)
    }
}

fn start_thread() -> DeliveryThread {
    let (requests, received) = mpsc::channel::<Request>();
    let handle = std::thread::Builder::new()
        .name("utter-deliveries".into())
        .spawn(move || serve(received))
        .expect("spawn the delivery thread");
    DeliveryThread { requests, handle }
}

/// The kept sink and the settings it was opened with.
struct Kept {
    config: OutputConfig,
    sink: Box<dyn TextSink>,
    /// What opening it said (a method that fell back).
    notice: Option<String>,
}

/// The kept sink for `config`: the one in hand if it was opened with the
/// same settings, else a new one (the old one goes first, so that only one
/// clipboard server is ever Utter's).
fn kept_for<'a>(
    kept: &'a mut Option<Kept>,
    config: &OutputConfig,
    env: &OutputEnv,
) -> Result<&'a mut Kept, OutputError> {
    if kept.as_ref().is_some_and(|k| &k.config != config) {
        *kept = None;
    }
    match kept {
        Some(k) => Ok(k),
        None => {
            let (sink, notice) = open_sink(config, env)?;
            Ok(kept.insert(Kept {
                config: config.clone(),
                sink,
                notice,
            }))
        }
    }
}

fn serve(requests: mpsc::Receiver<Request>) {
    let mut kept: Option<Kept> = None;
    for request in requests {
        match request {
            Request::Open { config, env, reply } => {
                let result = kept_for(&mut kept, &config, &env).map(|k| k.notice.clone());
                let _ = reply.send(result);
            }
            Request::Deliver {
                text,
                how,
                config,
                env,
                reply,
            } => {
                let result = kept_for(&mut kept, &config, &env)
                    .map_err(DesktopError::from)
                    .and_then(|k| {
                        let outcome = k.sink.deliver(&text, &how)?;
                        Ok(Delivered {
                            outcome,
                            opened_notice: k.notice.clone(),
                        })
                    });
                let _ = reply.send(result);
            }
        }
    }
}
