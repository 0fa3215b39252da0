//! The HTTP side: a streamed `POST …/chat/completions` under a hard
//! deadline, and `GET …/models`. The key goes only in the `Authorization`
//! header of requests to the configured address (redirects are not
//! followed), marked sensitive, and is scrubbed from anything a server sends
//! back before it can reach a notice or a log.
//!
//! The request runs on a worker thread that passes each piece of text over a
//! channel; the caller waits on the channel until the deadline and no longer.
//! (reqwest's blocking timeout applies to each read, so a server trickling a
//! token now and then could outlast it.) A caller that stops listening drops
//! the channel: the worker's next send fails and it drops the connection,
//! so a streaming server learns within a token that nobody is reading; a
//! server still reading the prompt (sending nothing) is cut off by the
//! worker's own timeout, [`WORKER_SLACK`] after the deadline.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{StatusCode, Url};

use crate::check::{self, Rules};
use crate::keys::ApiKey;
use crate::sse;
use crate::Notice;

/// The worker's own timeout (reqwest's total timeout: connect, headers and
/// body) runs this much past the caller's deadline, so the caller's deadline
/// decides and the connection still closes right after it.
const WORKER_SLACK: Duration = Duration::from_millis(100);
/// The most of an error body or a non-streamed answer read.
const BODY_MAX: u64 = 1 << 20;
/// The longest server message quoted in a notice.
const DETAIL_MAX_CHARS: usize = 200;

/// A streamed answer that ended properly.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub text: String,
    pub model: Option<String>,
    pub first_token: Option<Duration>,
    pub total: Duration,
    /// The server's `finish_reason` (`stop`, `length`...), if it sent one.
    pub finish: Option<String>,
}

/// What the worker tells the caller.
enum Msg {
    Piece { text: String, model: Option<String> },
    End { finish: Option<String> },
    Failed(Notice),
}

#[derive(Clone)]
pub struct Http {
    client: Client,
}

/// The HTTP client could not be built (its TLS backend failed to start).
#[derive(Debug, thiserror::Error)]
#[error("the HTTP client could not start: {0}")]
pub struct ClientError(String);

impl Http {
    pub fn new() -> Result<Self, ClientError> {
        let client = Client::builder()
            // A redirect could carry the key elsewhere: a redirect is an error.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Utter/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError(e.to_string()))?;
        Ok(Self { client })
    }

    /// Posts `body` and gathers the streamed answer, within `budget` from
    /// now. The answer is cut off as soon as it is longer than `rules`
    /// allow.
    pub fn stream_chat(
        &self,
        url: Url,
        key: Option<&ApiKey>,
        body: Vec<u8>,
        budget: Duration,
        rules: &Rules,
    ) -> Result<Answer, Notice> {
        let started = Instant::now();
        let deadline = started + budget;
        let origin = url.origin().ascii_serialization();
        let (tx, rx) = mpsc::channel();
        let timeout = budget + WORKER_SLACK;
        let request = self
            .client
            .post(url.clone())
            .timeout(timeout)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        let request = authorize(request, key);
        let key = key.cloned();
        // The caller's logging context (a test's capture, the app's file).
        let dispatch = tracing::dispatcher::get_default(|d| d.clone());
        std::thread::Builder::new()
            .name("utter-rewrite".into())
            .spawn(move || {
                tracing::dispatcher::with_default(&dispatch, || {
                    fetch(request, &url, key.as_ref(), timeout, &tx);
                });
            })
            .map_err(|e| Notice::Unreachable {
                url: origin.clone(),
                detail: format!("no thread for the request: {e}"),
            })?;

        let mut answer = Answer::default();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Msg::Piece { text, model }) => {
                    if answer.first_token.is_none() && !text.is_empty() {
                        answer.first_token = Some(started.elapsed());
                    }
                    answer.text.push_str(&text);
                    answer.model = model.or(answer.model);
                    let shown = check::visible(&answer.text).trim().chars().count();
                    if shown > rules.max_chars {
                        return Err(check::too_long(shown, rules.input));
                    }
                }
                Ok(Msg::End { finish }) => {
                    answer.finish = finish;
                    answer.total = started.elapsed();
                    return Ok(answer);
                }
                Ok(Msg::Failed(notice)) => return Err(notice),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Notice::TimedOut {
                        after_ms: budget.as_millis() as u64,
                    })
                }
                Err(RecvTimeoutError::Disconnected) => return Err(Notice::ConnectionClosed),
            }
        }
    }

    /// The model ids the server lists, sorted.
    pub fn models(
        &self,
        url: Url,
        key: Option<&ApiKey>,
        timeout: Duration,
    ) -> Result<Vec<String>, Notice> {
        let request = self.client.get(url.clone()).timeout(timeout);
        let response = authorize(request, key)
            .send()
            .map_err(|e| request_failed(&e, &url, timeout))?;
        if !response.status().is_success() {
            return Err(status_notice(response, key));
        }
        let body = read_body(response).map_err(|e| read_failed(&e, timeout))?;
        #[derive(serde::Deserialize)]
        struct List {
            data: Vec<Item>,
        }
        #[derive(serde::Deserialize)]
        struct Item {
            id: String,
        }
        let list: List = serde_json::from_slice(&body).map_err(|e| Notice::Unreadable {
            detail: format!("not a model list: {e}"),
        })?;
        let mut ids: Vec<String> = list.data.into_iter().map(|m| m.id).collect();
        ids.sort();
        ids.dedup();
        Ok(ids)
    }
}

