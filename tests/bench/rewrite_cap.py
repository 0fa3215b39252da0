"""Benchmark (not a test), issue 40: the AI rewrite against a real llama.cpp
server (PyPI xllamacpp, SmolLM2-135M-Instruct; `bash scripts/local-llm.sh`
installs both), through `utter rewrite`. For each LibriVox transcript as a
dictation:

- with a 60 s budget: what Utter got back, the token cap the server was
  given (its slot's n_predict), the tokens it generated, the wall time;
- with the default 2 s budget and with 0.3 s (shorter than most answers
  take here): when `utter rewrite` returned, when the
  server's slot stopped generating, and the tokens it generated.

    cargo build -p utter-cli
    flock -x /tmp/utter-cpu.lock python3 tests/bench/rewrite_cap.py
"""
import json, os, socket, subprocess, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization import UTTER as BUILT  # noqa: E402

UTTER = os.environ.get("UTTER_BIN", BUILT)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = os.path.expanduser("~/.cache/utter/llm-venv/bin/python")
LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox/transcription"


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def predicted(port):
    for line in get(port, "/metrics").splitlines():
        if line.startswith("llamacpp:tokens_predicted_total "):
            return float(line.split()[1])
    raise SystemExit("no tokens_predicted_total in /metrics")


def slot(port):
    return json.loads(get(port, "/slots"))[0]


def rewrite(port, text, budget_ms):
    started = time.monotonic()
    run = subprocess.run([UTTER, "rewrite", "--provider", "llama-cpp", "--base-url", f"http://127.0.0.1:{port}/v1",
                          "--model", "smollm2", "--budget-ms", str(budget_ms)],
                         input=text, capture_output=True, text=True)
    returned = time.monotonic() - started
    while slot(port)["is_processing"]:
        time.sleep(0.02)
    idle = time.monotonic() - started
    outcome = "rewritten" if run.returncode == 0 else run.stderr.strip().splitlines()[-1][:70]
    return returned, idle, outcome


def main():
    if not os.path.exists(PYTHON):
        raise SystemExit("run `bash scripts/local-llm.sh` first")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([PYTHON, os.path.join(ROOT, "tests/llm/serve.py"), str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                get(port, "/health")
                break
            except OSError:
                time.sleep(0.1)
        texts = [line.rsplit(" (", 1)[0].replace("<s>", "").replace("</s>", "").strip()
                 for line in open(LIBRIVOX)]
        print("| input chars | budget | outcome | cap (n_predict) | tokens generated | returned | server idle |")
        print("|---:|---:|---|---:|---:|---:|---:|")
        for text in texts:
            for budget in (60_000, 2_000, 300):
                before = predicted(port)
                returned, idle, outcome = rewrite(port, text, budget)
                cap = slot(port)["params"]["n_predict"]
                made = predicted(port) - before
                print(f"| {len(text)} | {budget / 1000:g} s | {outcome} | {cap} | {made:.0f} | {returned:.2f} s | {idle:.2f} s |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
