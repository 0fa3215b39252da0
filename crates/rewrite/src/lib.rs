//! utter-rewrite: dictated text rewritten by a language model (clean-up,
//! formal, email...), or a spoken command carried out on the selected text,
//! through any OpenAI-compatible chat-completions server: a local one
//! (Ollama, LM Studio, llama.cpp's server, vLLM) or a hosted one with the
//! user's key from the OS keychain.
//!
//! Nothing here can lose what the user said: [`Rewriter::rewrite`] and
//! [`Rewriter::command`] return an [`Outcome`], either the model's checked
//! text or the words as said with a [`Notice`] (too slow for the time
//! budget, a server error, a closed connection, an empty, oversized or
//! refusing answer, not set up, no key). Off by default; nothing is sent
//! until the user turns it on, and only to the provider they chose.
//!
//! GUI- and OS-free apart from the keychain ([`KeyStore`]); blocking.

mod check;
mod client;
mod config;
mod keys;
pub mod modes;
mod outcome;
mod provider;
mod rewriter;
mod sse;

pub use client::ClientError;
pub use config::{
    ConfigError, RewriteConfig, MODE_ID_MAX_CHARS, MODE_NAME_MAX_CHARS, PROMPT_MAX_CHARS,
};
pub use keys::{ApiKey, KeyError, KeyStore, KEYCHAIN_SERVICE};
pub use modes::Mode;
pub use outcome::{Notice, Outcome};
pub use provider::{
    providers, KeyUse, ProviderConfig, ProviderInfo, ProviderKind, DEFAULT_TIME_BUDGET_MS,
    TIME_BUDGET_MS_RANGE,
};
pub use rewriter::{Rewriter, TEST_SENTENCE};
