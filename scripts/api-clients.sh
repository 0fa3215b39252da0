#!/usr/bin/env bash
# The official clients that the local server's tests drive (issue 43): the
# `openai`, `wyoming` and `mcp` PyPI packages, pinned, in a virtualenv under
# ~/.cache/utter, their wheels kept in ~/.cache/utter/wheels/api so a rerun
# needs no network; and the `openai` npm package in ~/.cache/utter/api-npm
# (not the project's node_modules: only a test uses it). Prints the venv's python.
set -euo pipefail
cache="$HOME/.cache/utter"
venv="$cache/api-venv"
wheels="$cache/wheels/api"
packages=(openai==3.51.0 mcp==2.3.0 wyoming==1.10.2)
npm_dir="$cache/api-npm"
npm_openai=7.60.0
if [[ "$(node -p "require('$npm_dir/node_modules/openai/package.json').version" 2>/dev/null)" != "$npm_openai" ]]; then
  echo "==> installing openai@$npm_openai from npm into $npm_dir" >&2
  mkdir -p "$npm_dir"
  [[ -f "$npm_dir/package.json" ]] || echo '{"private": true}' >"$npm_dir/package.json"
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "openai@$npm_openai" >&2
fi
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
