//! Helpers shared by the test binaries of more than one of Utter's crates.
//! A dev-dependency only: nothing here ships, and it depends on nothing, so
//! any crate's tests can use it.
//!
//! - [`http`]: a loopback HTTP server that serves byte ranges and can
//!   misbehave on purpose, for the model and wheel download tests.

pub mod http;
