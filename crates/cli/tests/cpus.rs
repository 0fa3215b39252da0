//! The portable engine on CPUs this machine is not (issue 30). A build with
//! `dynamic-backends` carries one ggml CPU module per x86-64 level and loads
//! the best one the CPU has; qemu-user runs the same binary as a CPU without
//! AVX (Nehalem, 2008) and as one with AVX2 but no AVX-512 (Haswell, 2013).
//! Each must give the text a native run gives. Built and run only by `npm
//! run test:cpus` (this target needs the `dynamic-backends` feature).
//!
//! The engine runs in-process (`UTTER_ENGINE_IN_PROCESS=1`): a re-executed
//! worker would be started by the kernel, natively, outside the emulator.
//! Before this build existed, the same command under `-cpu Nehalem` died
//! with SIGILL on the engine's first call (and under `-cpu Haswell` too: the
//! default build is tuned to this machine's AVX-512).

use std::process::{Command, Output};

mod common;

fn utter(emulated_cpu: Option<&str>, args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_utter");
    let mut command = match emulated_cpu {
        Some(cpu) => {
            let mut c = Command::new("qemu-x86_64");
            c.args(["-cpu", cpu, exe]);
            c
        }
        None => Command::new(exe),
    };
    command
        .args(args)
        .env("UTTER_ENGINE_IN_PROCESS", "1")
        // Emulation is some 20-50x slower than the real CPU.
        .env("UTTER_ENGINE_RUN_TIMEOUT_S", "900")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run utter (under qemu-x86_64: apt install qemu-user): {e}")
        })
}

fn transcript(emulated_cpu: Option<&str>, clip: &str) -> String {
    // Fixed threads: the default follows the load, and the text may differ
    // by a comma between thread counts; this compares CPU code paths.
    let out = utter(
        emulated_cpu,
        &["transcribe", "--format", "txt", "--threads", "2", clip],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{emulated_cpu:?}: utter transcribe failed ({}): {stderr}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn cpu_line(emulated_cpu: Option<&str>) -> String {
    let out = utter(emulated_cpu, &["doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("cpu"))
        .unwrap_or_else(|| panic!("no cpu line in `utter doctor`: {stdout}"))
        .to_string()
}

#[test]
fn the_portable_engine_gives_the_native_text_on_a_cpu_without_avx_and_on_one_with_avx2() {
    let (clip, truth) = &common::librivox_clips()[0];
    let clip = clip.to_str().unwrap();
    let native = transcript(None, clip);
    assert!(
        utter_core::text::word_error_rate(truth, &native) <= 0.2,
        "native: {native}"
    );
    for (cpu, level) in [("Nehalem", "SSE4.2"), ("Haswell", "AVX2")] {
        let line = cpu_line(Some(cpu));
        assert!(
            line.contains(&format!("{level} path")),
            "{cpu}: doctor says {line}"
        );
        assert_eq!(transcript(Some(cpu), clip), native, "on {cpu}");
    }
}
