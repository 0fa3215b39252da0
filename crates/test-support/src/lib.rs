//! Helpers shared by the test binaries of more than one of Utter's crates.
//! A dev-dependency only: nothing here ships, and it depends on nothing, so
//! any crate's tests can use it.
//!
//! - [`http`]: a loopback HTTP server that serves byte ranges and can
//!   misbehave on purpose, for the model and wheel download tests; it
//!   records each request (method, headers, body) and can stream a reply.
//! - [`call`]: a two-sided call of real voices (the others on the system
//!   output, you at the microphone), for the meeting tests.
//! - [`chat`]: the replies of an OpenAI-compatible chat-completions server
//!   (streamed answers, errors, the model list), for the AI rewrite tests.
//! - [`chromium`] (Unix): Chromium showing a text area whose value is read
//!   through DevTools, for paste and typing tests into a browser.
//! - [`firefox`] (Unix): Firefox showing a text area whose page posts each
//!   change of its value to a loopback server, for the same.
//! - [`desktop`] (Unix): an Xvfb display and a PulseAudio virtual microphone
//!   that a test can kill, as a logout does.
//! - [`x11_clipboard`] (Unix): the X11 clipboard as xclip sees it, a
//!   user's copy (text or an image) served by xclip.
//! - [`sway`] (Unix): a headless sway session (Wayland) with its
//!   clipboard and key tools.
//! - [`llm`] (Unix): a real llama.cpp server with a small real model, for
//!   the AI rewrite's tests against a real server.

pub mod call;
pub mod chat;
#[cfg(unix)]
pub mod chromium;
#[cfg(unix)]
pub mod desktop;
#[cfg(unix)]
pub mod firefox;
pub mod http;
#[cfg(unix)]
pub mod llm;
#[cfg(unix)]
pub mod sway;
#[cfg(unix)]
pub mod x11_clipboard;
