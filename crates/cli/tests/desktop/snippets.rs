//! Snippets (issue 40): a spoken trigger pastes its stored lines.

use std::process::Command;
use std::time::Duration;

use crate::harness::dictate::{Dictate, Take};
use crate::harness::speech::asterisk_prompt;
use crate::harness::terminal::Terminal;
use crate::harness::x11::desktop;
use crate::harness::{serial, wait_until};

/// "Goodbye" said alone (a real recording) with a snippet for it from
/// `--snippets-file`: the three stored lines arrive in xterm, the date and
/// the clipboard's text filled in, and the clipboard is given back.
#[test]
fn a_spoken_trigger_pastes_a_multi_line_snippet_into_a_terminal() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let goodbye = asterisk_prompt(d, "en_US_f_Allison/vm-goodbye.g722", "goodbye.wav");
    let snippets = tmp.path().join("snippets.txt");
    std::fs::write(
        &snippets,
        "# test\n== goodbye\nBest regards,\nAnna, {date}\nref: {clipboard}\n",
    )
    .unwrap();
    let today = Command::new("date").arg("+%Y-%m-%d").output().unwrap();
    let today = String::from_utf8_lossy(&today.stdout).trim().to_string();
    let expected = format!("Best regards,\nAnna, {today}\nref: order 42");
    let _clipboard = d.set_clipboard("order 42");
    let dictate = Dictate::start(
        d,
        tmp.path(),
        &[
            "--output",
            "paste",
            "--snippets-file",
            snippets.to_str().unwrap(),
        ],
    );
    let terminal = Terminal::open_reading_lines(d, "Snippet-xterm", 3);
    let delivered = Take::hotkey(d, &goodbye).run(&dictate);
    assert_eq!(
        delivered["text"].as_str().map(str::trim_end),
        Some(expected.as_str()),
        "{delivered}"
    );
    assert!(
        delivered["raw_text"]
            .as_str()
            .is_some_and(|raw| raw.to_lowercase().contains("goodbye")),
        "the engine heard the trigger: {delivered}"
    );
    assert_eq!(terminal.submit(d), expected);
    wait_until("the clipboard back", Duration::from_secs(5), || {
        d.clipboard() == "order 42"
    });
    dictate.stop();
}
