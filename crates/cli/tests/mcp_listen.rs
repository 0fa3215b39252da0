//! Issue 43: `utter mcp`'s `listen` tool, as a coding agent asks the user by
//! voice: the real binary over stdio, a real PulseAudio virtual microphone,
//! the LibriVox reader answering, the real default model. Linux only.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use utter_test_support::call::words;
use utter_test_support::desktop::SoundServer;

const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav";

#[test]
fn an_agent_asks_and_hears_the_spoken_answer() {
    let dir = tempfile::tempdir().unwrap();
    let sound = SoundServer::start(&dir.path().join("runtime"));
    let data = dir.path().join("data");
    let mut mcp = Command::new(env!("CARGO_BIN_EXE_utter"))
        .arg("mcp")
        .env("XDG_RUNTIME_DIR", sound.runtime_dir())
        .env("UTTER_DATA_DIR", &data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    let mut replies = BufReader::new(mcp.stdout.take().unwrap()).lines();
    let mut ask = |message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        serde_json::from_str(&replies.next().unwrap().unwrap()).unwrap()
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
    );
    let tools = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert!(tools.to_string().contains("\"listen\""), "{tools}");

    // The user answers two seconds after the question.
    let player = {
        let sound_dir = sound.runtime_dir().to_path_buf();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            Command::new("paplay")
                .args(["--latency-msec=200", "--device=vmic_sink", CLIP])
                .env("XDG_RUNTIME_DIR", sound_dir)
                .status()
                .unwrap()
        })
    };
    let reply = ask(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "listen", "arguments": {"wait_seconds": 20, "pause_seconds": 1}}}),
    );
    assert!(player.join().unwrap().success());
    let result = &reply["result"];
    assert_eq!(result["isError"], false, "{reply}");
    let heard = words(result["content"][0]["text"].as_str().unwrap());
    for w in ["he", "was", "not", "young", "man"] {
        assert!(heard.contains(&w.to_string()), "`{w}` in {reply}");
    }
    // What was said was on disk, and is removed once transcribed.
    assert!(
        no_recordings(&data.join("recordings")),
        "the recording is left behind"
    );

    // Silence: the agent is told nothing was said, not given an empty answer.
    let silent = ask(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "listen", "arguments": {"wait_seconds": 2}}}),
    );
    assert_eq!(silent["result"]["isError"], true, "{silent}");
    assert!(
        silent.to_string().contains("nothing was said within 2 s"),
        "{silent}"
    );
    drop(stdin);
    assert!(mcp.wait().unwrap().success());
}

fn no_recordings(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |entries| {
        entries
            .filter_map(Result::ok)
            .all(|e| e.path().extension().is_none_or(|x| x != "wav"))
    })
}
