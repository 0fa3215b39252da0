#!/usr/bin/env python3
"""Benchmark (not a test): what a word said at the instant of the key press
loses, with the microphone opened at the press (`--mic on-press`) and kept
ready (`--mic ready`, the default).

    python3 tests/bench/first_word.py      (needs the `npm test` setup)

1. Opening latency: `utter dictate --mic on-press` logs, at each press, how
   long after it began opening the device its first sample was captured
   (`first_sample_ms`), at each of its presses.
2. The first word: each LibriVox clip, trimmed of its leading silence, is
   played so that its first sound reaches the virtual microphone at the
   instant of the press (the delay from starting the player to the sound
   arriving is calibrated first, from a recording of the ready mode, whose
   300 ms pre-roll puts the press at a known place). Counted: dictations
   whose first word is the clip's first word, per mode, modes interleaved.
Prints Markdown for docs/benchmarks.md.
"""
import os, re, socket, subprocess, sys, tempfile, time, wave, array

from virtual_desktop import TARGET, Dictate, VirtualDesktop

UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
ROUNDS = int(os.environ.get("UTTER_BENCH_ROUNDS", "10"))
PRE_ROLL_MS = 300.0


def words(text):
    text = re.sub(r"[^\w\s']", " ", text.lower().replace("<s>", "").replace("</s>", ""))
    return [w.strip("'") for w in text.split() if w.strip("'")]


def clips():
    """(wav, its words) from the LibriVox `transcription` listing."""
    out = []
    with open(os.path.join(LIBRIVOX, "transcription")) as listing:
        for line in listing:
            text, _, clip_id = line.strip().rpartition(" (")
            out.append((os.path.join(LIBRIVOX, clip_id.rstrip(")") + ".wav"), words(text)))
    return sorted(out)


def onset_ms(path):
    with wave.open(path) as w:
        pcm = array.array("h", w.readframes(w.getnframes()))
    for i in range(0, len(pcm), 160):
        if max((abs(s) for s in pcm[i:i + 160]), default=0) > 1000:
            return i / 16.0
    return 0.0


def first_word_of_file(desktop, wav, lead_in_ms):
    """The first word `utter transcribe` hears in `wav` with `lead_in_ms` of
    silence put before it: the same audio, with and without the leading
    silence a microphone opened at the press does not record."""
    src = wav
    if lead_in_ms:
        src = desktop.path(f"lead{lead_in_ms}-{os.path.basename(wav)}")
        desktop.run(["sox", wav, src, "pad", f"{lead_in_ms / 1000:.3f}", "0"])
    out = subprocess.run([UTTER, "transcribe", src, "--output", "-"], env=desktop.env,
                         capture_output=True, text=True).stdout
    got = words(out)
    return got[0] if got else ""


def ptt(desktop, d, command):
    """`utter ptt COMMAND` without starting a process: the press reaches the
    service within a millisecond or two (an xdotool key event takes tens to
    hundreds of ms on a busy machine, which put the speech that long before
    the press)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(os.path.join(desktop.runtime, d.hotkey + ".sock"))
        s.sendall(command.encode() + b"\n")
        assert s.makefile().readline().strip() == "ok"


def take(desktop, d, wav, delay_s):
    player = subprocess.Popen(["paplay", "--latency-msec=20", "--device=vmic_sink", wav], env=desktop.env)
    time.sleep(delay_s)
    ptt(desktop, d, "press")
    started, _ = d.wait("recording_started", 10)
    player.wait()
    ptt(desktop, d, "release")
    delivered, _ = d.wait("text_delivered", 120)
    return started, delivered


def main():
    desktop = VirtualDesktop(":93", "utter-first-word-")
    try:
        trimmed = []
        for i, (wav, ref) in enumerate(clips()):
            out = desktop.path(f"trim{i}.wav")
            desktop.run(["sox", wav, out, "silence", "1", "0.02", "1%"])
            trimmed.append((out, ref))

        # 1. Opening latency, from the on-press mode's log.
        log = open(desktop.path("on-press.log"), "w")
        on_press = Dictate(desktop, UTTER, "ctrl+shift+F7", ["--mic", "on-press"],
                           env={"UTTER_LOG": "utter_core::audio=info", "NO_COLOR": "1"}, stderr=log)
        ready = Dictate(desktop, UTTER, "ctrl+shift+F8", ["--mic", "ready"])
        time.sleep(1)
        # Calibrate the player's delay on the ready mode.
        started, _ = take(desktop, ready, trimmed[0][0], 0.0)
        latency = max(0.0, onset_ms(started["audio_path"]) - PRE_ROLL_MS) / 1000.0

        results = {"on-press": [], "ready": []}
        recorded = []  # the on-press recordings, for where the word is lost
        report = []
        for r in range(ROUNDS):
            wav, ref = trimmed[r % len(trimmed)]
            order = [("on-press", on_press), ("ready", ready)]
            if r % 2:
                order.reverse()
            for name, d in order:
                started, delivered = take(desktop, d, wav, latency)
                got = words(delivered["text"])
                ok = bool(got) and got[0] == ref[0]
                results[name].append(ok)
                if name == "on-press":
                    recorded.append((started["audio_path"], ref[0]))
                report.append(f"{name:8} round {r}: {'ok ' if ok else 'LOST'} {ref[0]!r} → {' '.join(got[:4])!r}")
        log.close()
        logged = open(desktop.path("on-press.log")).read()
        firsts = [float(m) for m in re.findall(r'first_sample_ms\S*?=\S*?"?([\d.]+)', logged)]
        latencies = sorted(float(m) for m in re.findall(r'capture_latency_ms\S*?=\S*?"?([\d.]+)', logged))
        print("\n".join(report), file=sys.stderr)
        print(f"player → microphone delay (calibrated): {latency * 1000:.0f} ms\n")
        if firsts:
            firsts.sort()
            print(f"| opening (`--mic on-press`), {len(firsts)} presses | median | max |")
            print("|---|---|---|")
            print(f"| press → first captured sample | {firsts[len(firsts) // 2]:.0f} ms | {firsts[-1]:.0f} ms |")
        if latencies:
            print(f"| the host's capture latency (cpal's timestamps) | {latencies[len(latencies) // 2]:.0f} ms | {latencies[-1]:.0f} ms |")
        print()
        print("| mode | first word right, speech starting at the press |")
        print("|---|---|")
        for name, oks in results.items():
            print(f"| `--mic {name}` | {sum(oks)} / {len(oks)} |")
        # 3. Where the word is lost: is its sound in the recording (the
        # device's start), and does the engine hear it there as a file, with
        # and without 300 ms of silence before it (the leading context)?
        print("\n| on-press recording | first sound at | file as recorded | with 300 ms of silence before |")
        print("|---|---:|---|---|")
        for wav, first in recorded:
            raw, padded = first_word_of_file(desktop, wav, 0), first_word_of_file(desktop, wav, 300)
            print(f"| {os.path.basename(wav)} ({first!r}) | {onset_ms(wav):.0f} ms "
                  f"| {'ok' if raw == first else 'LOST ' + repr(raw)} | {'ok' if padded == first else 'LOST ' + repr(padded)} |")
    finally:
        desktop.close()


if __name__ == "__main__":
    main()
