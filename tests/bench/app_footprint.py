#!/usr/bin/env python3
"""Benchmark (not a test): what the desktop app costs at rest, the way users pay it.

    flock -x /tmp/utter-cpu.lock python3 tests/bench/app_footprint.py [IDLE_SECONDS] [--no-unload] [--tray-only] [--mappings]

Starts the real `utter-app` (UTTER_APP_BIN, default the release build) with default
settings on an Xvfb display, a PulseAudio virtual microphone and a private D-Bus
session bus (the single-instance hand-over needs one), and measures the whole
process tree — the app, WebKitWebProcess, WebKitNetworkProcess, the engine and
VAD workers — in each state a user leaves it in:

1. started normally, window open;
2. the window closed to the tray (WM_DELETE_WINDOW, as a close button sends);
3. reopened by launching Utter again (single instance: the running one shows its window);
4. a fresh start with `--hidden` (how autostart starts it);
5. the same after the engine worker unloaded the model (`engineIdleUnloadMinutes: 1`
   here; the default is 10), which also says how long after the last use it goes;
6. started normally, the window closed to the tray and the model unloaded: where a
   user who opened the window once spends the rest of the day.

`--mappings` prints, for each state, the app process's largest mappings by PSS (to
stderr): what the app itself holds.

For each: PSS per process and in all (shared pages split between the processes
that map them, so the sum is what the tree really costs), CPU ticks and context
switches (wake-ups) of the tree over IDLE_SECONDS (default 30), after 10 s of
settling. Prints Markdown for docs/benchmarks.md. Models come from the user's
models directory (UTTER_MODELS_DIR or ~/.local/share/utter/models).
"""
import json, os, shutil, subprocess, sys, tempfile, time

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
IDLE_S = float(ARGS[0]) if ARGS else 30.0
UNLOAD = "--no-unload" not in sys.argv
SETTLE_S = 10.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target"))
APP = os.environ.get("UTTER_APP_BIN", os.path.join(TARGET, "release", "utter-app"))
CLOSE = os.path.join(ROOT, "tests", "support", "x11_close_window.py")
TICK = os.sysconf("SC_CLK_TCK")

tmp = tempfile.mkdtemp(prefix="utter-footprint-")
runtime = os.path.join(tmp, "runtime")
os.makedirs(runtime, mode=0o700)
display = ":93"
while os.path.exists(f"/tmp/.X11-unix/X{display[1:]}"):
    display = f":{int(display[1:]) + 1}"
# The user's models (the app's own dirs are fresh, and XDG_DATA_HOME moves with them).
MODELS = os.environ.get("UTTER_MODELS_DIR") or os.path.join(
    os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "utter", "models")
base_env = dict(os.environ, DISPLAY=display, XDG_RUNTIME_DIR=runtime, UTTER_UPDATE_CHECK="0", RUST_LOG="info",
                UTTER_MODELS_DIR=MODELS)
base_env.pop("UTTER_ENGINE_THREADS", None)
helpers = []


