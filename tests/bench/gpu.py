#!/usr/bin/env python3
"""Benchmark (not a test): the GPU build against the CPU, in one run, interleaved.

    python3 tests/bench/gpu.py cuda|vulkan|metal [ROUNDS]     (needs the `npm test` setup)

Builds `utter` (release) with `--features FEATURE` into its own build folder (or takes
UTTER_BIN), then, with that one binary, `--compute cpu` against `--compute auto` (the GPU):
- file transcription of the same inputs as the CPU benchmarks: the dense 124 s LibriVox file
  (tests/fixtures/make-long-speech.sh) and the sparse one (make-sparse-speech.sh): wall time
  and real-time factor;
- release-to-text latency of `utter dictate` (both at once on two hotkeys, real speech of about
  5 and 15 s played into the virtual microphone), as tests/bench/dictation_latency.py does.
Prints Markdown with GPU/CPU ratios for docs/benchmarks.md, and refuses to report a "GPU"
column when the auto run did not land on a GPU (it prints the engine's reason instead).
On lavapipe (Vulkan on the CPU) set GGML_VK_VISIBLE_DEVICES=0; its figures say nothing about
a real GPU.
"""
import json, os, statistics, subprocess, sys, time

from virtual_desktop import Dictate, VirtualDesktop, paced_speech

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if len(sys.argv) < 2 or sys.argv[1] not in ("cuda", "vulkan", "metal"):
    sys.exit(__doc__)
FEATURE = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
VARIANTS = (("CPU", ["--compute", "cpu"]), ("GPU", ["--compute", "auto"]))


def build():
    if "UTTER_BIN" in os.environ:
        return os.environ["UTTER_BIN"]
    target = os.path.expanduser(f"~/.cache/utter/target-{FEATURE}")
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    prelude = f"source scripts/gpu.sh && gpu_setup {FEATURE} && "
    subprocess.run(["bash", "-c", prelude + f"cargo build --locked --release -p utter-cli --features {FEATURE}"],
                   cwd=ROOT, env=env, check=True)
    return os.path.join(target, "release", "utter")


def where_it_runs(utter, wav):
    """The backend of a `--compute auto` run, or exit with the engine's reason."""
    out = subprocess.run([utter, "transcribe", "--compute", "auto", "-f", "json", wav],
                         capture_output=True, text=True, check=True)
    t = json.loads(out.stdout)
    if t["backend"] == "cpu":
        sys.exit(f"the {FEATURE} build runs on the CPU here, nothing to compare:\n{out.stderr}")
    return f'{t["backend"]} ({t["device"]})'


def files(desktop, utter):
    inputs = {}
    for name, script in (("dense", "make-long-speech.sh"), ("sparse", "make-sparse-speech.sh")):
        wav = desktop.path(f"{name}.wav")
        desktop.run([os.path.join(ROOT, "tests/fixtures", script), wav])
        seconds = float(subprocess.run(["soxi", "-D", wav], capture_output=True, text=True, check=True).stdout)
        inputs[name] = (wav, seconds)
    device = where_it_runs(utter, inputs["dense"][0])
    wall = {(f, v): [] for f in inputs for v, _ in VARIANTS}
    for r in range(ROUNDS):
        for f, (wav, _) in inputs.items():
            for v, args in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
                t0 = time.perf_counter()
                subprocess.run([utter, "transcribe", *args, wav], capture_output=True, check=True)
                wall[f, v].append(time.perf_counter() - t0)
        print(f"files: round {r + 1} done", file=sys.stderr)
    return inputs, wall, device


def latency(desktop, utter):
    cpu = Dictate(desktop, utter, "ctrl+shift+space", VARIANTS[0][1])
    gpu = Dictate(desktop, utter, "ctrl+alt+space", VARIANTS[1][1])
    speech = {s: paced_speech(desktop, s) for s in (5, 15)}
    ms = {(s, v): [] for s in speech for v, _ in VARIANTS}
    for r in range(ROUNDS):
        for s, (wav, _) in speech.items():
            for v, d in (("CPU", cpu), ("GPU", gpu)) if r % 2 == 0 else (("GPU", gpu), ("CPU", cpu)):
                ms[s, v].append(d.dictate(wav)[0])
        print(f"latency: round {r + 1} done", file=sys.stderr)
    return speech, ms


def main(desktop):
    utter = build()
    inputs, wall, device = files(desktop, utter)
    speech, ms = latency(desktop, utter)
    print(f"`{FEATURE}` build, GPU = `--compute auto` = {device}; {ROUNDS} rounds, interleaved, medians\n")
    print("| input | CPU wall | GPU wall | GPU/CPU | CPU RTF | GPU RTF |")
    print("|---|---:|---:|---:|---:|---:|")
    for f, (_, seconds) in inputs.items():
        c, g = (statistics.median(wall[f, v]) for v in ("CPU", "GPU"))
        print(f"| {f} ({seconds:.0f} s) | {c:.2f} s | {g:.2f} s | {g / c:.2f} | {c / seconds:.3f} | {g / seconds:.3f} |")
    print("\n| dictation | CPU release→text | GPU release→text | GPU/CPU |")
    print("|---|---:|---:|---:|")
    for s, (_, seconds) in speech.items():
        c, g = (statistics.median(ms[s, v]) for v in ("CPU", "GPU"))
        print(f"| {seconds:.1f} s | {c:.0f} ms | {g:.0f} ms | {g / c:.2f} |")


desktop = VirtualDesktop(":94", "utter-gpu-bench-")
try:
    main(desktop)
finally:
    desktop.close()
