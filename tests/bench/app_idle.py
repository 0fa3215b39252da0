#!/usr/bin/env python3
"""Benchmark (not a test): the desktop app's start-up time, idle CPU and RSS.

    python3 tests/bench/app_idle.py [STARTS] [IDLE_SECONDS]    (needs the `npm test` setup)

Starts the real `utter-app` on an Xvfb display STARTS times (default 5) and
measures, from the spawn: the log line "tray ready" (window + tray up) and
"dictation ready" (model and VAD loaded, hotkey registered). After the last
start it waits 10 s, then measures CPU over IDLE_SECONDS (default 30) and the
RSS of the app and its WebKit child processes, with the mic closed. The app is
set to unload the model after 1 idle minute: it then waits for its engine
worker to exit and measures the memory again. Also prints the UI bundle's
size. Prints Markdown for docs/benchmarks.md.
"""
import gzip, os, statistics, subprocess, sys, tempfile, time

STARTS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
IDLE_S = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))
APP = os.environ.get("UTTER_APP_BIN", os.path.join(TARGET, "debug", "utter-app"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tmp = tempfile.mkdtemp(prefix="utter-app-bench-")
env = dict(os.environ, DISPLAY=":94", UTTER_CONFIG_DIR=f"{tmp}/config", UTTER_DATA_DIR=f"{tmp}/data",
           XDG_CONFIG_HOME=f"{tmp}/xdg-config", RUST_LOG="info", UTTER_UPDATE_CHECK="0")
os.makedirs(f"{tmp}/config")
with open(f"{tmp}/config/settings.json", "w") as f:
    f.write('{"version": 1, "engineIdleUnloadMinutes": 1}')
xvfb = subprocess.Popen(["Xvfb", ":94", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                        stderr=subprocess.DEVNULL)
time.sleep(1.5)
TICK = os.sysconf("SC_CLK_TCK")


def tree(pid):
    """pid and all its descendants."""
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(p))
            except OSError:
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def cpu_ticks(pids):
    total = 0
    for p in pids:
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            total += int(f[11]) + int(f[12])
        except OSError:
            pass
    return total


def rss_mb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def pss_mb(pid):
    """Proportional set size: shared library pages split between the processes using them."""
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def start():
    t0 = time.monotonic()
    p = subprocess.Popen([APP], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marks = {}
    for line in p.stderr:
        for key in ("tray ready", "dictation ready"):
            if key in line and key not in marks:
                marks[key] = (time.monotonic() - t0) * 1000
        if len(marks) == 2:
            break
    return p, marks


tray, ready = [], []
for i in range(STARTS):
    p, marks = start()
    tray.append(marks["tray ready"]); ready.append(marks["dictation ready"])
    if i < STARTS - 1:
        p.terminate(); p.wait()
        time.sleep(0.5)

time.sleep(10)
pids = tree(p.pid)
c0 = cpu_ticks(pids); t0 = time.monotonic()
time.sleep(IDLE_S)
c1 = cpu_ticks(pids); elapsed = time.monotonic() - t0
cpu = (c1 - c0) / TICK / elapsed * 100
rss = [(open(f"/proc/{q}/comm").read().strip(), rss_mb(q)) for q in pids if os.path.exists(f"/proc/{q}")]
pss = sum(pss_mb(q) for q in pids)


def is_worker(pid):
    try:
        return b"--utter-engine-worker" in open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return False


workers = [q for q in pids if is_worker(q)]
deadline = time.monotonic() + 90
while any(os.path.exists(f"/proc/{w}") for w in workers) and time.monotonic() < deadline:
    time.sleep(1)
unloaded = [q for q in tree(p.pid) if os.path.exists(f"/proc/{q}")]
pss_unloaded = sum(pss_mb(q) for q in unloaded)
rss_unloaded = [(open(f"/proc/{q}/comm").read().strip(), rss_mb(q)) for q in unloaded]
p.terminate(); p.wait(); xvfb.terminate()

dist = os.path.join(ROOT, "ui", "dist")
raw = gz = 0
for d, _, files in os.walk(dist):
    for f in files:
        b = open(os.path.join(d, f), "rb").read()
        raw += len(b); gz += len(gzip.compress(b, 9))

print(f"| start → window + tray ready (median of {STARTS}) | {statistics.median(tray):.0f} ms (min {min(tray):.0f}, max {max(tray):.0f}) |")
print(f"| start → dictation ready: model + VAD loaded, hotkey registered | {statistics.median(ready):.0f} ms (min {min(ready):.0f}, max {max(ready):.0f}) |")
print(f"| idle CPU, app + WebKit processes, mic closed ({IDLE_S:.0f} s) | {cpu:.2f} % of one core |")
print(f"| memory, idle, model loaded | PSS {pss:.0f} MB in all; RSS " + ", ".join(f"{n} {r:.0f} MB" for n, r in rss) + " |")
print(f"| memory, idle, model unloaded (after 1 idle minute) | PSS {pss_unloaded:.0f} MB in all; RSS "
      + ", ".join(f"{n} {r:.0f} MB" for n, r in rss_unloaded) + " |")
print(f"| UI bundle (ui/dist) | {raw / 1024:.0f} KiB ({gz / 1024:.0f} KiB gzipped) |")