/// `Authorization: Bearer …`, marked sensitive so reqwest never prints it.
fn authorize(request: RequestBuilder, key: Option<&ApiKey>) -> RequestBuilder {
    let Some(key) = key else { return request };
    match HeaderValue::from_str(&format!("Bearer {}", key.expose())) {
        Ok(mut value) => {
            value.set_sensitive(true);
            request.header(AUTHORIZATION, value)
        }
        // ApiKey::new admits no character a header cannot carry.
        Err(_) => request,
    }
}

/// The worker: sends the request and passes the answer on piece by piece.
fn fetch(
    request: RequestBuilder,
    url: &Url,
    key: Option<&ApiKey>,
    timeout: Duration,
    tx: &Sender<Msg>,
) {
    tracing::debug!(%url, "chat request");
    let result = request
        .send()
        .map_err(|e| request_failed(&e, url, timeout))
        .and_then(|response| {
            if !response.status().is_success() {
                return Err(status_notice(response, key));
            }
            let json = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
            if json {
                whole_answer(response, tx, timeout)
            } else {
                streamed_answer(response, tx, timeout)
            }
        });
    if let Err(notice) = result {
        let notice = scrub(notice, key);
        tracing::debug!(%notice, "chat request failed");
        let _ = tx.send(Msg::Failed(notice));
    }
}

/// Reads the events; returns once the answer is complete (and handed on)
/// or the caller stopped listening.
fn streamed_answer(response: Response, tx: &Sender<Msg>, timeout: Duration) -> Result<(), Notice> {
    // A server sending keep-alive comments forever must not hold this thread.
    let until = Instant::now() + timeout;
    let mut reader = BufReader::new(response);
    let mut line = Vec::new();
    let mut saw_data = false;
    loop {
        if Instant::now() > until {
            return Err(timed_out(timeout));
        }
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| read_failed(&e, timeout))?;
        if read == 0 {
            return Err(if saw_data {
                Notice::ConnectionClosed
            } else {
                Notice::Unreadable {
                    detail: "the server sent no chat-completions events".into(),
                }
            });
        }
        let chunk =
            sse::parse_line(&String::from_utf8_lossy(&line)).map_err(|e| Notice::Unreadable {
                detail: e.to_string(),
            })?;
        let Some(chunk) = chunk else { continue };
        saw_data = true;
        if let Some(message) = chunk.error {
            return Err(Notice::StreamError {
                message: shorten(&message),
            });
        }
        if (!chunk.text.is_empty() || chunk.model.is_some())
            && tx
                .send(Msg::Piece {
                    text: chunk.text,
                    model: chunk.model,
                })
                .is_err()
        {
            return Ok(()); // the caller gave up: dropping the response aborts it
        }
        if chunk.finish.is_some() || chunk.done {
            let _ = tx.send(Msg::End {
                finish: chunk.finish,
            });
            // Read what is left (`[DONE]`, the closing chunk) so the
            // connection can be reused; the caller is not waiting for it.
            drain(reader, until);
            return Ok(());
        }
    }
}

/// Reads the rest of a body until its end, an error or `until`.
fn drain(mut reader: impl Read, until: Instant) {
    let mut buf = [0; 4096];
    while Instant::now() < until && matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
}

