#!/usr/bin/env python3
"""Benchmark (not a test): release-to-text latency of `utter dictate`, eager vs
--no-eager, on a virtual desktop (Xvfb + PulseAudio virtual mic + xdotool),
with real LibriVox speech of about 5, 15, 30 and 60 s. Also idle CPU with the
mic closed and peak RSS over a 60 s dictation.

    python3 tests/bench/dictation_latency.py [ROUNDS]      (needs the `npm test` setup)

Both variants run at once on different hotkeys and are interleaved, so
machine noise hits them alike. Prints a Markdown table for docs/benchmarks.md.
"""
import json, os, queue, shutil, statistics, subprocess, sys, tempfile, threading, time

IDLE_ONLY = "--idle-only" in sys.argv
args = [a for a in sys.argv[1:] if a != "--idle-only"]
ROUNDS = int(args[0]) if args else 3
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))
UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "release", "utter"))
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
tmp = tempfile.mkdtemp(prefix="utter-bench-")
runtime = os.path.join(tmp, "runtime"); os.makedirs(runtime, mode=0o700)
env = dict(os.environ, DISPLAY=":93", XDG_RUNTIME_DIR=runtime)
procs = []

def spawn(args, **kw):
    p = subprocess.Popen(args, env=env, **kw); procs.append(p); return p

def run(args):
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def speech(seconds):
    """Clips with 0.7 s pauses, repeated until about `seconds` long."""
    clips = sorted(os.path.join(LIBRIVOX, f) for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))
    durations = [float(subprocess.check_output(["soxi", "-D", c])) + 0.7 for c in clips]
    chosen, total, i = [], 0.0, 0
    while total < seconds - 1.5 or not chosen:
        chosen.append(clips[i % len(clips)]); total += durations[i % len(clips)]; i += 1
    out = os.path.join(tmp, f"speech-{seconds}.wav")
    padded = []
    for j, c in enumerate(chosen):
        p = os.path.join(tmp, f"p{seconds}-{j}.wav"); run(["sox", c, p, "pad", "0", "0.7"]); padded.append(p)
    run(["sox", *padded, out])
    return out, total

class Dictate:
    def __init__(self, hotkey, extra):
        self.hotkey = hotkey
        self.events = queue.Queue()
        self.p = spawn([UTTER, "dictate", "--events", "json", "--output", "stdout", "--hotkey", hotkey,
                        "--recordings-dir", os.path.join(tmp, "rec-" + hotkey), *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.wait("ready", 60)

    def _read(self):
        for line in self.p.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))

    def wait(self, kind, timeout):
        deadline = time.time() + timeout
        seen = []
        while True:
            ev = self.events.get(timeout=max(0.1, deadline - time.time()))
            seen.append(ev)
            if ev["event"] == kind:
                return ev, seen

    def dictate(self, wav):
        run(["xdotool", "keydown", self.hotkey])
        self.wait("recording_started", 10)
        run(["paplay", "--latency-msec=200", "--device=vmic_sink", wav])
        run(["xdotool", "keyup", self.hotkey])
        stopped, _ = self.wait("recording_stopped", 10)
        delivered, seen = self.wait("text_delivered", 120)
        tail = [e for e in seen if e["event"] == "segment_transcribed"]
        return delivered["t_ms"] - stopped["t_ms"], (tail[-1]["engine_ms"] if tail else 0.0), delivered

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def main():
    spawn(["Xvfb", ":93", "-screen", "0", "1280x800x24", "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
    spawn(["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "-n",
           "--load=module-native-protocol-unix auth-anonymous=1", "--load=module-null-sink sink_name=vspk",
           "--load=module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1",
           "--load=module-remap-source master=vmic_sink.monitor source_name=vmic", "--load=module-always-sink"],
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    run(["pactl", "set-default-source", "vmic"]); run(["pactl", "set-default-sink", "vspk"])
    eager = Dictate("ctrl+shift+space", [])

    # Idle CPU with the mic closed.
    time.sleep(2)
    c0, t0 = cpu_seconds(eager.p.pid), time.time()
    time.sleep(30)
    idle = (cpu_seconds(eager.p.pid) - c0) / (time.time() - t0) * 100
    if IDLE_ONLY:
        print(f"idle CPU of `utter dictate` (mic closed, 30 s): {idle:.2f} %")
        return
    files = {s: speech(s) for s in (5, 15, 30, 60)}
    baseline = Dictate("ctrl+alt+space", ["--no-eager"])

    results = {s: {"eager": [], "baseline": [], "tail": []} for s in files}
    for r in range(ROUNDS):
        for s, (wav, _) in files.items():
            for name, d in (("eager", eager), ("baseline", baseline)) if r % 2 == 0 else (("baseline", baseline), ("eager", eager)):
                latency, tail, _ = d.dictate(wav)
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

try:
    main()
finally:
    for p in procs:
        p.kill()
    shutil.rmtree(tmp, ignore_errors=True)
