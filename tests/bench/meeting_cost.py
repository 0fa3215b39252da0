#!/usr/bin/env python3
"""Benchmark (not a test): what a meeting costs. `utter meeting` records a
conversation played through a real PulseAudio server — Asterisk's Allison on
the default output (the others, through its monitor) and the LibriVox reader
into the virtual microphone (you), taking turns — for SECONDS, then stops.

    python3 tests/bench/meeting_cost.py [SECONDS]     (default 600; needs the `npm test` setup)

Reported, for docs/benchmarks.md: CPU per second of meeting of the whole
process tree (utter, its engine and voice-detector workers) while recording
with the live transcript and without it, the tree's memory (PSS) at the
start, middle and end and its peak, how far each live line came after the end
of its turn, the final pass: its time, and the diarization's per minute — and
how accurate the live lines are against the final transcript: word error rate
of each side (yours: the LibriVox reader's transcription; the others': the
Asterisk prompts' script) in the live lines and in the final transcript.
UTTER_BIN picks the binary (debug by default: the "optimized + debuginfo"
profile).
"""
import os, re, subprocess, sys, tempfile, threading, time, wave

from virtual_desktop import TARGET, VirtualDesktop, cpu_seconds

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
ALLISON = "/usr/share/asterisk/sounds/en_US_f_Allison"
RATE = 16000


def pcm(path):
    with wave.open(path) as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1
        return w.readframes(w.getnframes())


def prompt(tmp, name):
    out = os.path.join(tmp, name + ".wav")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "g722", "-i", f"{ALLISON}/{name}.g722",
                    "-ar", "16000", "-ac", "1", out], check=True)
    return pcm(out)


# What each voice says: the LibriVox clips' transcription (pocketsphinx
# testdata) and the prompts' script (core-sounds-en.txt of asterisk-core-sounds-en).
THEIR_SCRIPT = {
    "vm-nobodyavail": "Nobody is available to take your call at the moment.",
    "vm-intro": "Please leave your message after the tone. When done, hang up, or press the pound key.",
    "conf-onlyperson": "You are currently the only person in this conference.",
    "all-circuits-busy-now": "All circuits are busy now.",
    "vm-theperson": "The person at extension",
}
THEIRS = list(THEIR_SCRIPT)


def librivox_script():
    out = {}
    for line in open(os.path.join(LIBRIVOX, "transcription")):
        m = re.match(r"<s> (.*) </s> \((.*)\)", line.strip())
        if m:
            out[m[2] + ".wav"] = m[1]
    return out


def words(text):
    return re.sub(r"[^a-z0-9' ]", " ", text.lower().replace("-", " ")).split()