/// A server that ignored `stream: true` sent one JSON completion.
fn whole_answer(response: Response, tx: &Sender<Msg>, timeout: Duration) -> Result<(), Notice> {
    let body = read_body(response).map_err(|e| read_failed(&e, timeout))?;
    let chunk =
        sse::parse_json(&String::from_utf8_lossy(&body)).map_err(|e| Notice::Unreadable {
            detail: e.to_string(),
        })?;
    if let Some(message) = chunk.error {
        return Err(Notice::StreamError {
            message: shorten(&message),
        });
    }
    let finish = chunk.finish.or_else(|| Some("stop".into()));
    let _ = tx.send(Msg::Piece {
        text: chunk.text,
        model: chunk.model,
    });
    let _ = tx.send(Msg::End { finish });
    Ok(())
}

fn read_body(response: Response) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    response.take(BODY_MAX).read_to_end(&mut body)?;
    Ok(body)
}

/// A status other than 2xx, with the server's own message when it sent one.
fn status_notice(response: Response, key: Option<&ApiKey>) -> Notice {
    let status = response.status();
    tracing::warn!(
        status = status.as_u16(),
        "the server answered with an error"
    );
    let body = read_body(response).unwrap_or_default();
    let detail = error_detail(status, &body);
    scrub(
        Notice::ServerError {
            status: status.as_u16(),
            detail,
        },
        key,
    )
}

/// The `error.message` of a JSON body, or a short plain-text body.
fn error_detail(status: StatusCode, body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let message = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(mut fields)) => fields
            .remove("error")
            .map(sse::error_message)
            .or_else(|| fields.remove("message").map(sse::error_message))?,
        _ if !text.is_empty() && !text.starts_with('<') && text.len() <= DETAIL_MAX_CHARS => {
            text.to_string()
        }
        _ => return None,
    };
    let message = message.trim();
    (!message.is_empty() && !status.is_redirection()).then(|| shorten(message))
}

fn request_failed(e: &reqwest::Error, url: &Url, timeout: Duration) -> Notice {
    if e.is_timeout() {
        return timed_out(timeout);
    }
    if e.is_connect() {
        return Notice::Unreachable {
            url: url.origin().ascii_serialization(),
            detail: root_cause(e),
        };
    }
    tracing::debug!(error = %root_cause(e), "the request failed");
    Notice::ConnectionClosed
}

fn read_failed(e: &std::io::Error, timeout: Duration) -> Notice {
    let timed_out_read = e.kind() == std::io::ErrorKind::TimedOut
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
            .is_some_and(reqwest::Error::is_timeout);
    if timed_out_read {
        return timed_out(timeout);
    }
    tracing::debug!(error = %e, "the answer was cut off");
    Notice::ConnectionClosed
}

fn timed_out(timeout: Duration) -> Notice {
    Notice::TimedOut {
        after_ms: timeout.saturating_sub(WORKER_SLACK).as_millis() as u64,
    }
}

/// The innermost error's words ("Connection refused (os error 111)").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(DETAIL_MAX_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A server may quote the key back in its error message.
fn scrub(notice: Notice, key: Option<&ApiKey>) -> Notice {
    let Some(key) = key else { return notice };
    let clean = |text: String| text.replace(key.expose(), "<redacted>");
    match notice {
        Notice::ServerError { status, detail } => Notice::ServerError {
            status,
            detail: detail.map(clean),
        },
        Notice::StreamError { message } => Notice::StreamError {
            message: clean(message),
        },
        Notice::Unreadable { detail } => Notice::Unreadable {
            detail: clean(detail),
        },
        Notice::Unreachable { url, detail } => Notice::Unreachable {
            url,
            detail: clean(detail),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_give_short_details() {
        let status = StatusCode::INTERNAL_SERVER_ERROR;
        assert_eq!(
            error_detail(status, br#"{"error":{"message":"model 'x' not found"}}"#),
            Some("model 'x' not found".into())
        );
        assert_eq!(
            error_detail(status, b"upstream down"),
            Some("upstream down".into())
        );
        assert_eq!(error_detail(status, b"<html><body>502</body></html>"), None);
        assert_eq!(error_detail(status, b""), None);
        let long = "x".repeat(500);
        let json = format!(r#"{{"error":"{long}"}}"#);
        assert_eq!(
            error_detail(status, json.as_bytes())
                .unwrap()
                .chars()
                .count(),
            201
        );
    }

    #[test]
    fn a_quoted_key_is_scrubbed() {
        let key = ApiKey::new("sk-live-123").unwrap();
        let notice = scrub(
            Notice::ServerError {
                status: 401,
                detail: Some("Incorrect API key provided: sk-live-123".into()),
            },
            Some(&key),
        );
        assert!(!notice.to_string().contains("sk-live-123"), "{notice}");
    }
}
