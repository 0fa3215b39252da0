"""Many dictations in a row: does anything grow? (issue 41)

    cargo build -p utter-cli -p utter-app
    flock -x /tmp/utter-cpu.lock python3 tests/bench/soak.py [DICTATIONS] [--app]   # default 500

The real `utter dictate` (UTTER_BIN, default the debug build), or with --app the desktop app
started `--hidden` as autostart does (UTTER_APP_BIN; its text goes to the clipboard, each
dictation counted in its History), with default settings on the
benchmarks' virtual desktop (Xvfb + a PulseAudio virtual microphone), pressed and released
through its push-to-talk socket around 1.2 s of LibriVox speech played into the microphone,
DICTATIONS times. After the first 20 (warm: model loaded, first allocations made) and at the
end it reads, for the whole process tree (the process, its engine and voice detector
workers): PSS and RSS from /proc/PID/smaps_rollup, open file descriptors, threads, and the
capture streams left open on the sound server. Every dictation must deliver text.
"""
import os, socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from virtual_desktop import TARGET, LIBRIVOX, VirtualDesktop, Dictate, process_tree  # noqa: E402

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
APP = os.environ.get("UTTER_APP_BIN", os.path.join(TARGET, "debug", "utter-app"))
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
COUNT = int(ARGS[0]) if ARGS else 500
WITH_APP = "--app" in sys.argv
MODELS = os.environ.get("UTTER_MODELS_DIR") or os.path.join(
    os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "utter", "models")
WARM = 20
HOTKEY = "ctrl+shift+F9"


def rollup(pid, field):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def snapshot(desktop, pid):
    pids = process_tree(pid)
    names = {}
    for p in pids:
        with open(f"/proc/{p}/comm") as f:
            names[p] = f.read().strip()
    outputs = subprocess.run(["pactl", "list", "source-outputs"], env=desktop.env, capture_output=True,
                             text=True).stdout
    per_process = {names[p]: (len(os.listdir(f"/proc/{p}/fd")), len(os.listdir(f"/proc/{p}/task")),
                              round(rollup(p, "Pss"))) for p in pids}
    from collections import Counter
    thread_names = Counter()
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/comm") as f:
            thread_names[f.read().strip()] += 1
    return {
        "main process's threads": ", ".join(f"{n} {c}" for n, c in thread_names.most_common()),
        "processes": ", ".join(f"{n} {f} fds {t} threads {m} MB" for n, (f, t, m) in sorted(per_process.items())),
        "PSS MB": sum(rollup(p, "Pss") for p in pids),
        "RSS MB": sum(rollup(p, "Rss") for p in pids),
        "open files": sum(len(os.listdir(f"/proc/{p}/fd")) for p in pids),
        "threads": sum(len(os.listdir(f"/proc/{p}/task")) for p in pids),
        "capture streams": outputs.count(f'application.process.id = "{pid}"'),
    }


def ptt(path, command):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        s.sendall(f"{command}\n".encode())
        assert s.recv(64).startswith(b"ok"), command


class App:
    """The desktop app started --hidden, its text to the clipboard; a dictation is done when
    History has one more row."""

    def __init__(self, desktop, socket_path):
        import json
        dirs = desktop.path("app")
        os.makedirs(f"{dirs}/config")
        with open(f"{dirs}/config/settings.json", "w") as f:
            json.dump({"version": 1, "output": "clipboard"}, f)
        env = dict(desktop.env, UTTER_CONFIG_DIR=f"{dirs}/config", UTTER_DATA_DIR=f"{dirs}/data",
                   UTTER_CACHE_DIR=f"{dirs}/cache", XDG_CONFIG_HOME=f"{dirs}/xdg-config",
                   XDG_DATA_HOME=f"{dirs}/xdg-data", UTTER_MODELS_DIR=MODELS, UTTER_UPDATE_CHECK="0",
                   UTTER_PTT_SOCKET=socket_path, RUST_LOG="info")
        env.pop("UTTER_ENGINE_THREADS", None)
        self.history = f"{dirs}/data/history.sqlite3"
        log = desktop.path("app.log")
        self.p = desktop.spawn([APP, "--hidden"], env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while "dictation ready" not in open(log).read():
            assert time.time() < deadline and self.p.poll() is None, open(log).read()[-2000:]
            time.sleep(0.2)

    def dictations(self):
        import sqlite3
        if not os.path.exists(self.history):
            return 0
        with sqlite3.connect(f"file:{self.history}?mode=ro", uri=True) as db:
            return db.execute("select count(*) from entries").fetchone()[0]

    def last_text(self):
        import sqlite3
        with sqlite3.connect(f"file:{self.history}?mode=ro", uri=True) as db:
            return db.execute("select text from entries order by id desc limit 1").fetchone()[0]


def main():
    desktop = VirtualDesktop(":" + str(150 + os.getpid() % 100), "utter-soak-")
    try:
        clip = desktop.path("speech.wav")
        source = os.path.join(LIBRIVOX, sorted(f for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))[0])
        desktop.run(["sox", source, clip, "trim", "0", "1.2"])
        socket_path = os.path.join(desktop.runtime, HOTKEY + ".sock")
        if WITH_APP:
            dictate, binary = App(desktop, socket_path), APP
        else:
            dictate, binary = Dictate(desktop, UTTER, HOTKEY, []), UTTER
        rows, empty, started = [], 0, time.time()
        for i in range(1, COUNT + 1):
            ptt(socket_path, "press")
            if not WITH_APP:
                dictate.wait("recording_started", 10)
            desktop.run(["paplay", "--latency-msec=50", "--device=vmic_sink", clip])
            ptt(socket_path, "release")
            if WITH_APP:
                deadline = time.time() + 60
                while dictate.dictations() < i:
                    assert time.time() < deadline, f"dictation {i} never reached History"
                    time.sleep(0.05)
                text = dictate.last_text()
            else:
                delivered, _ = dictate.wait("text_delivered", 60)
                text = delivered.get("text", "")
            if not text.strip():
                empty += 1
            if i in (WARM, COUNT // 2, COUNT):
                time.sleep(1)
                rows.append((i, snapshot(desktop, dictate.p.pid)))
                print(f"after {i}: {rows[-1][1]}", flush=True)
        # What a dictation leaves for a while (the app hides its overlay and destroys it after 60 s)
        # must be gone after a quiet minute and a half.
        time.sleep(90)
        rows.append((f"{COUNT}, then 90 s idle", snapshot(desktop, dictate.p.pid)))
        print(f"after {rows[-1][0]}: {rows[-1][1]}", flush=True)
        print(f"\n`{binary}`, default settings, {COUNT} dictations of 1.2 s in {time.time() - started:.0f} s; "
              f"{empty} delivered no text\n")
        keys = [k for k in rows[0][1] if k not in ("processes", "main process's threads")]
        print("| after | " + " | ".join(keys) + " |")
        print("|---" * (len(keys) + 1) + "|")
        for i, s in rows:
            print(f"| {i} | " + " | ".join(f"{s[k]:.1f}" if isinstance(s[k], float) else str(s[k]) for k in keys) + " |")
        print(f"\nprocesses: {rows[-1][1]['processes']}")
        threads_key = "main process's threads"
        print(f"the main process's threads: {rows[-1][1][threads_key]}")
        dictate.p.kill()
    finally:
        desktop.close()


if __name__ == "__main__":
    main()
