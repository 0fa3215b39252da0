//! `stream=true`: server-sent events as OpenAI sends them, one
//! `transcript.text.delta` per settled segment, then `transcript.text.done`
//! and `data: [DONE]`. The events' receiver is the response body: when the
//! client goes away it is dropped, and the job is cancelled with it.

use std::convert::Infallible;

use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::json;
use std::sync::Arc;
use tempfile::NamedTempFile;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use crate::jobs::{Admission, Job, Jobs};

fn event(value: serde_json::Value) -> Event {
    Event::default().data(value.to_string())
}

pub fn respond(
    jobs: Arc<Jobs>,
    admission: Admission,
    mut job: Job,
    audio: NamedTempFile,
) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    let deltas = tx.clone();
    let mut first = true;
    job.on_segment = Some(Box::new(move |segment| {
        let text = segment.text.trim();
        if text.is_empty() {
            return;
        }
        // Spaces between segments, as the whole text joins them.
        let delta = if first {
            text.to_string()
        } else {
            format!(" {text}")
        };
        first = false;
        let _ = deltas.send(event(
            json!({"type": "transcript.text.delta", "delta": delta}),
        ));
    }));
    tokio::spawn(async move {
        let _audio = audio; // deleted when the job is over
        let result = tokio::select! {
            result = jobs.run(admission, job) => result,
            // The client disconnected: dropping the run cancels it.
            () = tx.closed() => return,
        };
        let last = match result {
            Ok(t) => json!({"type": "transcript.text.done", "text": t.text()}),
            Err(e) => {
                json!({"error": {"message": e.message, "type": e.kind, "param": e.param, "code": e.code}})
            }
        };
        let _ = tx.send(event(last));
        let _ = tx.send(Event::default().data("[DONE]"));
    });
    Sse::new(UnboundedReceiverStream::new(rx).map(Ok::<_, Infallible>)).into_response()
}
