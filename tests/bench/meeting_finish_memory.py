#!/usr/bin/env python3
"""Benchmark (not a test), issue 44: the memory of finishing a long meeting.

Builds a meeting folder of about half an hour (`you.wav`: the five LibriVox
clips of pocketsphinx-testdata, 290 s of silence after each; `others.wav`: one
clip among silence; `meeting.json` with a 120 ppm clock drift, so the system
channel is resampled), then runs `utter meeting --finish` on a copy of it and
polls the main process's peak RSS (VmHWM; the engine and the voice detectors
are processes of their own). `UTTER_BIN`s, colon-separated, compare builds in
one run of the machine.

    cargo build -p utter-cli
    python3 tests/bench/meeting_finish_memory.py
    UTTER_BIN=/tmp/utter-before:/tmp/utter-after python3 tests/bench/meeting_finish_memory.py
    SILENCE_S=1435 python3 tests/bench/meeting_finish_memory.py     # a 2-hour meeting
"""
import glob, json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization import UTTER  # noqa: E402

LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
SILENCE_S = int(os.environ.get("SILENCE_S", "290"))


def wav_seconds(path):
    return float(subprocess.run(["soxi", "-D", path], capture_output=True, text=True, check=True).stdout)


def build(folder):
    sil = os.path.join(folder, "sil.wav")
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", sil, "trim", "0", str(SILENCE_S)], check=True)
    clips = sorted(glob.glob(os.path.join(LIBRIVOX, "*.wav")))
    you = [x for c in clips for x in (c, sil)]
    others = [sil, clips[1]] + [sil] * 4
    for name, parts in (("you.wav", you), ("others.wav", others)):
        subprocess.run(["sox", *parts, "-r", "16000", "-c", "1", "-b", "16", os.path.join(folder, name)], check=True)
    os.remove(sil)


def peak_rss_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def finish(binary, source, work):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    you_s, others_s = (wav_seconds(os.path.join(work, n)) for n in ("you.wav", "others.wav"))
    with open(os.path.join(work, "meeting.json"), "w") as f:
        json.dump({"startedUnixMs": 0, "phase": "recorded", "microphone": "mic", "systemAudio": "monitor",
                   "youMs": int(you_s * 1000), "othersMs": int(others_s * 1000), "driftPpm": 120.0,
                   "notices": []}, f)
    out = os.path.join(work, "out.txt")
    start = time.time()
    p = subprocess.Popen([binary, "meeting", "--finish", work, "--format", "txt", "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while p.poll() is None:
        peak = max(peak, peak_rss_kb(p.pid))
        time.sleep(0.1)
    if p.returncode:
        sys.exit(f"{binary}: exit {p.returncode}: {p.stderr.read()[-2000:]}")
    return you_s, peak / 1024, time.time() - start, open(out).read()


def main():
    binaries = os.environ.get("UTTER_BIN", UTTER).split(":")
    tmp = tempfile.mkdtemp(prefix="utter-meeting-memory-")
    source = os.path.join(tmp, "meeting")
    os.makedirs(source)
    build(source)
    print("| build | meeting | main process peak RSS | time |")
    print("|---|---:|---:|---:|")
    texts = []
    for b in binaries:
        minutes, peak, seconds, text = finish(b, source, os.path.join(tmp, "run"))
        texts.append(text)
        print(f"| {b} | {minutes / 60:.1f} min | {peak:.0f} MB | {seconds:.0f} s |")
    print(f"\nsame transcript from every build: {len(set(texts)) == 1}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
