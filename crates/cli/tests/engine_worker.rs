//! The engine in its own process, tested from outside as a user would see
//! it: the real `utter` binary and model on real speech, with its worker
//! process killed by a signal, aborted by fault injection, and orphaned.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod common;
use common::{engine_workers, wav_files, LIBRIVOX};

/// 124 s of dense real speech: the five LibriVox clips, five times over.
fn long_speech() -> &'static Path {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("utter-worker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("long-speech.wav");
        let clips = wav_files(Path::new(LIBRIVOX));
        let all: Vec<&PathBuf> = (0..5).flat_map(|_| clips.iter()).collect();
        let ok = Command::new("sox")
            .args(&all)
            .arg(&out)
            .status()
            .unwrap()
            .success();
        assert!(ok, "sox builds the long file");
        out
    })
}

fn utter() -> Command {
    Command::new(env!("CARGO_BIN_EXE_utter"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Running (a zombie waiting for a reaper counts as gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|rest| rest.trim().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z'))
}

fn wait_for_workers(parent: &Child, n: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let workers = engine_workers(parent.id());
        if workers.len() >= n {
            return workers;
        }
        assert!(Instant::now() < deadline, "no engine worker started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn transcribe_long(env: &[(&str, &str)]) -> Child {
    utter()
        // A fixed thread count: the default follows the machine's load, and
        // whisper's punctuation can differ by a comma between 1 and 2 threads
        // (floating-point sums in another order); this test is about the restart.
        .args(["transcribe", "--format", "txt", "--threads", "2"])
        .arg(long_speech())
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "utter failed: {}", text(&out.stderr));
    out
}

#[test]
fn a_file_whose_worker_is_killed_mid_file_gets_the_same_transcript() {
    let undisturbed = finish(transcribe_long(&[]));
    let reference = text(&undisturbed.stdout);
    assert!(
        reference.to_lowercase().contains("dashwood"),
        "a real transcript: {reference}"
    );

    let child = transcribe_long(&[]);
    let workers = wait_for_workers(&child, 1);
    // Mid-file: the model has loaded and the first windows are running.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child_running(&child),
        "the file must still be in progress when its worker is killed"
    );
    let killed = Command::new("kill")
        .args(["-KILL", &workers[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = finish(child);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("note: the speech engine stopped (killed by SIGKILL) and was restarted"),
        "the user is told: {stderr}"
    );
    assert_eq!(
        text(&out.stdout),
        reference,
        "same transcript as undisturbed"
    );
}

/// The worker's name once it has named itself: pgrep finds it by its
/// arguments the moment it is exec'd, a little before its first lines rename it.
fn eventual_name(pid: u32, expected: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .unwrap_or_default()
            .trim()
            .to_string();
        if name == expected || Instant::now() > deadline {
            return name;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn child_running(child: &Child) -> bool {
    alive(child.id())
}

#[test]
fn killing_the_parent_with_sigkill_leaves_no_worker_behind() {
    let mut child = transcribe_long(&[]);
    let mut workers = wait_for_workers(&child, 1);
    assert_eq!(
        eventual_name(workers[0], "utter-engine"),
        "utter-engine",
        "named for ps and top"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let detectors = loop {
        let found = common::vad_workers(child.id());
        if !found.is_empty() || Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(detectors.len(), 1, "the voice detector has its own worker");
    assert_eq!(eventual_name(detectors[0], "utter-vad"), "utter-vad");
    workers.extend(detectors);
    std::thread::sleep(Duration::from_millis(500)); // mid-run
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    let _ = child.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while workers.iter().any(|&w| alive(w)) {
        assert!(
            Instant::now() < deadline,
            "workers {workers:?} outlived their parent"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_abort_is_survived_and_a_second_on_the_same_audio_is_a_clear_error() {
    let clip = Path::new(LIBRIVOX).join("sense_and_sensibility_01_austen_64kb-0930.wav");
    let once = utter()
        .arg("transcribe")
        .arg(&clip)
        .env("UTTER_ENGINE_FAULT", "abort-on-run:1")
        .output()
        .unwrap();
    assert!(once.status.success(), "{}", text(&once.stderr));
    assert!(
        text(&once.stdout).contains("amiable"),
        "{}",
        text(&once.stdout)
    );
    assert!(
        text(&once.stderr).contains("killed by SIGABRT) and was restarted"),
        "{}",
        text(&once.stderr)
    );

    // Runs 1 and 2 are the first run and its resubmission: the same audio twice.
    let twice = utter()
        .args(["transcribe", "--workers", "1"])
        .arg(&clip)
        .arg(&clip)
        .env("UTTER_ENGINE_FAULT", "abort-on-run:1,2")
        .output()
        .unwrap();
    let stderr = text(&twice.stderr);
    assert_eq!(twice.status.code(), Some(1), "a failed file: {stderr}");
    assert!(
        stderr.contains("the speech engine crashed twice on this audio (killed by SIGABRT)"),
        "{stderr}"
    );
    // The CLI carried on: the second file was transcribed by a fresh worker.
    assert!(
        text(&twice.stdout).contains("amiable"),
        "{}",
        text(&twice.stdout)
    );
}

#[test]
fn a_hung_worker_is_stopped_and_the_run_sent_again() {
    let clip = Path::new(LIBRIVOX).join("sense_and_sensibility_01_austen_64kb-0930.wav");
    let out = utter()
        .arg("transcribe")
        .arg(&clip)
        .env("UTTER_ENGINE_FAULT", "hang-on-run:1")
        // Long enough for the restarted worker's real run on a loaded
        // machine (3 s was not, under a parallel build); the hang costs it.
        .env("UTTER_ENGINE_RUN_TIMEOUT_S", "8")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(text(&out.stdout).contains("amiable"));
    assert!(
        stderr.contains("it stopped answering and was stopped"),
        "{stderr}"
    );
}

#[test]
fn a_voice_detector_abort_mid_file_is_survived_and_the_transcript_is_whole() {
    let reference = text(&finish(transcribe_long(&[])).stdout);
    // Call 30 of the detector: a few seconds into the file's decoding.
    let out = finish(transcribe_long(&[("UTTER_VAD_FAULT", "abort-on-feed:30")]));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("note: the voice detector stopped (killed by SIGABRT) and was restarted"),
        "the user is told: {stderr}"
    );
    // The restarted detector starts a fresh stream, so a cut may move by a
    // frame or two; the words are the same.
    let wer = utter_core::text::word_error_rate(&reference, &text(&out.stdout));
    assert!(wer <= 0.02, "WER {wer} against the undisturbed transcript");
}

#[test]
fn a_voice_detector_that_aborts_twice_on_one_chunk_is_a_clear_error() {
    let out = transcribe_long(&[("UTTER_VAD_FAULT", "abort-on-feed:5,6")])
        .wait_with_output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("the voice detector") && stderr.contains("SIGABRT"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_worker_of_another_build_refuses_before_reading_anything() {
    let out = utter()
        .args(["--utter-engine-worker", "utter-engine/0/0.0.0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("its parent utter-engine/0/0.0.0"),
        "{}",
        text(&out.stderr)
    );
}
