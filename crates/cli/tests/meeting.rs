//! Issue 44: `utter meeting` records both sides of a call. The real binary,
//! a real PulseAudio server (its default output `vspk`, whose monitor is the
//! system audio, and the virtual microphone `vmic`), real voices — Asterisk's
//! Allison on the "call" and the LibriVox reader into the microphone, taking
//! turns — and the real default files model and speaker models.
//! Linux only (PulseAudio, signals).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver};
use utter_test_support::call::{two_sided_call as call, words, Call};
use utter_test_support::desktop::{children_matching, SoundServer};

/// One meeting at a time: each loads the model and the speaker models.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running `utter meeting` and its standard error, line by line.
struct Meeting {
    child: Child,
    stderr: Receiver<String>,
    said: Vec<String>,
}

impl Meeting {
    fn start(sound: &SoundServer, meetings: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_utter"))
            .arg("meeting")
            .arg("--meetings-dir")
            .arg(meetings)
            .args(extra)
            .env("XDG_RUNTIME_DIR", sound.runtime_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("utter runs");
        let (tx, stderr) = unbounded();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut me = Self {
            child,
            stderr,
            said: Vec::new(),
        };
        me.wait_for("Ctrl+C stops", Duration::from_secs(20));
        me
    }

    /// Waits for a line of standard error containing `text`.
    fn wait_for(&mut self, text: &str, timeout: Duration) {
        let deadline = std::time::Instant::now() + timeout;
        while !self.said.iter().any(|l| l.contains(text)) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => self.said.push(line),
                Err(_) => panic!(
                    "no `{text}` from utter meeting; it said:\n{}",
                    self.said.join("\n")
                ),
            }
        }
    }

    /// Ctrl+C, then the transcript on standard output and the rest of stderr.
    fn stop(mut self) -> (String, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
        let out = self.child.wait_with_output().unwrap();
        self.said.extend(self.stderr.try_iter());
        let stderr = self.said.join("\n");
        assert!(out.status.success(), "utter meeting failed:\n{stderr}");
        (String::from_utf8(out.stdout).unwrap(), stderr)
    }
}

/// Plays both tracks at once and waits for their end (and a second more).
fn play(sound: &SoundServer, call: &Call) {
    let mut others = sound.play_to_speakers(&call.others);
    let mut mic = sound.play(&call.mic);
    assert!(others.wait().unwrap().success() && mic.wait().unwrap().success());
    std::thread::sleep(Duration::from_secs(1));
}

/// (speaker, words) per segment of a JSON transcript.
fn said_by(json: &str) -> Vec<(String, Vec<String>)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["speaker"].as_str().unwrap_or("").to_string(),
                words(s["text"].as_str().unwrap()),
            )
        })
        .collect()
}

/// Of the transcript's words found in exactly one side's reference, the share
/// given to that side's speaker; and each side's recall.
fn attribution(
    segments: &[(String, Vec<String>)],
    call: &Call,
    others_name: &str,
) -> (f64, f64, f64) {
    let (mut right, mut counted) = (0usize, 0usize);
    let (mut yours_heard, mut theirs_heard) = (Vec::new(), Vec::new());
    for (who, ws) in segments {
        for w in ws {
            let mine = call.your_words.contains(w);
            let theirs = call.others_words.contains(w);
            if mine == theirs {
                continue; // in both references or in neither: says nothing
            }
            counted += 1;
            right += usize::from((mine && who == "You") || (theirs && who == others_name));
            if who == "You" {
                yours_heard.push(w.clone());
            } else {
                theirs_heard.push(w.clone());
            }
        }
    }
    let recall = |heard: &[String], reference: &[String]| {
        reference.iter().filter(|w| heard.contains(w)).count() as f64 / reference.len() as f64
    };
    (
        right as f64 / counted.max(1) as f64,
        recall(&yours_heard, &call.your_words),
        recall(&theirs_heard, &call.others_words),
    )
}

