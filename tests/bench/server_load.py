"""Benchmark (not a test), issue 43: `utter serve` under 1, 2 and 4 concurrent
clients of the official `openai` SDK, each sending the same 24.7 s of real
speech (the five LibriVox clips joined) again and again for a fixed time:
throughput (seconds of audio per second), p50/p95 request latency, errors,
and the server's process tree memory (RSS, workers included), idle and peak;
then the first streamed delta's time after the upload.

    cargo build -p utter-cli
    bash scripts/api-clients.sh                      # the openai SDK's venv
    flock -x /tmp/utter-cpu.lock ~/.cache/utter/api-venv/bin/python tests/bench/server_load.py [SECONDS_PER_STEP]
"""
import atexit, os, shutil, socket, statistics, subprocess, sys, tempfile, threading, time
import urllib.request
import openai

U = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/utter/target")), "debug", "utter")
STEP_S = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
tmp = tempfile.mkdtemp(prefix="utter-serve-bench-")
atexit.register(shutil.rmtree, tmp, True)
clips = sorted(f"/usr/share/pocketsphinx/test/data/librivox/{f}" for f in os.listdir("/usr/share/pocketsphinx/test/data/librivox") if f.endswith(".wav"))
audio = tmp + "/speech.wav"
subprocess.run(["sox", *clips, audio], check=True)
audio_s = float(subprocess.run(["soxi", "-D", audio], capture_output=True, text=True).stdout)
data = open(audio, "rb").read()


def tree(pid):
    """pid and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        # Children are listed per thread: the engine's supervisor thread starts the worker.
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            tasks = []
        for t in tasks:
            try:
                todo += [int(k) for k in open(f"/proc/{p}/task/{t}/children").read().split()]
            except OSError:
                pass
    return out


def rss_mb(pid):
    total = 0
    for p in tree(pid):
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(model_workers):
    port = free_port()
    proc = subprocess.Popen([U, "serve", "--port", str(port), "--workers", str(model_workers), "--queue", "16"],
                            stderr=subprocess.DEVNULL, env=dict(os.environ, TMPDIR=tmp))
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/health").status == 200:
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not come up")


def load(base_url, model, clients, seconds, pid):
    latencies, errors, peak = [], [], [0.0]
    stop = time.time() + seconds
    lock = threading.Lock()

    def client():
        c = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=0, timeout=600)
        while time.time() < stop:
            t0 = time.perf_counter()
            try:
                c.audio.transcriptions.create(model=model, file=("speech.wav", data))
                with lock:
                    latencies.append(time.perf_counter() - t0)
            except Exception as e:  # counted, not fatal: the figure says how many
                with lock:
                    errors.append(repr(e))

    def sampler():
        while time.time() < stop + 1:
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.2)

    threads = [threading.Thread(target=client) for _ in range(clients)] + [threading.Thread(target=sampler)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    return len(lat) * audio_s / wall, statistics.median(lat) if lat else float("nan"), p(0.95), len(lat), len(errors), peak[0]


def first_delta(base_url, model):
    c = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=0)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for event in c.audio.transcriptions.create(model=model, file=("speech.wav", data), stream=True):
            if event.type == "transcript.text.delta":
                times.append(time.perf_counter() - t0)
                break
    return statistics.median(times)


print(f"audio: {audio_s:.1f} s per request; {STEP_S:.0f} s per step\n")
print("| model | workers | clients | throughput (audio s/s) | p50 | p95 | requests | errors | peak RSS (tree) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
idle = {}
deltas = {}
for model, workers in [("whisper-tiny.en", 1), ("whisper-tiny.en", 2), ("whisper-base", 1)]:
    proc, base_url = start(workers)
    try:
        # Warm: the model loaded for this id, one request through.
        openai.OpenAI(base_url=base_url, api_key="bench").audio.transcriptions.create(model=model, file=("speech.wav", data))
        time.sleep(1)
        idle[(model, workers)] = rss_mb(proc.pid)
        for clients in [1, 2, 4]:
            thr, p50, p95, n, errs, peak = load(base_url, model, clients, STEP_S, proc.pid)
            print(f"| {model} | {workers} | {clients} | {thr:.1f} | {p50:.2f} s | {p95:.2f} s | {n} | {errs} | {peak:.0f} MB |", flush=True)
        if workers == 1:
            deltas[model] = first_delta(base_url, model)
    finally:
        proc.terminate()
        proc.wait()
print()
for (model, workers), mb in idle.items():
    print(f"idle after one request: {model}, {workers} worker(s): {mb:.0f} MB (tree RSS)")
for model, s in deltas.items():
    print(f"first streamed delta after the request was sent ({model}, 1 client, median of 3): {s:.2f} s")
left = [f for f in os.listdir(tmp) if f.startswith("utter-upload-")]
print(f"uploads left in the server's temporary folder: {len(left)}")
