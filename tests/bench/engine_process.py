#!/usr/bin/env python3
"""Benchmark (not a test): what running the engine in its own process costs.

    python3 tests/bench/engine_process.py [ROUNDS]      (needs the `npm test` setup)

In one run, interleaved (the order flips each round), the engine in a worker
process (the default) vs in a thread (UTTER_ENGINE_IN_PROCESS=1):
- `utter transcribe` of the dense 124 s file (tests/fixtures/make-long-speech.sh): wall time;
- release-to-text latency of `utter dictate` (both variants at once on two hotkeys,
  real speech of about 5 and 15 s into the virtual microphone);
- the worker's start-to-ready time (its log line), and the memory of an idle
  `utter dictate` with the model loaded and after it was unloaded (--unload-idle).
Prints Markdown for docs/benchmarks.md.
"""
import os, re, statistics, subprocess, sys, time

from virtual_desktop import TARGET, Dictate, VirtualDesktop, paced_speech

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VARIANTS = (("worker process", {}), ("in-process", {"UTTER_ENGINE_IN_PROCESS": "1"}))


def memory_mb(pid):
    """(RSS, PSS) in MB of `pid` and its direct children."""
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                      text=True).stdout.split()]
    rss = pss = 0
    for p in pids:
        try:
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            pass
    return rss / 1024, pss / 1024


def workers_of(pid):
    return subprocess.run(["pgrep", "-P", str(pid), "-f", "--", "--utter-engine-worker"],
                          capture_output=True, text=True).stdout.split()


def files(desktop):
    long_wav = desktop.path("long-speech.wav")
    desktop.run([os.path.join(ROOT, "tests/fixtures/make-long-speech.sh"), long_wav])
    wall = {name: [] for name, _ in VARIANTS}
    ready = []
    for r in range(ROUNDS):
        for name, env in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
            t0 = time.perf_counter()
            out = subprocess.run([UTTER, "transcribe", long_wav], capture_output=True, text=True,
                                 env=dict(os.environ, UTTER_LOG="info", **env), check=True)
            wall[name].append(time.perf_counter() - t0)
            ready += [int(m) for m in re.findall(r"engine worker \d+ ready on \w+ in (\d+) ms", out.stderr)]
    return wall, ready


def dictation(desktop):
    speech = {s: paced_speech(desktop, s) for s in (5, 15)}
    runs = {name: Dictate(desktop, UTTER, hotkey, [], env)
            for (name, env), hotkey in zip(VARIANTS, ("ctrl+shift+space", "ctrl+alt+space"))}
    latency = {(name, s): [] for name, _ in VARIANTS for s in speech}
    for r in range(ROUNDS):
        for s, (wav, _) in speech.items():
            for name, _ in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
                ms, _, _, _ = runs[name].dictate(wav)
                latency[(name, s)].append(ms)
    idle = {name: memory_mb(d.p.pid) for name, d in runs.items()}
    return speech, latency, idle


def unload(desktop):
    d = Dictate(desktop, UTTER, "ctrl+shift+alt+space", ["--unload-idle", "3"])
    time.sleep(1)
    loaded = memory_mb(d.p.pid)
    deadline = time.time() + 30
    while workers_of(d.p.pid) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    return loaded, memory_mb(d.p.pid)


def main(desktop):
    wall, ready = files(desktop)
    print(f"### File: `utter transcribe` of the dense 124 s file, {ROUNDS} runs each, interleaved\n")
    print("| engine | wall (median) | min–max |")
    print("|---|---:|---:|")
    for name, _ in VARIANTS:
        print(f"| {name} | {statistics.median(wall[name]):.2f} s | {min(wall[name]):.2f}–{max(wall[name]):.2f} s |")
    ratio = statistics.median(wall["worker process"]) / statistics.median(wall["in-process"])
    print(f"\nworker / in-process: **{ratio:.3f}**; worker start → model loaded: median "
          f"{statistics.median(ready):.0f} ms (min {min(ready)}, max {max(ready)}, {len(ready)} starts)\n")

    speech, latency, idle = dictation(desktop)
    print(f"### Dictation: release → text, {ROUNDS} dictations each per length, interleaved\n")
    print("| speech | worker process (median) | in-process (median) | difference |")
    print("|---|---:|---:|---:|")
    for s, (_, dur) in speech.items():
        w, i = (statistics.median(latency[(n, s)]) for n, _ in VARIANTS)
        print(f"| {dur:.1f} s | {w:.0f} ms | {i:.0f} ms | {w - i:+.0f} ms |")
    print()
    for name, (rss, pss) in idle.items():
        print(f"- idle `utter dictate` after the dictations, {name}: RSS {rss:.0f} MB, PSS {pss:.0f} MB (parent + worker)")

    (rss_l, pss_l), (rss_u, pss_u) = unload(desktop)
    print(f"- idle `utter dictate --unload-idle 3`: model loaded RSS {rss_l:.0f} MB / PSS {pss_l:.0f} MB; "
          f"unloaded RSS {rss_u:.0f} MB / PSS {pss_u:.0f} MB")


desktop = VirtualDesktop(":95", "utter-bench-engine-")
try:
    main(desktop)
finally:
    desktop.close()
