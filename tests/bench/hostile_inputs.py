#!/usr/bin/env python3
"""Benchmark (not a test): what each hostile input of issue 57 costs
`utter transcribe` — peak memory of the process, wall time, and how it ended.

    python3 tests/bench/hostile_inputs.py [UTTER_BIN ...]
        (needs the `npm test` setup; default: the debug build)

Each binary given is measured on the same hand-made files in one run, so a
build from before the limits and one from after can be compared side by
side. Every run is capped at 6 GB of address space and 120 s (RLIMIT_AS,
RLIMIT_CPU) so a "before" build cannot take the machine down; a run that hit
a cap says so. Prints Markdown for docs/benchmarks.md.
"""
import os, resource, struct, subprocess, sys, tempfile, time

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))
CAP_BYTES = 6 << 30
CAP_CPU_S = 120


def lying_wav(rate, channels, bits, declared, data):
    block = (channels * (bits // 8)) & 0xFFFF
    return (b"RIFF" + struct.pack("<I", min(declared + 36, 0xFFFFFFFF)) + b"WAVEfmt "
            + struct.pack("<IHHIIHH", 16, 1, channels, rate, (rate * block) & 0xFFFFFFFF, block, bits)
            + b"data" + struct.pack("<I", declared) + data)


def inputs(tmp):
    silence = bytes(16 * 1024)
    files = {
        "WAV, 16 KB, 4294967291 Hz": lying_wav(4294967291, 1, 16, len(silence), silence),
        "WAV, 16 KB, 20 MHz": lying_wav(20_000_000, 1, 16, len(silence), silence),
        "WAV, 2 KB, 1 Hz": lying_wav(1, 1, 16, 2048, silence[:2048]),
        "WAV, 16 KB, declares 37 h": lying_wav(8000, 1, 16, 0x7FFF0000, silence),
    }
    paths = []
    for name, data in files.items():
        path = os.path.join(tmp, name.replace(" ", "_").replace(",", "") + ".wav")
        with open(path, "wb") as f:
            f.write(data)
        paths.append((name, path))
    # Real audio far past the default limit: 10 h of silence as FLAC.
    flac = os.path.join(tmp, "ten-hours.flac")
    subprocess.run(["sox", "-n", "-r", "8000", "-c", "1", "-b", "16", flac, "trim", "0", "36000"],
                   check=True)
    paths.append((f"FLAC, {os.path.getsize(flac) // 1024} KB, 10 h of silence", flac))
    return paths


def capped():
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CAP_CPU_S, CAP_CPU_S))


def measure(utter, path):
    started = time.monotonic()
    proc = subprocess.Popen([utter, "transcribe", path, "--model", "whisper-tiny.en"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=capped)
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    secs = time.monotonic() - started
    peak_mb = usage.ru_maxrss / 1024
    if os.WIFSIGNALED(status):
        ended = f"killed by signal {os.WTERMSIG(status)}"
    else:
        ended = f"exit {os.WEXITSTATUS(status)}"
    said = next((l for l in err.splitlines() if l.startswith("error") or ": " in l), "").strip()
    return peak_mb, secs, ended, said


def main():
    binaries = sys.argv[1:] or [os.path.join(TARGET, "debug", "utter")]
    with tempfile.TemporaryDirectory() as tmp:
        cases = inputs(tmp)
        print("| input | binary | peak memory | time | ended | says |")
        print("|---|---|---|---|---|---|")
        for name, path in cases:
            for utter in binaries:
                peak, secs, ended, said = measure(utter, path)
                said = said.replace(path, "FILE").replace("|", "\\|")[:140]
                print(f"| {name} | {utter} | {peak:.0f} MB | {secs:.1f} s | {ended} | {said} |",
                      flush=True)


if __name__ == "__main__":
    main()
