//! What was heard is kept: a killed dictation is transcribed on the next
//! start, a microphone that dies keeps what it heard, and a recording that
//! cannot be written (a file size limit, a full disk) still delivers its
//! text.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use utter_core::text::word_error_rate;

use crate::common::wav_files;
use crate::harness::dictate::{Dictate, Take, HOTKEY};
use crate::harness::disk::{is_root, SmallDisk};
use crate::harness::serial;
use crate::harness::speech::{clip, truth};
use crate::harness::x11::{desktop, Desktop};

#[test]
fn a_killed_dictation_keeps_its_audio_and_is_transcribed_on_the_next_start() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let mut dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    d.xdotool(&["keydown", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    let played_from = Instant::now();
    let mut player = d.play(&d.fixtures.join("speech-25s.wav"));
    std::thread::sleep(Duration::from_secs(8));
    dictate.child.kill().unwrap(); // SIGKILL, mid-sentence
    let played = played_from.elapsed().as_secs_f64();
    let _ = dictate.child.wait();
    let _ = player.kill();
    let _ = player.wait();
    d.xdotool(&["keyup", HOTKEY]);

    let wav = wav_files(tmp.path())
        .into_iter()
        .next()
        .expect("a recording");
    let reader = hound::WavReader::open(&wav).expect("a readable WAV after kill -9");
    let kept = reader.duration() as f64 / 16_000.0;
    assert!(
        kept >= 0.9 * played - 0.3,
        "kept {kept:.2} s of {played:.2} s"
    );

    // Recovery runs before `ready`, so once it is ready the sidecar is there.
    let again = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    again.stop();
    let recovered: Value = {
        let rec = std::fs::read_to_string(wav.with_extension("json")).expect("recovered sidecar");
        serde_json::from_str(&rec).unwrap()
    };
    assert_eq!(recovered["status"], "recovered");
    let text = recovered["text"].as_str().unwrap().to_lowercase();
    assert!(text.contains("dashwood"), "{text}");
}

/// Issue 17: the microphone stops delivering audio mid-dictation without
/// any error from the driver (here a suspended PulseAudio source; an
/// unplugged source is different: PulseAudio moves the recording to the
/// fallback microphone, and nothing stops). What
/// was heard is transcribed and delivered, the error says the microphone
/// stopped, and the next dictation opens it again and works.
#[test]
fn a_microphone_that_dies_mid_dictation_keeps_what_was_heard_and_the_next_one_works() {
    let _guard = serial();
    let d = desktop();
    let pactl = |args: &[&str]| -> String {
        let out = d.cmd("pactl").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "pactl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let tmp = tempfile::tempdir().unwrap();
    let dictate = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    d.xdotool(&["keydown", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    d.speak(&clip(0));
    // The device stops delivering audio, with no error from the driver (a
    // suspended source: what a failing or hung device looks like to us).
    struct Resume<'a>(&'a Desktop);
    impl Drop for Resume<'_> {
        fn drop(&mut self) {
            // The other tests need the microphone, however this one ends.
            let _ = self
                .0
                .cmd("pactl")
                .args(["suspend-source", "vmic", "0"])
                .status();
        }
    }
    let _resume = Resume(d);
    pactl(&["suspend-source", "vmic", "1"]); // key still held
    let error = dictate.expect("error", Duration::from_secs(20));
    assert!(
        error["message"].as_str().unwrap().contains("stopped"),
        "{error}"
    );
    let delivered = dictate.delivered(Duration::from_secs(60));
    d.xdotool(&["keyup", HOTKEY]);
    let text = delivered["text"].as_str().unwrap();
    assert!(
        word_error_rate(&truth(0), text) <= 0.2,
        "what was heard: {text}"
    );

    // The next dictation opens the microphone again.
    pactl(&["suspend-source", "vmic", "0"]);
    std::thread::sleep(Duration::from_millis(300));
    let again = Take::hotkey(d, &clip(2)).run(&dictate);
    let text = again["text"].as_str().unwrap();
    assert!(word_error_rate(&truth(2), text) <= 0.15, "{text}");
    dictate.stop();
}

/// Issue 17: the recording cannot be written past its first seconds (a file
/// size limit, which fails the write as a full disk does). The dictation
/// still delivers all its text (the audio is kept in memory too), the user is
/// told the recording is not being saved, and the next start does not try
/// to recover the cut-off file.
#[test]
fn a_recording_that_cannot_be_written_still_delivers_its_text_and_says_so() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    // 64 KiB: about 2 s of the 16 kHz recording.
    let dictate = Dictate::start_with_file_limit(d, tmp.path(), &["--output", "stdout"], 64);
    let delivered = Take::hotkey(d, &clip(0))
        .error_before("recording_stopped", &["cannot write the recording"])
        .run(&dictate);
    let text = delivered["text"].as_str().unwrap();
    assert!(
        word_error_rate(&truth(0), text) <= 0.15,
        "all of it: {text}"
    );
    dictate.stop();
    // The cut-off WAV is marked finished (its text went out), so a new
    // start does not transcribe it again.
    let wav = wav_files(tmp.path())
        .into_iter()
        .next()
        .expect("the recording");
    assert!(wav.with_extension("json").exists(), "marked finished");
    let again = Dictate::start(d, tmp.path(), &["--output", "stdout"]);
    // Recovery runs before `ready`, which `start` waited for.
    assert!(
        !again
            .seen
            .borrow()
            .iter()
            .any(|e| e["event"] == "recovered"),
        "{:?}",
        again.seen.borrow()
    );
    again.stop();
}

/// A real full disk: the recordings dir is a 384 KiB tmpfs (12 s of audio).
/// Filled mid-dictation, and full before a dictation starts, the dictation
/// still delivers all its text, the user is told its audio is not being
/// saved, and nothing is left for the recovery pass to transcribe twice.
/// Once space is freed, the next dictation is recorded again.
///
/// Mounting the tmpfs needs root: `scripts/test.sh` runs it when it runs as
/// root (CI does), with `-- --ignored`.
#[test]
#[ignore = "needs root"]
fn on_a_full_disk_dictations_deliver_all_their_text_and_recording_resumes_once_space_is_freed() {
    assert!(
        is_root(),
        "needs root (it mounts a tmpfs): run it as root, or leave it ignored"
    );
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&tmp.path().join("recordings"), "384k");
    let dictate = Dictate::start(d, &disk.0, &["--output", "stdout"]);
    let unfinished = || utter_core::dictation::record_log::unfinished(&disk.0);

    // 1. The disk fills 2 s into the dictation.
    disk.fill("filler-1", 64 * 1024);
    let delivered = Take::hotkey(d, &clip(0))
        .error_before(
            "recording_stopped",
            &["cannot write the recording", "not being saved"],
        )
        .run(&dictate);
    assert_all_of_it(0, delivered["text"].as_str().unwrap());
    assert_eq!(unfinished(), Vec::<PathBuf>::new(), "nothing to recover");

    // 2. The disk is full before the key is pressed.
    disk.fill("filler-2", 0);
    let delivered = Take::hotkey(d, &clip(2))
        .error_before(
            "recording_started",
            &["cannot create the recording", "not being saved"],
        )
        .run(&dictate);
    assert_all_of_it(2, delivered["text"].as_str().unwrap());
    assert_eq!(unfinished(), Vec::<PathBuf>::new(), "nothing to recover");

    // 3. Space freed: recorded again, without an error.
    std::fs::remove_file(disk.0.join("filler-1")).unwrap();
    std::fs::remove_file(disk.0.join("filler-2")).unwrap();
    Take::hotkey(d, &clip(3)).run(&dictate);
    let started = dictate.seen("recording_started").pop().unwrap();
    dictate.stop();
    let wav = PathBuf::from(started["audio_path"].as_str().unwrap());
    let reader = hound::WavReader::open(&wav).expect("a whole recording");
    assert!(
        reader.duration() as f64 / 16_000.0 > 3.0,
        "{} s recorded",
        reader.duration() as f64 / 16_000.0
    );
    assert!(wav.with_extension("json").exists(), "marked finished");
}

/// The whole of clip `i` was delivered: nothing lost to the full disk.
/// Bounded by what losing words costs, not by tiny.en's accuracy: its own
/// mishearings of clip 2 ("old-sposed", "coldhearted") cost 4 of 14 words
/// in 3 of 12 runs here (one in CI), while a lost third of a clip costs more.
fn assert_all_of_it(i: usize, text: &str) {
    let truth = truth(i);
    assert!(
        word_error_rate(&truth, text) <= 0.3,
        "all of it: {text:?} (said: {truth:?})"
    );
}
