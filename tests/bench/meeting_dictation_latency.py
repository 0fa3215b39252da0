#!/usr/bin/env python3
"""Benchmark (not a test), issue 44: does a meeting slow the user's own dictation?

A push-to-talk `utter dictate` (default settings and model, `--output stdout`)
dictates the same ~15 s of LibriVox speech, release to text, in three
conditions, interleaved dictation by dictation:

- no meeting running;
- `utter meeting` running with its live transcript, the other side of a call
  (Asterisk prompts, as meeting_cost.py builds them) playing to the default
  output the whole time, its engine worker at nice 10 as Utter starts it;
- the same meeting with that worker reniced to 0 (what nice 10 buys).

    python3 tests/bench/meeting_dictation_latency.py [ROUNDS]   (default 5; needs `npm test`'s setup)

UTTER_BIN picks the binary (debug by default). Prints a Markdown table.
"""
import os, signal, statistics, subprocess, sys, tempfile, time

from virtual_desktop import TARGET, Dictate, VirtualDesktop, paced_speech
from meeting_cost import conversation

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def engine_workers(pid):
    """The `--utter-engine-worker` children of `pid`."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = open(f"/proc/{p}/stat").read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = open(f"/proc/{p}/cmdline", "rb").read()
        except OSError:
            continue
        if ppid == pid and b"--utter-engine-worker" in cmd:
            out.append(int(p))
    return out


def nice_of(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[16])


def main():
    desk = VirtualDesktop(":93", "utter-meeting-latency-")
    meeting = player = None
    try:
        speech, seconds = paced_speech(desk, 15)
        dictate = Dictate(desk, UTTER, "ctrl+shift+space", [])
        (others, _mic), _turns = conversation(desk.tmp, 600)
        latencies = {"no meeting": [], "meeting, worker at nice 10": [], "meeting, worker reniced to 0": []}
        for _ in range(2):  # warm: the model loaded, the first run's buffers made
            dictate.dictate(speech)
        for r in range(ROUNDS):
            for name in latencies:
                if name == "no meeting":
                    if meeting:
                        for p in (meeting, player):
                            p.send_signal(signal.SIGKILL)
                            p.wait()
                        meeting = player = None
                    ms, *_ = dictate.dictate(speech)
                    latencies[name].append(ms)
                    continue
                if meeting is None:
                    meeting = desk.spawn([UTTER, "meeting", "--meetings-dir", desk.path(f"meetings-{r}"),
                                          "-o", desk.path(f"m{r}.md")],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
                    player = desk.spawn(["paplay", "--latency-msec=200", "--device=vspk", others])
                    deadline = time.time() + 60
                    while not engine_workers(meeting.pid) and time.time() < deadline:
                        time.sleep(0.2)
                    time.sleep(8)  # the live transcript under way
                workers = engine_workers(meeting.pid)
                want = 10 if "nice 10" in name else 0
                for w in workers:
                    subprocess.run(["renice", "-n", str(want), "-p", str(w)], stdout=subprocess.DEVNULL, check=True)
                assert workers and all(nice_of(w) == want for w in workers), (workers, want)
                ms, *_ = dictate.dictate(speech)
                latencies[name].append(ms)
            print(f"round {r + 1} done", file=sys.stderr)
        print(f"`utter dictate`, default settings, {seconds:.1f} s of speech, {ROUNDS} dictations each, "
              f"interleaved; {os.cpu_count()} cores\n")
        print("| condition | release→text median | min | max |")
        print("|---|---:|---:|---:|")
        for name, ms in latencies.items():
            print(f"| {name} | {statistics.median(ms):.0f} ms | {min(ms):.0f} ms | {max(ms):.0f} ms |")
    finally:
        for p in (meeting, player):
            if p:
                p.send_signal(signal.SIGKILL)
        desk.close()


if __name__ == "__main__":
    main()
