//! Containing panics from third-party parsers (a demuxer that `expect`s on a
//! corrupt file): the panic becomes an error for that one file, and the
//! default "thread panicked" message is replaced by a debug log line while
//! it is being contained, so the user sees one clean error.

// clippy calls these already-`const` initialisers non-const where std has no native
// thread locals (windows-gnu): rust-lang/rust-clippy#17566.
#![cfg_attr(
    all(windows, target_env = "gnu"),
    allow(clippy::missing_const_for_thread_local)
)]

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many [`contain`] calls are running on this thread.
    static CONTAINING: Cell<u32> = const { Cell::new(0) };
}

/// Routes panics inside [`contain`] to the log; others go to the hook that
/// was there before (the default one prints them).
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CONTAINING.with(Cell::get) > 0 {
                tracing::debug!("contained panic: {info}");
            } else {
                previous(info);
            }
        }));
    });
}

/// A panic caught by [`contain`], with its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Panic {
    pub message: String,
}

/// Runs `f`; a panic inside it is returned as its message.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    install_hook();
    CONTAINING.with(|c| c.set(c.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f));
    CONTAINING.with(|c| c.set(c.get() - 1));
    result.map_err(|payload| Panic {
        message: payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_the_thread_goes_on() {
        assert_eq!(contain(|| 7), Ok(7));
        let err = contain(|| -> u8 { panic!("EBML header must be read") }).unwrap_err();
        assert_eq!(err.message, "EBML header must be read");
        let err = contain(|| -> u8 { panic!("{} tensors", 4) }).unwrap_err();
        assert_eq!(err.to_string(), "4 tensors");
        assert_eq!(contain(|| "still fine"), Ok("still fine"));
    }
}
