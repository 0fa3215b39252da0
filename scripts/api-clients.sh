#!/usr/bin/env bash
# The official clients that the local server's tests drive (issue 43): the
# `openai`, `wyoming` and `mcp` PyPI packages, pinned, in a virtualenv under
# ~/.cache/utter, their wheels kept in ~/.cache/utter/wheels/api so a rerun
# needs no network. Prints the venv's python.
set -euo pipefail
cache="$HOME/.cache/utter"
venv="$cache/api-venv"
wheels="$cache/wheels/api"
packages=(openai==3.51.0 mcp==2.3.0 wyoming==1.10.2)
stamp="$venv/.installed"
if [[ -x "$venv/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "${packages[*]}" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
mkdir -p "$wheels"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
  --find-links "$wheels" "${packages[@]}" >&2 2>/dev/null; then
  echo "==> downloading ${packages[*]} from PyPI into $wheels" >&2
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check -d "$wheels" "${packages[@]}" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    --find-links "$wheels" "${packages[@]}" >&2
fi
echo "${packages[*]}" >"$stamp"
echo "$venv/bin/python"