def helper(args, **kw):
    p = subprocess.Popen(args, env=base_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    helpers.append(p)
    return p


def wait_until(what, ok, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {what}")


helper(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
wait_until("Xvfb", lambda: subprocess.run(["xdpyinfo"], env=base_env, capture_output=True).returncode == 0)
helper(["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "-n",
        "--load=module-native-protocol-unix auth-anonymous=1",
        "--load=module-null-sink sink_name=vspk",
        "--load=module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1",
        "--load=module-remap-source master=vmic_sink.monitor source_name=vmic",
        "--load=module-always-sink"])
wait_until("PulseAudio", lambda: subprocess.run(["pactl", "info"], env=base_env, capture_output=True).returncode == 0)
subprocess.run(["pactl", "set-default-source", "vmic"], env=base_env, check=True)
bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                     env=base_env, capture_output=True, text=True, check=True).stdout.split()
base_env["DBUS_SESSION_BUS_ADDRESS"], bus_pid = bus[0], int(bus[1])


def proc_field(pid, name):
    try:
        return open(f"/proc/{pid}/{name}", "rb").read()
    except OSError:
        return b""


def tree(pid):
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            stat = proc_field(p, "stat")
            if stat:
                kids.setdefault(int(stat.rsplit(b")", 1)[1].split()[1]), []).append(int(p))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def role(pid):
    cmd = proc_field(pid, "cmdline")
    comm = proc_field(pid, "comm").decode().strip()
    if b"--utter-engine-worker" in cmd:
        return "engine worker"
    if b"--utter-vad-worker" in cmd:
        return "VAD worker"
    if comm.startswith("WebKitWebProces"):
        return "WebKitWebProcess"
    if comm.startswith("WebKitNetworkPr"):
        return "WebKitNetworkProcess"
    return "app" if comm.startswith("utter-app") else comm


def pss_mb(pid):
    for line in proc_field(pid, "smaps_rollup").decode().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return 0.0


def ticks_and_switches(pids):
    ticks = switches = 0
    for p in pids:
        stat = proc_field(p, "stat")
        if not stat:
            continue
        f = stat.rsplit(b")", 1)[1].split()
        ticks += int(f[11]) + int(f[12])
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            for line in proc_field(p, f"task/{t}/status").decode().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split()[1])
    return ticks, switches


def measure(app):
    """Settles, then the tree's idle CPU and wake-ups over IDLE_S, then its PSS by role."""
    time.sleep(SETTLE_S)
    pids = tree(app.pid)
    (t0, s0), m0 = ticks_and_switches(pids), time.monotonic()
    time.sleep(IDLE_S)
    pids = tree(app.pid)
    (t1, s1), elapsed = ticks_and_switches(pids), time.monotonic() - m0
    by_role = {}
    for p in pids:
        by_role[role(p)] = by_role.get(role(p), 0.0) + pss_mb(p)
    if "--mappings" in sys.argv:
        print_mappings(app.pid)
    return {
        "pss": sum(by_role.values()),
        "by_role": by_role,
        "cpu_pct": (t1 - t0) / TICK / elapsed * 100,
        "wakeups_per_s": (s1 - s0) / elapsed,
    }


def print_mappings(pid, top=12):
    """The process's PSS by mapped file (anonymous memory as [anon]), largest first, and how
    much of each is the process's own modified pages (relocated data, heap: only swap can
    take those) against clean file pages (which the kernel can drop and read back)."""
    pss, dirty, name = {}, {}, None
    for line in proc_field(pid, "smaps").decode(errors="replace").splitlines():
        parts = line.split()
        if parts and "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
            name = parts[5].rsplit("/", 1)[-1] if len(parts) > 5 else "[anon]"
        elif parts and parts[0] == "Pss:":
            pss[name] = pss.get(name, 0) + int(parts[1])
        elif parts and parts[0] == "Private_Dirty:":
            dirty[name] = dirty.get(name, 0) + int(parts[1])
    total = sum(pss.values())
    print(f"app {pid}: {total / 1024:.1f} MB PSS; largest mappings (PSS, of it modified):", file=sys.stderr)
    for name, kb in sorted(pss.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {kb / 1024:6.1f} MB  {dirty.get(name, 0) / 1024:5.1f} MB  {name}", file=sys.stderr)


def start(dirs, *args, settings=None):
    if settings:
        os.makedirs(f"{dirs}/config", exist_ok=True)
        with open(f"{dirs}/config/settings.json", "w") as f:
            json.dump(settings, f)
    env = dict(base_env, UTTER_CONFIG_DIR=f"{dirs}/config", UTTER_DATA_DIR=f"{dirs}/data",
               UTTER_CACHE_DIR=f"{dirs}/cache", XDG_CONFIG_HOME=f"{dirs}/xdg-config",
               XDG_DATA_HOME=f"{dirs}/xdg-data")
    log = open(f"{dirs}.log", "w")
    app = subprocess.Popen([APP, *args], env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_until("dictation ready", lambda: "dictation ready" in open(f"{dirs}.log").read(), 60)
    return app, env


def main_window():
    out = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Utter$"], env=base_env,
                         capture_output=True, text=True).stdout.split()
    return out[0] if out else None


def stop(app):
    app.terminate()
    try:
        app.wait(10)
    except subprocess.TimeoutExpired:
        app.kill()
        app.wait()


rows = []
try:
    dirs = os.path.join(tmp, "user")
    app, env = start(dirs)
    wait_until("the main window", lambda: main_window() is not None)
    rows.append(("window open", measure(app)))
    subprocess.run([sys.executable, CLOSE, main_window()], env=base_env, check=True)
    wait_until("the window to close", lambda: main_window() is None)
    if app.poll() is not None:
        raise SystemExit("the app exited when its window was closed")
    rows.append(("closed to the tray", measure(app)))
    if "--tray-only" in sys.argv:
        stop(app)
        raise StopIteration
    subprocess.run([APP], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
    wait_until("the window to reopen", lambda: main_window() is not None)
    rows.append(("reopened (second launch)", measure(app)))
    stop(app)
    app, _ = start(os.path.join(tmp, "autostart"), "--hidden")
    rows.append(("started `--hidden` (autostart)", measure(app)))
    stop(app)
    if not UNLOAD:
        raise StopIteration
    app, _ = start(os.path.join(tmp, "unload"), "--hidden",
                   settings={"version": 1, "engineIdleUnloadMinutes": 1})
    ready = time.monotonic()
    workers = [p for p in tree(app.pid) if role(p) == "engine worker"]
    wait_until("the engine worker to unload", lambda: not any(os.path.exists(f"/proc/{w}") for w in workers), 120)
    unloaded_after = time.monotonic() - ready
    rows.append((f"`--hidden`, model unloaded ({unloaded_after:.0f} s after start, setting 1 min)", measure(app)))
    stop(app)
    app, _ = start(os.path.join(tmp, "tray-unload"), settings={"version": 1, "engineIdleUnloadMinutes": 1})
    ready = time.monotonic()
    wait_until("the main window", lambda: main_window() is not None)
    subprocess.run([sys.executable, CLOSE, main_window()], env=base_env, check=True)
    wait_until("the window to close", lambda: main_window() is None)
    workers = [p for p in tree(app.pid) if role(p) == "engine worker"]
    wait_until("the engine worker to unload", lambda: not any(os.path.exists(f"/proc/{w}") for w in workers), 120)
    rows.append(("window opened, closed to the tray, model unloaded", measure(app)))
    stop(app)
except StopIteration:
    pass
finally:
    for p in reversed(helpers):
        p.terminate()
    os.kill(bus_pid, 15)

settings = json.load(open(os.path.join(tmp, "user", "config", "settings.json"))) \
    if os.path.exists(os.path.join(tmp, "user", "config", "settings.json")) else {}
roles = ["app", "WebKitWebProcess", "WebKitNetworkProcess", "engine worker", "VAD worker"]
print(f"`{APP}`, default settings (mic mode: {settings.get('microphone', 'default')}), "
      f"idle {IDLE_S:.0f} s after {SETTLE_S:.0f} s settling, {os.cpu_count()} cores\n")
print("| state | PSS in all | " + " | ".join(roles) + " | idle CPU (% of a core) | wake-ups/s |")
print("|---|---|" + "---|" * len(roles) + "---|---|")
for name, m in rows:
    cells = [f"{m['by_role'][r]:.0f}" if r in m["by_role"] else "—" for r in roles]
    # A process gone between the listing and the read (a worker unloading) counts 0: left out.
    others = {k: v for k, v in m["by_role"].items() if k not in roles and v >= 0.5}
    extra = "".join(f" (+{k} {v:.0f})" for k, v in others.items())
    print(f"| {name} | **{m['pss']:.0f} MB**{extra} | " + " | ".join(cells)
          + f" | {m['cpu_pct']:.2f} | {m['wakeups_per_s']:.0f} |")
shutil.rmtree(tmp, ignore_errors=True)
