//! Other audio lowered while dictating (`--duck`), with a real playback
//! stream on the test desktop's PulseAudio: turned down while the
//! microphone records, given back to exactly its volume after, and after a
//! `kill -9` in the middle, at the next start.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::dictate::{Dictate, HOTKEY};
use crate::harness::serial;
use crate::harness::speech::{clip, write_fixture};
use crate::harness::x11::{desktop, Desktop};

/// The player's volume before the dictation: 80 % (PulseAudio's raw 65536 = 100 %).
const BEFORE: u64 = 52_429;

/// A music player: a long quiet tone played on the speakers (not into
/// the microphone), ended with the test.
struct Player(Child);

impl Drop for Player {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn play_music(d: &Desktop) -> (Player, u64) {
    let tone: Vec<i16> = (0..16_000 * 60)
        .map(|i| (3000.0 * (i as f32 * 0.05).sin()) as i16)
        .collect();
    let music = write_fixture(d, "music.wav", &tone);
    let player = Player(
        d.cmd("paplay")
            .args(["--device=vspk"])
            .arg(&music)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = player.0.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let index = loop {
        let found = sink_inputs(d)
            .into_iter()
            .find(|s| s["properties"]["application.process.id"].as_str() == Some(pid.as_str()));
        if let Some(stream) = found {
            break stream["index"].as_u64().unwrap();
        }
        assert!(Instant::now() < deadline, "the player's stream never came");
        std::thread::sleep(Duration::from_millis(100));
    };
    let set = d
        .cmd("pactl")
        .args([
            "set-sink-input-volume",
            &index.to_string(),
            &BEFORE.to_string(),
        ])
        .status()
        .unwrap();
    assert!(set.success());
    (player, index)
}

fn sink_inputs(d: &Desktop) -> Vec<Value> {
    let out = d
        .cmd("pactl")
        .args(["-f", "json", "list", "sink-inputs"])
        .output()
        .unwrap();
    serde_json::from_slice::<Value>(&out.stdout)
        .map(|v| v.as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
}

/// The stream's volume on each channel (raw).
fn volumes(d: &Desktop, index: u64) -> Vec<u64> {
    let stream = sink_inputs(d)
        .into_iter()
        .find(|s| s["index"].as_u64() == Some(index))
        .expect("the player's stream is still there");
    stream["volume"]
        .as_object()
        .unwrap()
        .values()
        .map(|channel| channel["value"].as_u64().unwrap())
        .collect()
}

fn wait_for_volume(d: &Desktop, index: u64, want: u64, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = volumes(d, index);
        if now.iter().all(|v| *v == want) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {now:?}, not {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn other_audio_is_lowered_while_recording_and_given_back_exactly() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (_player, index) = play_music(d);
    let dictate = Dictate::start_with_env(
        d,
        tmp.path(),
        &["--output", "stdout", "--duck", "20"],
        &[("UTTER_DATA_DIR", data.to_str().unwrap())],
    );
    d.xdotool(&["keydown", HOTKEY]);
    dictate.expect("recording_started", Duration::from_secs(5));
    let lowered = (BEFORE as f64 * 0.2).round() as u64;
    wait_for_volume(d, index, lowered, "lowered to 20 % while recording");
    d.speak(&clip(3));
    d.xdotool(&["keyup", HOTKEY]);
    dictate.expect("recording_stopped", Duration::from_secs(5));
    wait_for_volume(d, index, BEFORE, "given back after the release");
    dictate.delivered(Duration::from_secs(60));
    assert!(
        !data.join("ducked-volumes.json").exists(),
        "nothing left to restore"
    );
    dictate.stop();
}

#[test]
fn volumes_left_down_by_a_killed_dictation_come_back_at_the_next_start() {
    let _guard = serial();
    let d = desktop();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let env = [("UTTER_DATA_DIR", data.to_str().unwrap())];
    let (_player, index) = play_music(d);
    let mut first =
        Dictate::start_with_env(d, tmp.path(), &["--output", "stdout", "--duck", "0"], &env);
    d.xdotool(&["keydown", HOTKEY]);
    first.expect("recording_started", Duration::from_secs(5));
    wait_for_volume(d, index, 0, "muted while recording");
    first.child.kill().unwrap(); // as a crash would: no restore on the way out
    first.child.wait().unwrap();
    d.xdotool(&["keyup", HOTKEY]);
    let after_crash = volumes(d, index);
    assert!(
        after_crash.iter().all(|v| *v == 0),
        "still muted after the crash: {after_crash:?}"
    );
    assert!(data.join("ducked-volumes.json").exists(), "on disk");
    drop(first);
    // The next start, ducking on or off, gives it back.
    let second = Dictate::start_with_env(d, tmp.path(), &["--output", "stdout"], &env);
    wait_for_volume(d, index, BEFORE, "given back at the next start");
    assert!(
        second
            .seen("notice")
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("turned back up")),
        "{:?}",
        second.seen("notice")
    );
    second.stop();
}
