#!/usr/bin/env python3
"""Benchmark (not a test): accuracy and release-to-text latency of live
dictation on real recorded speech, eager (windows with context) vs
--no-eager vs `utter transcribe` of the same audio.

    python3 tests/bench/dictation_accuracy.py      (needs the `npm test` setup)
    UTTER_BEFORE_BIN=/path/to/older/utter python3 tests/bench/dictation_accuracy.py
                                                   (adds that build's eager mode as a fourth column)
    UTTER_BENCH_MODELS="whisper-tiny.en moonshine-tiny-en" python3 tests/bench/dictation_accuracy.py
                                                   (eager dictation and `utter transcribe` per model instead)
    UTTER_BENCH_MODELS="moonshine-tiny-en@per-span moonshine-tiny-en@growing-window" ...
                                                   (MODEL@STRATEGY: that `--live-strategy`)

15 dictations of 5-60 s are built from the LibriVox clips of Debian's
pocketsphinx-testdata: sentences in rotation with natural pauses of 0.3-1.5 s
between them and, in every other sentence, a 0.6-1.2 s pause cut in at its
quietest point mid-sentence. Each is played into a PulseAudio virtual
microphone (Xvfb, xdotool for the hotkey). Eager and --no-eager run as two
`utter dictate` processes on different hotkeys, alternating which goes first.
Prints a Markdown table for docs/benchmarks.md.
"""
import array, os, random, re, statistics, subprocess, sys, wave

from virtual_desktop import TARGET, Dictate, VirtualDesktop

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
BEFORE = os.environ.get("UTTER_BEFORE_BIN")
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
# Target lengths (s); UTTER_BENCH_LENGTHS="5 10" runs fewer (a quick check of the script).
LENGTHS = [int(n) for n in os.environ.get("UTTER_BENCH_LENGTHS", "").split()] or [
    5, 6, 8, 10, 12, 14, 16, 18, 21, 24, 28, 32, 38, 45, 60]
rng = random.Random(12)


def words(text):
    text = re.sub(r"[^\w\s']", " ", text.lower().replace("<s>", "").replace("</s>", ""))
    return [w.strip("'") for w in text.split() if w.strip("'")]


def edits(ref, hyp):
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i]
        for j, h in enumerate(hyp, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h)))
        prev = cur
    return prev[-1]


