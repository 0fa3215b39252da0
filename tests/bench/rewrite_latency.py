#!/usr/bin/env python3
"""Benchmark (not a test): what the AI rewrite adds to release-to-text, on a
virtual desktop (Xvfb + PulseAudio virtual mic + xdotool) with real LibriVox
speech, against a loopback chat-completions server (streaming, like Ollama
or llama.cpp's server) that answers after a fixed delay.

    python3 tests/bench/rewrite_latency.py [ROUNDS]      (needs the `npm test` setup)

Three `utter dictate` run at once on their own hotkeys, takes interleaved:
no rewrite; rewrite with a model answering its first token after 150 ms and
the rest in 10 pieces 20 ms apart (~350 ms in all); the same model past a
1 s budget (first token after 3 s). Prints Markdown for docs/benchmarks.md:
release-to-text medians, the time to the first token and the whole answer
as the server measured them, and what the budget did.
"""
import json, os, statistics, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from virtual_desktop import TARGET, LIBRIVOX, Dictate, VirtualDesktop

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
UTTER = os.environ.get("UTTER_BIN", os.path.join(TARGET, "debug", "utter"))
FIRST_TOKEN_S, PIECES, PIECE_GAP_S = 0.150, 10, 0.020
SLOW_FIRST_TOKEN_S = 3.0
served = []  # (path, first token s, whole answer s)


def chunk(content):
    delta = json.dumps({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
                        "model": "loopback-model"})
    return f"data: {delta}\n\n".encode()


class Model(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        started = time.time()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        said = body["messages"][1]["content"]
        words = said.split()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(SLOW_FIRST_TOKEN_S if self.path.startswith("/slow") else FIRST_TOKEN_S)
        first = time.time() - started
        try:
            # The answer: the words it was sent back, in PIECES pieces.
            step = max(1, len(words) // PIECES)
            for i in range(0, len(words), step):
                self.wfile.write(chunk(" ".join(words[i:i + step]) + " "))
                self.wfile.flush()
                time.sleep(PIECE_GAP_S)
            self.wfile.write(b"data: [DONE]\n\n")
        except BrokenPipeError:
            pass  # the client gave up at its budget
        served.append((self.path, first, time.time() - started))


def main(desktop):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    rewrite = ["--rewrite", "clean-up", "--rewrite-provider", "llama-cpp", "--rewrite-model", "loopback-model"]
    runs = {
        "no rewrite": Dictate(desktop, UTTER, "ctrl+shift+space", []),
        "rewrite": Dictate(desktop, UTTER, "ctrl+alt+space",
                           rewrite + ["--rewrite-url", f"http://127.0.0.1:{port}/v1"]),
        "rewrite, model past the 1 s budget": Dictate(desktop, UTTER, "ctrl+shift+alt+space",
                           rewrite + ["--rewrite-url", f"http://127.0.0.1:{port}/slow/v1", "--rewrite-budget-ms", "1000"]),
    }
    clips = sorted(os.path.join(LIBRIVOX, f) for f in os.listdir(LIBRIVOX) if f.endswith(".wav"))
    latency = {name: [] for name in runs}
    kept = {name: 0 for name in runs}
    for r in range(ROUNDS):
        order = list(runs.items())
        order = order[r % len(order):] + order[:r % len(order)]
        for name, d in order:
            ms, delivered, _, _ = d.dictate(clips[r % len(clips)])
            latency[name].append(ms)
            if (delivered.get("rewrite") or {}).get("notice"):
                kept[name] += 1
        print(f"round {r + 1} done", file=sys.stderr)
    fast = [s for s in served if not s[0].startswith("/slow")]
    base = statistics.median(latency["no rewrite"])
    print("| dictation | release→text (median) | added | delivered as dictated |")
    print("|---|---:|---:|---:|")
    for name in runs:
        m = statistics.median(latency[name])
        print(f"| {name} | {m:.0f} ms | {m - base:+.0f} ms | {kept[name]}/{ROUNDS} |")
    print(f"\nThe loopback model (as it measured itself): first token {statistics.median(s[1] for s in fast) * 1000:.0f} ms, "
          f"whole answer {statistics.median(s[2] for s in fast) * 1000:.0f} ms (median of {len(fast)}).")
    server.shutdown()


desktop = VirtualDesktop(":94", "utter-bench-rewrite-")
try:
    main(desktop)
finally:
    desktop.close()
