"""The benchmarks' virtual desktop: an Xvfb display, a PulseAudio daemon with a
virtual microphone (`vmic`, fed by playing into `vmic_sink`), and `utter
dictate --events json` processes driven by xdotool. Not a test helper: the
tests have their own harness in Rust."""
import json, os, queue, shutil, subprocess, sys, tempfile, threading, time

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))


class VirtualDesktop:
    """Starts on `display`; `close()` stops everything it started."""

    def __init__(self, display, prefix):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.runtime = os.path.join(self.tmp, "runtime")
        os.makedirs(self.runtime, mode=0o700)
        self.env = dict(os.environ, DISPLAY=display, XDG_RUNTIME_DIR=self.runtime)
        self.procs = []
        self.spawn(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
        self.spawn(["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "-n",
                    "--load=module-native-protocol-unix auth-anonymous=1", "--load=module-null-sink sink_name=vspk",
                    "--load=module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1",
                    "--load=module-remap-source master=vmic_sink.monitor source_name=vmic",
                    "--load=module-always-sink"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
        self.run(["pactl", "set-default-source", "vmic"])
        self.run(["pactl", "set-default-sink", "vspk"])

    def spawn(self, args, **kw):
        kw.setdefault("env", self.env)
        p = subprocess.Popen(args, **kw)
        self.procs.append(p)
        return p

    def run(self, args):
        subprocess.run(args, env=self.env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def close(self):
        for p in self.procs:
            p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def process_tree(pid):
    """`pid` and its descendants (the engine and voice detector workers, the app's WebKit
    processes), from each process's parent in /proc."""
    parents = {int(p): int(s[1]) for p in os.listdir("/proc") if p.isdigit() and (s := _stat(p))}
    out, frontier = [pid], [pid]
    while frontier:
        frontier = [p for p, parent in parents.items() if parent in frontier and p not in out]
        out += frontier
    return out


def cpu_seconds(pid):
    """CPU time of `pid` and its descendants: the speech engine runs in
    worker processes, so the process alone would miss nearly all of it.
    Children that ended and were reaped count through cutime/cstime."""
    stats = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(p))}
    tree, frontier = set(), [pid]
    while frontier:
        tree.update(frontier)
        frontier = [p for p, s in stats.items() if int(s[1]) in frontier and p not in tree]
    ticks = sum(sum(int(x) for x in stats[p][11:15]) for p in tree if p in stats)
    return ticks / os.sysconf("SC_CLK_TCK")


class Dictate:
    """A running `utter dictate` on its own hotkey (and `utter ptt` socket)."""

    def __init__(self, desktop, binary, hotkey, extra, env=None, stderr=subprocess.DEVNULL):
        self.desktop, self.hotkey = desktop, hotkey
        self.events = queue.Queue()
        env = dict(desktop.env, UTTER_PTT_SOCKET=os.path.join(desktop.runtime, hotkey + ".sock"), **(env or {}))
        self.p = desktop.spawn([binary, "dictate", "--events", "json", "--output", "stdout", "--hotkey", hotkey,
                                "--recordings-dir", desktop.path("rec-" + hotkey), *extra],
                               stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
        threading.Thread(target=self._read, daemon=True).start()
        self.wait("ready", 60)

    def _read(self):
        for line in self.p.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))

    def wait(self, kind, timeout):
        """The next event of this kind, and every event read on the way."""
        deadline = time.time() + timeout
        seen = []
        while True:
            ev = self.events.get(timeout=max(0.1, deadline - time.time()))
            seen.append(ev)
            if ev["event"] == kind:
                return ev, seen
            if ev["event"] == "error":
                print(f"error: {ev}", file=sys.stderr)

    def dictate(self, wav):
        """Holds the hotkey while `wav` plays into the microphone. Returns the
        release-to-text latency (ms), the `text_delivered` event, the events
        before it and the CPU seconds the process used."""
        cpu = cpu_seconds(self.p.pid)
        self.desktop.run(["xdotool", "keydown", self.hotkey])
        self.wait("recording_started", 10)
        self.desktop.run(["paplay", "--latency-msec=200", "--device=vmic_sink", wav])
        self.desktop.run(["xdotool", "keyup", self.hotkey])
        stopped, _ = self.wait("recording_stopped", 10)
        delivered, seen = self.wait("text_delivered", 180)
        return delivered["t_ms"] - stopped["t_ms"], delivered, seen, cpu_seconds(self.p.pid) - cpu


LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"


def paced_speech(desktop, seconds):
    """Clips with 0.7 s pauses, repeated until about `seconds` long."""
    clips = sorted(os.path.join(LIBRIVOX, f) for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))
    durations = [float(subprocess.check_output(["soxi", "-D", c])) + 0.7 for c in clips]
    chosen, total, i = [], 0.0, 0
    while total < seconds - 1.5 or not chosen:
        chosen.append(clips[i % len(clips)]); total += durations[i % len(clips)]; i += 1
    out = desktop.path(f"speech-{seconds}.wav")
    padded = []
    for j, c in enumerate(chosen):
        p = desktop.path(f"p{seconds}-{j}.wav"); desktop.run(["sox", c, p, "pad", "0", "0.7"]); padded.append(p)
    desktop.run(["sox", *padded, out])
    return out, total
