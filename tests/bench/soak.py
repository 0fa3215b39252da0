"""Many dictations in a row: does anything grow? (issue 41)

    cargo build -p utter-cli
    flock -x /tmp/utter-cpu.lock python3 tests/bench/soak.py [DICTATIONS]   # default 500

The real `utter dictate` (UTTER_BIN, default the debug build) with default settings on the
benchmarks' virtual desktop (Xvfb + a PulseAudio virtual microphone), pressed and released
through its push-to-talk socket around 1.2 s of LibriVox speech played into the microphone,
DICTATIONS times. After the first 20 (warm: model loaded, first allocations made) and at the
end it reads, for the whole process tree (the process, its engine and voice detector
workers): PSS and RSS from /proc/PID/smaps_rollup, open file descriptors, threads, and the
capture streams left open on the sound server. Every dictation must deliver text.
"""
import os, socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(__file__))
from virtual_desktop import TARGET, LIBRIVOX, VirtualDesktop, Dictate  # noqa: E402

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 500
WARM = 20
HOTKEY = "ctrl+shift+F9"


def tree(pid):
    pids, frontier = set(), [pid]
    while frontier:
        pids.update(frontier)
        children = []
        for p in frontier:
            # Each thread's own children: the workers are spawned off the main thread.
            for task in os.listdir(f"/proc/{p}/task") if os.path.exists(f"/proc/{p}/task") else []:
                try:
                    with open(f"/proc/{p}/task/{task}/children") as f:
                        children += [int(c) for c in f.read().split()]
                except FileNotFoundError:
                    pass
        frontier = [c for c in children if c not in pids]
    return sorted(pids)


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
    pids = tree(pid)
    names = {}
    for p in pids:
        with open(f"/proc/{p}/comm") as f:
            names[p] = f.read().strip()
    outputs = subprocess.run(["pactl", "list", "source-outputs"], env=desktop.env, capture_output=True,
                             text=True).stdout
    return {
        "processes": ", ".join(sorted(names.values())),
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


def main():
    desktop = VirtualDesktop(":" + str(150 + os.getpid() % 100), "utter-soak-")
    try:
        clip = desktop.path("speech.wav")
        source = os.path.join(LIBRIVOX, sorted(f for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))[0])
        desktop.run(["sox", source, clip, "trim", "0", "1.2"])
        dictate = Dictate(desktop, UTTER, HOTKEY, [])
        socket_path = os.path.join(desktop.runtime, HOTKEY + ".sock")
        rows, empty, started = [], 0, time.time()
        for i in range(1, COUNT + 1):
            ptt(socket_path, "press")
            dictate.wait("recording_started", 10)
            desktop.run(["paplay", "--latency-msec=50", "--device=vmic_sink", clip])
            ptt(socket_path, "release")
            delivered, _ = dictate.wait("text_delivered", 60)
            if not delivered.get("text", "").strip():
                empty += 1
            if i in (WARM, COUNT // 2, COUNT):
                time.sleep(1)
                rows.append((i, snapshot(desktop, dictate.p.pid)))
                print(f"after {i}: {rows[-1][1]}", flush=True)
        print(f"\n`{UTTER}`, default settings, {COUNT} dictations of 1.2 s in {time.time() - started:.0f} s; "
              f"{empty} delivered no text\n")
        keys = [k for k in rows[0][1] if k != "processes"]
        print("| after | " + " | ".join(keys) + " |")
        print("|---" * (len(keys) + 1) + "|")
        for i, s in rows:
            print(f"| {i} | " + " | ".join(f"{s[k]:.1f}" if isinstance(s[k], float) else str(s[k]) for k in keys) + " |")
        print(f"\nprocesses: {rows[-1][1]['processes']}")
        dictate.p.kill()
    finally:
        desktop.close()


if __name__ == "__main__":
    main()
