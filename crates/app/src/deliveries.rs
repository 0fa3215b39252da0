//! The app's own deliveries (History's Paste): one sink, kept for the app's
//! life on a thread of its own. On X11 and Wayland a paste's clipboard
//! server is what serves the user's previous clipboard back once the paste
//! has been read; a sink dropped after each paste took the user's copy (an
//! image, a file list) with it. The sink is opened again only when the
//! output settings change. A thread, because a sink is not `Send` (enigo's
//! handles on some systems).

use std::sync::mpsc;
use std::sync::Mutex;

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

/// The handle the app keeps; the thread starts at the first delivery.
#[derive(Default)]
pub(crate) struct Deliveries {
    requests: Mutex<Option<mpsc::Sender<Request>>>,
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
        let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        let sender = requests.get_or_insert_with(start_thread);
        if let Err(mpsc::SendError(request)) = sender.send(request) {
            // The thread ended (a panic in a sink): a new one.
            *sender = start_thread();
            sender.send(request).expect("a new delivery thread");
        }
        drop(requests);
        answer.recv().unwrap_or(Err(OutputError::ClipboardOwner(
            "the delivery thread stopped before answering",
        )))
    }
}

fn start_thread() -> mpsc::Sender<Request> {
    let (sender, requests) = mpsc::channel::<Request>();
    std::thread::Builder::new()
        .name("utter-deliveries".into())
        .spawn(move || serve(requests))
        .expect("spawn the delivery thread");
    sender
}

/// The kept sink and the settings it was opened with.
struct Kept {
    config: OutputConfig,
    sink: Box<dyn TextSink>,
    /// Said once, when the sink was opened (a method that fell back).
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
