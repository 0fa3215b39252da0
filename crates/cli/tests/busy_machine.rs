//! The engine on a busy machine (issue 30): with both of its cores kept busy
//! by other programs, `utter` takes one engine thread instead of two, and
//! still transcribes right. Real busy loops in sessions of their own, pinned
//! with `taskset` to the two CPUs `utter` is pinned to; other tests running at
//! the same time can only add to the load, so they cannot change the answer.

use std::process::{Child, Command, Output};

use utter_core::text::{normalize_words, word_edit_distance};

const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav";
const SAID: &str = "he was not an ill disposed young man";

/// A shell loop pinned to `cpu`, killed on drop.
struct BusyLoop(Child);

impl BusyLoop {
    fn on(cpu: usize) -> Self {
        let child = Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset (util-linux) runs");
        Self(child)
    }
}

impl Drop for BusyLoop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `utter ARGS` on CPUs 0 and 1 with both kept busy.
fn utter_beside_two_busy_loops(args: &[&str]) -> Option<Output> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("skipped: this machine lets the tests use {cpus} CPU; the check needs two");
        return None;
    }
    let _loops = [BusyLoop::on(0), BusyLoop::on(1)];
    // Let the loops be running before utter measures.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = Command::new("taskset")
        .args(["-c", "0,1", env!("CARGO_BIN_EXE_utter")])
        .args(args)
        .env("UTTER_LOG", "info")
        // The test suite fixes the default count (scripts/test.sh); this is
        // the default users get.
        .env_remove(utter_engine::cpu::FIXED_THREADS_ENV)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("utter runs");
    Some(out)
}

#[test]
fn with_both_cores_busy_the_engine_takes_one_thread_and_still_hears_right() {
    let Some(out) = utter_beside_two_busy_loops(&["transcribe", CLIP]) else {
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("engine threads: 1"), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = word_edit_distance(&normalize_words(SAID), &normalize_words(&text));
    assert!(errors <= 2, "{text}");
}

#[test]
fn doctor_says_how_many_threads_the_load_leaves() {
    let Some(out) = utter_beside_two_busy_loops(&["doctor"]) else {
        return;
    };
    let report = String::from_utf8_lossy(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.contains(" threads "))
        .unwrap_or_else(|| panic!("no threads line in:\n{report}"));
    assert!(
        line.contains("up to 2") && line.contains(": 1 now"),
        "{line}"
    );
}
