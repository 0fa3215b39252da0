//! The app's own deliveries (History's Paste): one sink, kept for the app's
//! life on a thread of its own. On X11 and Wayland a paste's clipboard
//! server is what serves the user's previous clipboard back once the paste
//! has been read; a sink dropped after each paste took the user's copy (an
//! image, a file list) with it. The sink is opened again only when the
//! output settings change. A thread, because a sink is not `Send` (enigo's
//! handles on some systems).

use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;

use utter_core::platform::output::{
    open_sink, Delivery, OutputConfig, OutputEnv, OutputError, TextSink,
};

/// One delivery asked of the thread.
struct Request {
    text: String,
    how: Delivery,
    config: OutputConfig,
    env: OutputEnv,
    /// The notice for the user, if the text did not go as configured.
    reply: mpsc::Sender<Result<Option<String>, OutputError>>,
}

/// The handle the app keeps; the thread starts at the first delivery and
/// is waited for when the app drops it, so that the sink's goodbye (handing
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
    ) -> Result<Option<String>, OutputError> {
        let (reply, answer) = mpsc::channel();
        let request = Request {
            text: text.to_string(),
            how,
            config: config.clone(),
            env: env.clone(),
            reply,
        };
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
        drop(thread);
        answer.recv().unwrap_or(Err(OutputError::ClipboardOwner(
            "the delivery thread stopped before answering",
        )))
    }
}

impl Drop for Deliveries {
    fn drop(&mut self) {
        let thread = self.thread.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(DeliveryThread { requests, handle }) = thread.take() {
            drop(requests); // ends the thread's loop; the sink goes with it
            let _ = handle.join();
        }
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
    /// What opening it said (a method that fell back): told with every
    /// delivery through it, as when a sink was opened per delivery.
    notice: Option<String>,
}

fn serve(requests: mpsc::Receiver<Request>) {
    let mut kept: Option<Kept> = None;
    for request in requests {
        if kept.as_ref().is_some_and(|k| k.config != request.config) {
            kept = None;
        }
        let sink = match &mut kept {
            Some(k) => Ok(k),
            None => open_sink(&request.config, &request.env).map(|(sink, notice)| {
                kept.insert(Kept {
                    config: request.config.clone(),
                    sink,
                    notice,
                })
            }),
        };
        let result = sink.and_then(|k| {
            let outcome = k.sink.deliver(&request.text, &request.how)?;
            Ok(k.notice.clone().or(outcome.notice))
        });
        let _ = request.reply.send(result);
    }
}
