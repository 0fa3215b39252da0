#!/usr/bin/env python3
"""Benchmark (not a test): release-to-text latency of `utter dictate`, eager vs
--no-eager, on a virtual desktop (Xvfb + PulseAudio virtual mic + xdotool),
with real LibriVox speech of about 5, 15, 30 and 60 s. Also idle CPU with the
mic closed and peak RSS over a 60 s dictation.

    python3 tests/bench/dictation_latency.py [ROUNDS]      (needs the `npm test` setup)

Both variants run at once on different hotkeys and are interleaved, so
machine noise hits them alike. Prints a Markdown table for docs/benchmarks.md.
"""
import os, statistics, subprocess, sys, time

from virtual_desktop import TARGET, Dictate, VirtualDesktop, cpu_seconds, paced_speech

IDLE_ONLY = "--idle-only" in sys.argv
args = [a for a in sys.argv[1:] if a != "--idle-only"]
ROUNDS = int(args[0]) if args else 3
UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "release", "utter"))


def main(desktop):
    eager = Dictate(desktop, UTTER, "ctrl+shift+space", [])

    # Idle CPU with the mic closed.
    time.sleep(2)
    c0, t0 = cpu_seconds(eager.p.pid), time.time()
    time.sleep(30)
    idle = (cpu_seconds(eager.p.pid) - c0) / (time.time() - t0) * 100
    if IDLE_ONLY:
        print(f"idle CPU of `utter dictate` (mic closed, 30 s): {idle:.2f} %")
        return
    files = {s: paced_speech(desktop, s) for s in (5, 15, 30, 60)}
    baseline = Dictate(desktop, UTTER, "ctrl+alt+space", ["--no-eager"])

    results = {s: {"eager": [], "baseline": [], "tail": []} for s in files}
    for r in range(ROUNDS):
        for s, (wav, _) in files.items():
            for name, d in (("eager", eager), ("baseline", baseline)) if r % 2 == 0 else (("baseline", baseline), ("eager", eager)):
                latency, _, seen, _ = d.dictate(wav)
                tail = next((e["engine_ms"] for e in reversed(seen) if e["event"] == "segment_transcribed"), 0.0)
                results[s][name].append(latency)
                if name == "eager":
                    results[s]["tail"].append(tail)
        print(f"round {r + 1} done", file=sys.stderr)
    with open(f"/proc/{eager.p.pid}/status") as f:
        hwm = next(l for l in f if l.startswith("VmHWM")).split()[1]

    print("| speech | eager release→text (median) | --no-eager (median) | ratio | tail segment engine time | eager − tail |")
    print("|---|---:|---:|---:|---:|---:|")
    for s, (wav, dur) in files.items():
        e, b, t = (statistics.median(results[s][k]) for k in ("eager", "baseline", "tail"))
        print(f"| {dur:.1f} s | {e:.0f} ms | {b:.0f} ms | {e / b:.2f} | {t:.0f} ms | {e - t:.0f} ms |")
    print(f"\nidle CPU of `utter dictate` (mic closed, 30 s): {idle:.2f} %")
    print(f"peak RSS of `utter dictate` (eager) after all dictations: {int(hwm) / 1024:.0f} MB")

desktop = VirtualDesktop(":93", "utter-bench-")
try:
    main(desktop)
finally:
    desktop.close()