/// A process's nice value (/proc/PID/stat, the 19th field).
fn nice(pid: u32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = stat.rsplit_once(')').unwrap().1;
    after_name
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn you_and_the_others_are_told_apart() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let sound = SoundServer::start(&dir.path().join("runtime"));
    let call = call(dir.path(), None);
    let mut meeting = Meeting::start(&sound, &dir.path().join("meetings"), &["--format", "json"]);
    // The live transcript's engine runs below the user's own work, so a
    // push-to-talk dictation during the meeting goes first.
    let workers = children_matching(meeting.child.id(), "--utter-engine-worker");
    assert_eq!(workers.len(), 1, "the meeting's engine worker: {workers:?}");
    assert_eq!(
        nice(workers[0]),
        10,
        "the meeting's engine worker's nice value"
    );
    play(&sound, &call);
    // The live transcript had both sides' turns while the meeting went on.
    meeting.wait_for("] You: He was not", Duration::from_secs(10));
    meeting.wait_for("] Others: Nobody is available", Duration::from_secs(10));
    let (json, stderr) = meeting.stop();
    let segments = said_by(&json);
    let (share, yours, theirs) = attribution(&segments, &call, "Speaker 1");
    assert!(
        share >= 0.95 && yours >= 0.7 && theirs >= 0.7,
        "{share:.2} of the words attributed right, {yours:.2} of yours and {theirs:.2} of theirs heard:\n{segments:?}\n{stderr}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["speakers"],
        serde_json::json!(["Speaker 1", "You"]),
        "{json}"
    );
    // The meeting is kept: both channels, the transcript, the record.
    let kept = std::fs::read_dir(dir.path().join("meetings"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for file in ["you.wav", "others.wav", "transcript.json"] {
        assert!(kept.join(file).is_file(), "{file} in {}", kept.display());
    }
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(kept.join("meeting.json")).unwrap()).unwrap();
    assert_eq!(record["phase"], "transcribed");
    assert!(
        record["youMs"].as_u64().unwrap() as f64 >= call.seconds * 1000.0,
        "{record}"
    );
}

#[test]
fn what_the_microphone_hears_from_the_loudspeaker_is_not_yours_again() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let sound = SoundServer::start(&dir.path().join("runtime"));
    let call = call(dir.path(), Some(-10.0));
    let meeting = Meeting::start(&sound, &dir.path().join("meetings"), &["--format", "json"]);
    play(&sound, &call);
    let (json, stderr) = meeting.stop();
    // Nor in the live transcript: your live turns are yours only.
    for line in stderr.lines().filter(|l| l.contains("] You: ")) {
        let live = words(line.split_once("] You: ").unwrap().1);
        let theirs: Vec<&String> = live
            .iter()
            .filter(|w| call.others_words.contains(w) && !call.your_words.contains(w))
            .collect();
        assert!(
            theirs.is_empty(),
            "a live line of yours has the others' words: {line}\n{stderr}"
        );
    }
    let segments = said_by(&json);
    // Words only the others said, given to you: their words a second time.
    let duplicated: Vec<&String> = segments
        .iter()
        .filter(|(who, _)| who == "You")
        .flat_map(|(_, ws)| ws)
        .filter(|w| call.others_words.contains(w) && !call.your_words.contains(w))
        .collect();
    assert!(
        duplicated.is_empty(),
        "the others' words came back as yours: {duplicated:?}\n{segments:?}\n{stderr}"
    );
    let (share, yours, theirs) = attribution(&segments, &call, "Speaker 1");
    assert!(
        share >= 0.95 && yours >= 0.7 && theirs >= 0.7,
        "{share:.2} attributed right, {yours:.2} of yours and {theirs:.2} of theirs heard:\n{segments:?}\n{stderr}"
    );
}

#[test]
fn a_meeting_killed_midway_is_finished_at_the_next_start() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let meetings = dir.path().join("meetings");
    let sound = SoundServer::start(&dir.path().join("runtime"));
    let call = call(dir.path(), None);
    let mut meeting = Meeting::start(&sound, &meetings, &[]);
    let mut others = sound.play_to_speakers(&call.others);
    let mut mic = sound.play(&call.mic);
    // Past the first turn of each side (you end at 7 s).
    std::thread::sleep(Duration::from_secs(9));
    meeting.child.kill().unwrap(); // SIGKILL: no goodbye
    meeting.child.wait().unwrap();
    let _ = (others.kill(), mic.kill(), others.wait(), mic.wait());
    // The next start says there is one to finish.
    let again = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args([
            "meeting",
            "--system-device",
            "no-such-output",
            "--meetings-dir",
        ])
        .arg(&meetings)
        .env("XDG_RUNTIME_DIR", sound.runtime_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let told = String::from_utf8_lossy(&again.stderr);
    assert!(told.contains("utter meeting --finish"), "{told}");
    assert!(
        told.contains("no-such-output"),
        "a missing output is named: {told}"
    );
    let finished = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["meeting", "--finish", "--meetings-dir"])
        .arg(&meetings)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&finished.stderr);
    assert!(finished.status.success(), "{stderr}");
    let md = String::from_utf8(finished.stdout).unwrap();
    let heard = words(&md);
    for w in ["nobody", "available", "young", "man"] {
        assert!(
            heard.contains(&w.to_string()),
            "`{w}` recorded before the kill is in:\n{md}\n{stderr}"
        );
    }
    assert!(
        md.contains("**You**") && md.contains("**Speaker 1**"),
        "{md}"
    );
    // Finished once: nothing is left to finish.
    let none = Command::new(env!("CARGO_BIN_EXE_utter"))
        .args(["meeting", "--finish", "--meetings-dir"])
        .arg(&meetings)
        .output()
        .unwrap();
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("no unfinished meeting"));
}

#[test]
fn the_meeting_goes_on_when_the_system_audio_goes() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let sound = SoundServer::start(&dir.path().join("runtime"));
    let call = call(dir.path(), None);
    let mut meeting = Meeting::start(&sound, &dir.path().join("meetings"), &[]);
    let mut mic = sound.play(&call.mic);
    // The output is unplugged before your first turn (4 s).
    std::thread::sleep(Duration::from_secs(2));
    sound.unplug("vspk");
    meeting.wait_for("the system audio stopped", Duration::from_secs(10));
    assert!(mic.wait().unwrap().success());
    std::thread::sleep(Duration::from_secs(1));
    let (md, stderr) = meeting.stop();
    let heard = words(&md);
    let kept = call.your_words.iter().filter(|w| heard.contains(w)).count();
    assert!(
        kept as f64 >= 0.7 * call.your_words.len() as f64,
        "your words after the output went are kept:\n{md}\n{stderr}"
    );
    assert!(md.contains("**You**"), "{md}");
}
