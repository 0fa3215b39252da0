//! The GPU path for real (issue 16, and issue 11's GPU fallback): a Vulkan
//! build of `utter` on lavapipe, Mesa's software Vulkan device. Built and run
//! only by `npm run test:vulkan` (this target needs the `vulkan` feature).
//!
//! ggml-vulkan hides devices whose type is CPU, as lavapipe's is, unless
//! `GGML_VK_VISIBLE_DEVICES` lists them, so the runs that want the device set
//! it. Without it, or with `VK_ICD_FILENAMES` pointing at no driver, the
//! engine sees no Vulkan device: the machine of a user whose driver is gone.
//!
//! lavapipe is slow (about 80 s for one 3 s clip on 2 cores: every shader
//! runs on the CPU) and, here, its second run in one process corrupts the
//! heap (the worker dies; the supervisor moves the work to the CPU). So each
//! clip that must run on it gets a process of its own, and the hang bound is
//! raised so that slowness is not taken for a hang.

use std::path::PathBuf;
use std::process::{Command, Output};

use utter_core::text::{normalize_words, word_edit_distance};

mod common;
use common::librivox_clips as clips;

/// lavapipe is the first (and only) Vulkan device on the test machine.
const SHOW_LAVAPIPE: (&str, &str) = ("GGML_VK_VISIBLE_DEVICES", "0");
/// A Vulkan loader with no driver to load.
const NO_DRIVER: (&str, &str) = ("VK_ICD_FILENAMES", "/nonexistent/no-such-icd.json");

fn utter(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(args)
        .env("UTTER_ENGINE_RUN_TIMEOUT_S", "900")
        .envs(env.iter().copied())
        .output()
        .expect("utter runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Transcribes `clips` in one process; the JSON of each, and what it said on stderr.
fn transcribe(
    clips: &[(PathBuf, String)],
    compute: &str,
    env: &[(&str, &str)],
) -> (Vec<serde_json::Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["transcribe", "--compute", compute, "--format", "json", "-o"];
    args.push(dir.path().to_str().unwrap());
    args.extend(clips.iter().map(|(wav, _)| wav.to_str().unwrap()));
    let out = utter(&args, env);
    let err = stderr(&out);
    assert!(out.status.success(), "--compute {compute}: {err}");
    let json = clips
        .iter()
        .map(|(wav, _)| {
            let name = wav.file_stem().unwrap().to_str().unwrap();
            let text = std::fs::read_to_string(dir.path().join(format!("{name}.json"))).unwrap();
            serde_json::from_str(&text).unwrap()
        })
        .collect();
    (json, err)
}

/// Every clip in one process.
fn transcribe_all(compute: &str, env: &[(&str, &str)]) -> (Vec<serde_json::Value>, String) {
    transcribe(&clips(), compute, env)
}

/// Every clip in a process of its own.
fn transcribe_each(compute: &str, env: &[(&str, &str)]) -> (Vec<serde_json::Value>, String) {
    let (mut json, mut err) = (vec![], String::new());
    for clip in clips() {
        let (one, said) = transcribe(std::slice::from_ref(&clip), compute, env);
        json.extend(one);
        err.push_str(&said);
    }
    (json, err)
}

/// Word error rate over all clips, in percent.
fn wer_percent(transcripts: &[serde_json::Value]) -> f64 {
    let (mut errors, mut words) = (0, 0);
    for ((_, reference), t) in clips().iter().zip(transcripts) {
        let reference = normalize_words(reference);
        let hypothesis = normalize_words(t["text"].as_str().unwrap());
        errors += word_edit_distance(&reference, &hypothesis);
        words += reference.len();
    }
    100.0 * errors as f64 / words as f64
}

fn runs_on(transcripts: &[serde_json::Value], backend: &str) {
    for t in transcripts {
        assert_eq!(t["backend"], backend, "{t}");
    }
}

#[test]
fn the_engine_lists_the_software_vulkan_device() {
    let out = utter(&["devices", "--compute"], &[SHOW_LAVAPIPE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("vulkan") && l.contains("Vulkan0") && l.contains("llvmpipe")),
        "{listing}"
    );
    let doctor = utter(&["doctor"], &[SHOW_LAVAPIPE]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    let gpu = report.lines().find(|l| l.contains(" gpu ")).unwrap_or("");
    assert!(
        gpu.starts_with("ok") && gpu.contains("llvmpipe"),
        "{report}"
    );
}

#[test]
fn files_on_the_vulkan_device_read_as_on_the_cpu() {
    let (cpu, _) = transcribe_all("cpu", &[SHOW_LAVAPIPE]);
    let (vulkan, err) = transcribe_each("Vulkan0", &[SHOW_LAVAPIPE]);
    runs_on(&cpu, "cpu");
    runs_on(&vulkan, "vulkan");
    for t in &vulkan {
        let device = t["device"].as_str().unwrap_or_default();
        assert!(device.starts_with("Vulkan0: llvmpipe"), "{device}");
    }
    assert!(!err.contains("runs on the CPU"), "{err}");
    let (cpu_wer, vulkan_wer) = (wer_percent(&cpu), wer_percent(&vulkan));
    eprintln!("WER over the LibriVox clips: CPU {cpu_wer:.1} %, Vulkan {vulkan_wer:.1} %");
    assert!(
        vulkan_wer <= cpu_wer + 1.0,
        "Vulkan {vulkan_wer:.1} % vs CPU {cpu_wer:.1} %"
    );
}

#[test]
fn auto_with_no_vulkan_driver_runs_on_the_cpu_and_says_so() {
    let (transcripts, err) = transcribe_all("auto", &[NO_DRIVER]);
    runs_on(&transcripts, "cpu");
    assert!(
        err.contains("note: the speech engine runs on the CPU: this build can use Vulkan"),
        "{err}"
    );
    assert!(
        wer_percent(&transcripts) < 15.0,
        "the text is still delivered"
    );
}

#[test]
fn a_named_vulkan_device_that_is_gone_is_a_clear_error() {
    let clip = &clips()[0].0;
    let out = utter(
        &["transcribe", "--compute", "Vulkan0", clip.to_str().unwrap()],
        &[NO_DRIVER],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no compute device `Vulkan0`") && err.contains("CPU"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no transcript from a missing device");
}

/// Issue 11: the worker dies mid-file while on the GPU: it is restarted on
/// the CPU, the user is told, and the transcript is the CPU's.
#[test]
fn a_worker_that_dies_on_the_gpu_finishes_the_files_on_the_cpu() {
    let (cpu, _) = transcribe_all("cpu", &[]);
    let (after_crash, err) = transcribe_all(
        "auto",
        &[SHOW_LAVAPIPE, ("UTTER_ENGINE_FAULT", "abort-on-run:2")],
    );
    assert!(
        err.contains("failed on the GPU") && err.contains("runs on the CPU until Utter restarts"),
        "{err}"
    );
    let texts = |ts: &[serde_json::Value]| -> Vec<String> {
        ts.iter()
            .map(|t| t["text"].as_str().unwrap().to_string())
            .collect()
    };
    // The clips after the crash ran on the CPU, so their text is the CPU's.
    assert_eq!(texts(&after_crash)[1..], texts(&cpu)[1..]);
}
