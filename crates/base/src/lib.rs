//! utter-base: what every crate may use and no desktop is needed for —
//! [`paths`] (where Utter keeps its files), [`threads`] (a join with a time
//! limit) and [`panics`] (a panic contained into an error). A leaf crate, so
//! the engine and the model store need not link the desktop (utter-platform)
//! for them; utter-platform re-exports them at their old paths.

pub mod panics;
pub mod paths;
pub mod threads;
