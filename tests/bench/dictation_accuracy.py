#!/usr/bin/env python3
"""Benchmark (not a test): accuracy and release-to-text latency of live
dictation on real recorded speech, eager (windows with context) vs
--no-eager vs `utter transcribe` of the same audio.

    python3 tests/bench/dictation_accuracy.py      (needs the `npm test` setup)
    UTTER_BEFORE_BIN=/path/to/older/utter python3 tests/bench/dictation_accuracy.py
                                                   (adds that build's eager mode as a fourth column)

15 dictations of 5-60 s are built from the LibriVox clips of Debian's
pocketsphinx-testdata: sentences in rotation with natural pauses of 0.3-1.5 s
between them and, in every other sentence, a 0.6-1.2 s pause cut in at its
quietest point mid-sentence. Each is played into a PulseAudio virtual
microphone (Xvfb, xdotool for the hotkey). Eager and --no-eager run as two
`utter dictate` processes on different hotkeys, alternating which goes first.
Prints a Markdown table for docs/benchmarks.md.
"""
import json, os, queue, random, re, shutil, statistics, subprocess, sys, tempfile, threading, time, wave
import array

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))
UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
BEFORE = os.environ.get("UTTER_BEFORE_BIN")
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
LENGTHS = [5, 6, 8, 10, 12, 14, 16, 18, 21, 24, 28, 32, 38, 45, 60]
tmp = tempfile.mkdtemp(prefix="utter-acc-")
runtime = os.path.join(tmp, "runtime"); os.makedirs(runtime, mode=0o700)
env = dict(os.environ, DISPLAY=":94", XDG_RUNTIME_DIR=runtime)
procs = []
rng = random.Random(12)


def spawn(args, **kw):
    kw.setdefault("env", env)
    p = subprocess.Popen(args, **kw); procs.append(p); return p


def run(args):
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


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


def build_dictations():
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
        path = os.path.join(tmp, f"dictation-{k:02}.wav")
        write_pcm(path, pcm)
        out.append((path, len(pcm) / 16000, " ".join(ref)))
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Dictate:
    def __init__(self, hotkey, extra, binary=UTTER):
        self.hotkey = hotkey
        self.events = queue.Queue()
        self.p = spawn([binary, "dictate", "--events", "json", "--output", "stdout", "--hotkey", hotkey,
                        "--recordings-dir", os.path.join(tmp, "rec-" + hotkey), *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                       env=dict(env, UTTER_PTT_SOCKET=os.path.join(runtime, hotkey + ".sock")))
        threading.Thread(target=self._read, daemon=True).start()
        self.wait("ready", 60)

    def _read(self):
        for line in self.p.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))

    def wait(self, kind, timeout):
        deadline = time.time() + timeout
        while True:
            ev = self.events.get(timeout=max(0.1, deadline - time.time()))
            if ev["event"] == kind:
                return ev
            if ev["event"] == "error":
                print(f"error: {ev}", file=sys.stderr)

    def dictate(self, wav):
        cpu = cpu_seconds(self.p.pid)
        run(["xdotool", "keydown", self.hotkey])
        self.wait("recording_started", 10)
        run(["paplay", "--latency-msec=200", "--device=vmic_sink", wav])
        run(["xdotool", "keyup", self.hotkey])
        stopped = self.wait("recording_stopped", 10)
        delivered = self.wait("text_delivered", 180)
        return delivered["t_ms"] - stopped["t_ms"], delivered["text"], cpu_seconds(self.p.pid) - cpu


def transcribe(wav):
    out = subprocess.run([UTTER, "transcribe", wav], env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def main():
    spawn(["Xvfb", ":94", "-screen", "0", "1280x800x24", "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
    spawn(["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "-n",
           "--load=module-native-protocol-unix auth-anonymous=1", "--load=module-null-sink sink_name=vspk",
           "--load=module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1",
           "--load=module-remap-source master=vmic_sink.monitor source_name=vmic", "--load=module-always-sink"],
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    run(["pactl", "set-default-source", "vmic"]); run(["pactl", "set-default-sink", "vspk"])
    dictations = build_dictations()
    variants = {"eager": Dictate("ctrl+shift+space", []), "no-eager": Dictate("ctrl+alt+space", ["--no-eager"])}
    if BEFORE:
        variants["before"] = Dictate("ctrl+super+space", [], BEFORE)
    names = list(variants)
    rows, totals = [], {name: [0, 0] for name in names + ["transcribe"]}
    latency = {name: [] for name in names}
    cpu = {name: 0.0 for name in names}
    for k, (wav, seconds, ref) in enumerate(dictations):
        order = names[k % len(names):] + names[:k % len(names)]
        texts, row = {}, {}
        for name in order:
            ms, texts[name], used = variants[name].dictate(wav)
            latency[name].append(ms); row[name + " ms"] = ms; cpu[name] += used
        texts["transcribe"] = transcribe(wav)
        ref_words = words(ref)
        for name, text in texts.items():
            e = edits(ref_words, words(text))
            totals[name][0] += e; totals[name][1] += len(ref_words)
            row[name] = e
        rows.append((seconds, len(ref_words), row, texts))
        print(f"{seconds:.1f} s: {row}", file=sys.stderr)
        for name, text in texts.items():
            print(f"  {name}: {text}", file=sys.stderr)

    cols = names + ["transcribe"]
    print("| speech | words | " + " | ".join(f"{c} errors" for c in cols) + " | "
          + " | ".join(f"{c} release→text" for c in names) + " |")
    print("|---:|---:|" + "---:|" * (len(cols) + len(names)))
    for seconds, n, row, _ in rows:
        print(f"| {seconds:.1f} s | {n} | " + " | ".join(str(row[c]) for c in cols) + " | "
              + " | ".join(f"{row[c + ' ms']:.0f} ms" for c in names) + " |")
    wer = {k: 100 * e / n for k, (e, n) in totals.items()}
    print(f"| **total** | {totals['eager'][1]} | " + " | ".join(f"{totals[c][0]} ({wer[c]:.1f} %)" for c in cols)
          + " | " + " | ".join(f"median {statistics.median(latency[c]):.0f} ms" for c in names) + " |")
    speech = sum(s for s, *_ in rows)
    print("\nCPU seconds per second of speech (whole dictation, release included): "
          + ", ".join(f"{c} {cpu[c] / speech:.2f}" for c in names))


try:
    main()
finally:
    for p in procs:
        p.kill()
    shutil.rmtree(tmp, ignore_errors=True)
