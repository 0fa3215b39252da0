//! Terminal emulators on the X11 desktop whose shell writes what it read
//! to a file.

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use super::wait_until;
use super::x11::Desktop;

/// A terminal emulator running a shell that reads one line and writes it
/// to a file: what the terminal really pasted, as its shell saw it.
pub struct Terminal {
    child: Child,
    out: PathBuf,
}

impl Terminal {
    /// `program` is `xterm`, `lxterminal` or `kitty` (Debian's), titled `title`.
    pub fn open(d: &Desktop, program: &str, title: &str) -> Self {
        let out = d.runtime_dir.join(format!("{title}.out"));
        let _ = std::fs::remove_file(&out);
        let script = format!(
            "IFS= read -r line; printf %s \"$line\" > '{}'",
            out.display()
        );
        let mut cmd = d.cmd(program);
        match program {
            // Without xfonts-base xterm has no core fonts: FreeType's monospace.
            "xterm" => cmd.args(["-fa", "Monospace", "-T", title, "-e", "bash", "-c", &script]),
            "kitty" => cmd.args(["--config", "NONE", "--title", title, "bash", "-c", &script]),
            _ => cmd.args(["-t", title, "-e", "bash", "-c", &script]),
        };
        let child = cmd
            .env("NO_AT_BRIDGE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} is installed (npm test installs it): {e}"));
        let window = d.wait_for_window(
            &format!("the {program} window"),
            &["--name", title],
            Duration::from_secs(30),
        );
        std::thread::sleep(Duration::from_millis(800)); // its shell starts
        d.xdotool(&["windowfocus", "--sync", &window]);
        Self { child, out }
    }

    /// Presses Return and returns the line the shell read.
    pub fn submit(mut self, d: &Desktop) -> String {
        d.xdotool(&["key", "Return"]);
        wait_until("the terminal's line", Duration::from_secs(10), || {
            self.out.exists()
        });
        std::thread::sleep(Duration::from_millis(100));
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::read_to_string(&self.out)
            .unwrap()
            .trim()
            .to_string()
    }

    /// `xterm` running a shell that reads `lines` lines into a file: a
    /// multi-line paste as the shell saw it.
    pub fn open_reading_lines(d: &Desktop, title: &str, lines: usize) -> Self {
        let out = d.runtime_dir.join(format!("{title}.out"));
        let _ = std::fs::remove_file(&out);
        let partial = out.with_extension("partial");
        let script = format!(
            "head -n {lines} > '{}' && mv '{}' '{}'",
            partial.display(),
            partial.display(),
            out.display()
        );
        let child = d
            .cmd("xterm")
            .args(["-fa", "Monospace", "-T", title, "-e", "bash", "-c", &script])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xterm is installed (npm test installs it)");
        let window = d.wait_for_window(
            "the xterm window",
            &["--name", title],
            Duration::from_secs(30),
        );
        std::thread::sleep(Duration::from_millis(800)); // its shell starts
        d.xdotool(&["windowfocus", "--sync", &window]);
        Self { child, out }
    }
}
