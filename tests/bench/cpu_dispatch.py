"""Benchmark (not a test), issue 30: the portable engine (runtime CPU dispatch,
`dynamic-backends`: ggml's CPU code as one module per x86-64 level, the best
loaded at start) against the default build (the engine compiled for this
machine, -march=native), on the dense and sparse files. Same profile, same
model (the default whisper tiny.en), default threads; whole processes,
interleaved round by round with the order rotating, median wall time.

    cargo build -p utter-cli                          # the default build: target/debug/utter
    UTTER_PROFILE=dev bash scripts/build-portable.sh  # the portable one: target/portable/utter
    bash tests/fixtures/make-long-speech.sh /tmp/dense.wav
    bash tests/fixtures/make-sparse-speech.sh /tmp/sparse.wav
    python3 tests/bench/cpu_dispatch.py [ROUNDS]
"""
import os, statistics, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization import timed

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))
BUILDS = {
    "native (default build)": os.path.join(TARGET, "debug", "utter"),
    "dispatch (portable build)": os.path.join(TARGET, "portable", "utter"),
}


def cpu_line(exe):
    out = subprocess.run([exe, "doctor"], capture_output=True, text=True).stdout
    return next((l.split(None, 2)[2] for l in out.splitlines() if l.split()[1:2] == ["cpu"]), "?")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for name, exe in BUILDS.items():
        print(f"{name}: {exe} — doctor: {cpu_line(exe)}")
    print("\n| audio | build | median wall | ratio |\n|---|---|---:|---:|")
    for wav in ["/tmp/dense.wav", "/tmp/sparse.wav"]:
        walls = {name: [] for name in BUILDS}
        texts = {}
        names = list(BUILDS)
        for r in range(rounds):
            for name in names[r % 2:] + names[:r % 2]:
                out, wall = timed([BUILDS[name], "transcribe", wav], dict(os.environ))[:2]
                walls[name].append(wall)
                texts[name] = out
        base = statistics.median(walls[names[0]])
        for name in names:
            m = statistics.median(walls[name])
            print(f"| {os.path.basename(wav)} | {name} | {m:.2f} s | {m / base:.3f} |")
        print(f"| {os.path.basename(wav)} | same text | {texts[names[0]] == texts[names[1]]} | |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