def read_pcm(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return array.array("h", w.readframes(w.getnframes()))


def write_pcm(path, pcm):
    with wave.open(path, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(pcm.tobytes())


def quietest_point(pcm):
    """Sample index of the quietest 40 ms between 30 % and 70 % of the clip."""
    frame = 640
    best, best_energy = len(pcm) // 2, None
    for start in range(int(len(pcm) * 0.3), int(len(pcm) * 0.7) - frame, frame // 2):
        energy = sum(abs(s) for s in pcm[start:start + frame])
        if best_energy is None or energy < best_energy:
            best, best_energy = start + frame // 2, energy
    return best


def silence(seconds):
    return array.array("h", bytes(2 * int(seconds * 16000)))


def build_dictations(desktop):
    names = sorted(f for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))
    truth = {}
    for line in open(os.path.join(LIBRIVOX, "transcription")):
        text, ident = line.rsplit("(", 1)
        truth[ident.strip().rstrip(")") + ".wav"] = " ".join(words(text))
    clips = [(read_pcm(os.path.join(LIBRIVOX, n)), truth[n]) for n in names]
    out = []
    for k, seconds in enumerate(LENGTHS):
        pcm, ref, i = silence(0.3), [], k
        while len(pcm) < (seconds - 1) * 16000 or not ref:
            clip, text = clips[i % len(clips)]
            if i % 2 == 1:  # a pause in the middle of the sentence
                cut = quietest_point(clip)
                pcm += clip[:cut] + silence(rng.uniform(0.6, 1.2)) + clip[cut:]
            else:
                pcm += clip
            pcm += silence(rng.uniform(0.3, 1.5))
            ref.append(text)
            i += 1
        path = desktop.path(f"dictation-{k:02}.wav")
        write_pcm(path, pcm)
        out.append((path, len(pcm) / 16000, " ".join(ref)))
    return out


def transcribe(wav, model=None):
    extra = ["--model", model] if model else []
    out = subprocess.run([UTTER, "transcribe", *extra, wav], check=True, capture_output=True, text=True)
    return out.stdout.strip()


MODELS = os.environ.get("UTTER_BENCH_MODELS", "").split()
HOTKEYS = ["ctrl+shift+space", "ctrl+alt+space", "ctrl+super+space", "shift+super+space",
           "alt+super+space", "ctrl+alt+shift+space"]


def main(desktop):
    dictations = build_dictations(desktop)
    if MODELS:
        variants = {}
        for i, m in enumerate(MODELS):
            model, _, strategy = m.partition("@")
            extra = ["--live-strategy", strategy] if strategy else []
            variants[m] = Dictate(desktop, UTTER, HOTKEYS[i], ["--model", model, *extra])
    else:
        variants = {"eager": Dictate(desktop, UTTER, "ctrl+shift+space", []),
                    "no-eager": Dictate(desktop, UTTER, "ctrl+alt+space", ["--no-eager"])}
    if BEFORE:
        variants["before"] = Dictate(desktop, BEFORE, "ctrl+super+space", [])
    names = list(variants)
    models = list(dict.fromkeys(m.partition("@")[0] for m in MODELS))
    transcribes = [f"transcribe {m}" for m in models] or ["transcribe"]
    rows, totals = [], {name: [0, 0] for name in names + transcribes}
    latency = {name: [] for name in names}
    cpu = {name: 0.0 for name in names}
    for k, (wav, seconds, ref) in enumerate(dictations):
        order = names[k % len(names):] + names[:k % len(names)]
        texts, row = {}, {}
        for name in order:
            ms, delivered, _, used = variants[name].dictate(wav)
            texts[name] = delivered["text"]
            latency[name].append(ms); row[name + " ms"] = ms; cpu[name] += used
        for t, m in zip(transcribes, models or [None]):
            texts[t] = transcribe(wav, m)
        ref_words = words(ref)
        for name, text in texts.items():
            e = edits(ref_words, words(text))
            totals[name][0] += e; totals[name][1] += len(ref_words)
            row[name] = e
        rows.append((seconds, len(ref_words), row, texts))
        print(f"{seconds:.1f} s: {row}", file=sys.stderr)
        for name, text in texts.items():
            print(f"  {name}: {text}", file=sys.stderr)

    cols = names + transcribes
    print("| speech | words | " + " | ".join(f"{c} errors" for c in cols) + " | "
          + " | ".join(f"{c} release→text" for c in names) + " |")
    print("|---:|---:|" + "---:|" * (len(cols) + len(names)))
    for seconds, n, row, _ in rows:
        print(f"| {seconds:.1f} s | {n} | " + " | ".join(str(row[c]) for c in cols) + " | "
              + " | ".join(f"{row[c + ' ms']:.0f} ms" for c in names) + " |")
    wer = {k: 100 * e / n for k, (e, n) in totals.items()}
    print(f"| **total** | {totals[names[0]][1]} | " + " | ".join(f"{totals[c][0]} ({wer[c]:.1f} %)" for c in cols)
          + " | " + " | ".join(f"median {statistics.median(latency[c]):.0f} ms" for c in names) + " |")
    speech = sum(s for s, *_ in rows)
    print("\nCPU seconds per second of speech (whole dictation, release included): "
          + ", ".join(f"{c} {cpu[c] / speech:.2f}" for c in names))


desktop = VirtualDesktop(":94", "utter-acc-")
try:
    main(desktop)
finally:
    desktop.close()