def wer(hyp, ref):
    """Word error rate of `hyp` against `ref` (lists of words), Levenshtein."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1] / max(1, len(ref))


def conversation(tmp, seconds):
    """Two tracks of `seconds` (16-bit mono bytes) and the turns: (start s, end s, who)."""
    theirs = [prompt(tmp, n) for n in THEIRS]
    script = librivox_script()
    mine_names = sorted(f for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))
    mine = [pcm(os.path.join(LIBRIVOX, f)) for f in mine_names]
    total = seconds * RATE * 2
    others, mic = bytearray(total), bytearray(total)
    turns, at, i = [], RATE, 0  # byte offsets; the first turn at 0.5 s
    while True:
        if i % 2 == 0:
            k = i // 2 % len(theirs)
            clip, track, who, said = theirs[k], others, "others", THEIR_SCRIPT[THEIRS[k]]
        else:
            k = i // 2 % len(mine)
            clip, track, who, said = mine[k], mic, "you", script[mine_names[k]]
        if at + len(clip) > total:
            break
        track[at:at + len(clip)] = clip
        turns.append((at / 2 / RATE, (at + len(clip)) / 2 / RATE, who, said))
        at += len(clip) + RATE  # half a second between turns
        i += 1
    paths = []
    for name, data in [("others", others), ("mic", mic)]:
        path = os.path.join(tmp, f"call-{name}.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(bytes(data))
        paths.append(path)
    return paths, turns


def pss_mb(pid):
    """PSS of `pid` and its descendants, MB."""
    kids = {pid}
    for _ in range(3):
        for p in os.listdir("/proc"):
            try:
                if p.isdigit() and int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]) in kids:
                    kids.add(int(p))
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass
    total = 0
    for p in kids:
        try:
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1024


def run(desk, tracks, turns, seconds, live):
    meetings = desk.path("meetings-live" if live else "meetings")
    final_md = desk.path("live.md" if live else "no-live.md")
    args = [UTTER, "meeting", "--meetings-dir", meetings, "-o", final_md] + ([] if live else ["--no-live"])
    p = desk.spawn(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []

    def read():
        for line in p.stderr:
            lines.append((time.monotonic(), line.rstrip()))
    threading.Thread(target=read, daemon=True).start()
    while not any("Ctrl+C stops" in l for _, l in lines):
        time.sleep(0.05)
    time.sleep(1)
    cpu0, t0 = cpu_seconds(p.pid), time.monotonic()
    players = [desk.spawn(["paplay", "--latency-msec=200", "--device=vspk", tracks[0]]),
               desk.spawn(["paplay", "--latency-msec=200", "--device=vmic_sink", tracks[1]])]
    played = time.monotonic()
    memory = []
    while any(pl.poll() is None for pl in players):
        memory.append(pss_mb(p.pid))
        time.sleep(5)
    time.sleep(2)
    cpu1, t1 = cpu_seconds(p.pid), time.monotonic()
    stopped = time.monotonic()
    p.send_signal(2)
    p.wait()
    out = {"cpu_per_s": (cpu1 - cpu0) / (t1 - t0), "memory": memory, "final_s": time.monotonic() - stopped}
    who_start = next((t for t, l in lines if "who spoke when" in l), None)
    others_start = next((t for t, l in lines if "Transcribing: the others" in l), None)
    if who_start and others_start:
        out["diarize_s"] = others_start - who_start
    delays = []
    for t, l in lines:
        m = re.match(r"\[(\d+):(\d\d):(\d\d)\] (You|Others): ", l)
        if not m or t > stopped:
            continue
        start = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
        # The turn this line is: the one starting nearest, by the recording's
        # clock (it started about a second before the playback).
        who = "you" if m[4] == "You" else "others"
        offset = played - (t0 - 1)
        near = min((tu for tu in turns if tu[2] == who), key=lambda tu: abs(tu[0] + offset - start))
        delays.append(t - (played + near[1]))
    out["delays"] = sorted(delays)
    out["lines"] = len(delays)
    # Accuracy: each side's words in time order, live and final, against what was said.
    said = {who: [w for tu in turns if tu[2] == who for w in words(tu[3])] for who in ("you", "others")}
    live_words = {"you": [], "others": []}
    for t, l in lines:
        m = re.match(r"\[\d+:\d\d:\d\d\] (You|Others): (.*)", l)
        if m and t <= stopped:
            live_words["you" if m[1] == "You" else "others"] += words(m[2])
    final_words = {"you": [], "others": []}
    for l in open(final_md, encoding="utf-8"):
        m = re.match(r"\*\*(.+?)\*\* \[[\d:]+\] (.*)", l.strip())
        if m:
            final_words["you" if m[1] == "You" else "others"] += words(m[2])
    out["wer"] = {kind: {who: wer(got[who], said[who]) for who in said}
                  for kind, got in [("live", live_words), ("final", final_words)]}
    return out


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    desk = VirtualDesktop(":93", "utter-meeting-bench-")
    try:
        tracks, turns = conversation(desk.tmp, seconds)
        print(f"{seconds} s conversation, {len(turns)} turns; `{os.path.basename(UTTER)} meeting`, whisper tiny.en (files default), this machine ({os.cpu_count()} cores)\n")
        with_live = run(desk, tracks, turns, seconds, live=True)
        without = run(desk, tracks, turns, seconds, live=False)
        print("| | CPU s per s of meeting (tree) | PSS start / middle / end / peak (MB) | final pass (s) | diarization (s per min of audio) |")
        print("|---|---|---|---|---|")
        for name, r in [("live transcript on", with_live), ("--no-live", without)]:
            mem = r["memory"] or [0]
            diar = r.get("diarize_s")
            per_min = f"{diar / (seconds / 60):.2f}" if diar else "–"
            print(f"| {name} | {r['cpu_per_s']:.3f} | {mem[0]:.0f} / {mem[len(mem)//2]:.0f} / {mem[-1]:.0f} / {max(mem):.0f} | "
                  f"{r['final_s']:.1f} | {per_min} |")
        print("\n| words wrong (WER) | you | the others |")
        print("|---|---|---|")
        for name, r, kind in [("live lines", with_live, "live"), ("final transcript (live on)", with_live, "final"),
                              ("final transcript (--no-live)", without, "final")]:
            w = r["wer"][kind]
            print(f"| {name} | {w['you'] * 100:.1f} % | {w['others'] * 100:.1f} % |")
        d = with_live["delays"]
        if d:
            print(f"\nLive lines: {with_live['lines']} of {len(turns)} turns; after the end of their turn: "
                  f"median {d[len(d)//2]:.2f} s, 90th percentile {d[int(len(d)*0.9)]:.2f} s, max {d[-1]:.2f} s")
    finally:
        desk.close()


if __name__ == "__main__":
    main()
