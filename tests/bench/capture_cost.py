#!/usr/bin/env python3
"""Benchmark (not a test): what `utter dictate` costs the CPU, per thread and
for its whole process tree (the process, its engine and VAD workers), idle
and while dictating, with each microphone mode.

    python3 tests/bench/capture_cost.py [IDLE_SECONDS] [SPEECH_SECONDS]
        (needs the `npm test` setup; UTTER_BIN picks the binary, debug by default)

Idle: ticks (1/100 s of CPU) and wake-ups (voluntary + involuntary context
switches) of each thread over IDLE_SECONDS after `ready`, three times, modes
interleaved. Dictating: one push-to-talk dictation of about SPEECH_SECONDS of
LibriVox speech per mode; each thread's CPU from the press to the text, and
the tree's. Each mode runs through cpal's PulseAudio host and through ALSA
(`UTTER_SOUND_SYSTEM`). Prints Markdown for docs/benchmarks.md.
"""
import os, sys, time

from virtual_desktop import TARGET, Dictate, VirtualDesktop, paced_speech, process_tree

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
TCK = os.sysconf("SC_CLK_TCK")


def _stat(path):
    try:
        with open(path) as f:
            head, tail = f.read().rsplit(")", 1)
        return head.split("(", 1)[1], tail.split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _switches(path):
    try:
        with open(path) as f:
            return sum(int(l.split()[1]) for l in f if "ctxt_switches" in l)
    except (FileNotFoundError, ProcessLookupError):
        return 0


def threads(pid):
    """{(process, thread name, tid): (ticks, context switches)} over the tree."""
    snap = {}
    for proc in process_tree(pid):
        role = "main" if proc == pid else "worker"
        try:
            with open(f"/proc/{proc}/cmdline") as f:
                cmd = f.read()
            role = "engine worker" if "--utter-engine-worker" in cmd else "VAD worker" if "--utter-vad-worker" in cmd else role
            tids = os.listdir(f"/proc/{proc}/task")
        except FileNotFoundError:
            continue
        live = 0
        for tid in tids:
            s = _stat(f"/proc/{proc}/task/{tid}/stat")
            if s:
                ticks = int(s[1][11]) + int(s[1][12])
                live += ticks
                snap[(role, s[0], int(tid))] = (ticks, _switches(f"/proc/{proc}/task/{tid}/status"))
        # Threads that ended (the microphone's, closed after a dictation)
        # leave their time in the process's total only.
        if (s := _stat(f"/proc/{proc}/stat")):
            snap[(role, "(threads that ended)", -proc)] = (int(s[1][11]) + int(s[1][12]) - live, 0)
    return snap


def diff(a, b):
    """Per (process, thread name): ticks and switches between snapshots a and b."""
    out = {}
    for key, (t, w) in b.items():
        t0, w0 = a.get(key, (0, 0))
        role, name, _ = key
        ot, ow = out.get((role, name), (0, 0))
        out[(role, name)] = (ot + t - t0, ow + w - w0)
    return out


def main():
    idle_s = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    speech_s = float(sys.argv[2]) if len(sys.argv) > 2 else 25
    desktop = VirtualDesktop(":94", "utter-capture-cost-")
    try:
        # Each microphone mode through each sound system: cpal's native
        # PulseAudio host (the default where a server answers) and ALSA
        # through its pulse plugin (the default until issue 41).
        modes, keys = {}, iter(["F5", "F6", "F7", "F8"])
        for host in ("PulseAudio", "ALSA"):
            for mic in ("ready", "on-press"):
                modes[f"{mic}, {host}"] = Dictate(desktop, UTTER, f"ctrl+shift+{next(keys)}", ["--mic", mic],
                                                  env={"UTTER_SOUND_SYSTEM": host})
        time.sleep(3)  # workers settle
        print(f"binary: {UTTER}\n")
        print(f"### Idle, {idle_s:.0f} s after `ready`, three times, interleaved\n")
        print("| mode | run | tree: % of a core | main process: % | wake-ups/s (main process) | busiest threads (ticks) |")
        print("|---|---|---:|---:|---:|---|")
        for run in range(3):
            for name, d in (modes.items() if run % 2 == 0 else reversed(list(modes.items()))):
                a = threads(d.p.pid)
                time.sleep(idle_s)
                per = diff(a, threads(d.p.pid))
                total = sum(t for t, _ in per.values())
                main_t = sum(t for (r, _), (t, _) in per.items() if r == "main")
                wakes = sum(w for (r, _), (_, w) in per.items() if r == "main")
                top = sorted(((t, f"{r}/{n}") for (r, n), (t, _) in per.items() if t), reverse=True)[:4]
                print(f"| {name} | {run + 1} | {100 * total / TCK / idle_s:.2f} | {100 * main_t / TCK / idle_s:.2f} "
                      f"| {wakes / idle_s:.0f} | {', '.join(f'{n} {t}' for t, n in top) or '—'} |")
        speech, secs = paced_speech(desktop, speech_s)
        print(f"\n### One push-to-talk dictation of {secs:.0f} s of speech, press to text\n")
        for name, d in modes.items():
            a, t0 = threads(d.p.pid), time.time()
            _, delivered, _, _ = d.dictate(speech)
            wall = time.time() - t0
            per = diff(a, threads(d.p.pid))
            total = sum(t for t, _ in per.values())
            print(f"`--mic {name}`: {wall:.1f} s press→text, tree {total / TCK:.2f} CPU s "
                  f"({total / TCK / secs:.3f} CPU s per s of speech); {len(delivered['text'].split())} words\n")
            print("| process | thread | CPU s | % of a core | wake-ups/s |")
            print("|---|---|---:|---:|---:|")
            for (r, n), (t, w) in sorted(per.items(), key=lambda kv: -kv[1][0]):
                if t or w > wall:
                    print(f"| {r} | {n} | {t / TCK:.2f} | {100 * t / TCK / wall:.1f} | {w / wall:.0f} |")
            print()
    finally:
        desktop.close()


if __name__ == "__main__":
    main()
