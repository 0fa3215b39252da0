//! Standard output that ends the program quietly when its reader has gone
//! away (`utter models list --available | head`), as Unix tools do, where
//! `println!` would panic with "failed printing to stdout: Broken pipe".

use std::io::{ErrorKind, StdoutLock, Write};

/// `println!` for the CLI's results.
macro_rules! out {
    () => {
        $crate::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

pub fn line(args: std::fmt::Arguments) {
    write(|out| {
        out.write_fmt(args)?;
        out.write_all(b"\n")
    });
}

/// Runs `f` on the locked standard output and flushes it.
pub fn write(f: impl FnOnce(&mut StdoutLock) -> std::io::Result<()>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = f(&mut out).and_then(|()| out.flush()) {
        exit_on(e);
    }
}

/// A closed pipe is a normal end (exit 0); any other write error is reported.
pub fn exit_on(e: std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to standard output: {e}");
    std::process::exit(crate::exit::FILE_FAILED.into());
}
