#!/usr/bin/env bash
# `npm test`: set everything up, then run lints and the whole test suite:
# Rust (fmt, clippy, unit + real-model + desktop tests), the UI (lint, unit,
# page tests in headless Chromium) and the real app end to end (WebDriver).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
export PATH="$HOME/.cargo/bin:$PATH"
# The engine's default thread count follows the machine's load, which the suite
# itself makes (tests run in parallel): fixed here, so a test's text does not
# depend on what ran beside it (1 and 2 threads can differ by a word). The
# load-fitting's own tests remove it.
export UTTER_ENGINE_THREADS="${UTTER_ENGINE_THREADS:-$(nproc)}"
# Incremental caches grow with every edit and are never pruned by cargo (39 GB once filled the
# disk): past 12 GB they start afresh (a few minutes more of building, once).
incremental="$CARGO_TARGET_DIR/debug/incremental"
if [ -d "$incremental" ] && [ "$(du -s -BG "$incremental" | cut -f1 | tr -d G)" -gt 12 ]; then
  echo "==> $incremental is over 12 GB: removing it"
  rm -rf "$incremental"
fi
for component in rustfmt clippy; do
  rustup component list --installed 2>/dev/null | grep -q "^$component" || rustup component add "$component"
done
echo "==> cargo fmt --check"
cargo fmt --all -- --check
echo "==> cargo clippy"
cargo clippy --locked --workspace --all-targets -- -D warnings
echo "==> UI lint"
npm run --silent ui:lint
echo "==> UI unit tests"
npm run --silent ui:test
echo "==> README and docs (figures, links)"
node --test tests/docs/readme.test.mjs
echo "==> UI page tests (headless Chromium)"
npm run --silent ui:pages
echo "==> cargo test"
# ts-rs's export tests write the UI's types afresh (a removed type's file must go too). A run
# that fails part-way puts the checked-in files back: it must not leave them deleted for the
# next `git commit -a` to take.
rm -rf ui/src/lib/generated
trap 'git checkout -q -- ui/src/lib/generated 2>/dev/null || true' ERR
cargo test --locked --workspace
trap - ERR
if [ "$(id -u)" = 0 ]; then
  # The tests marked #[ignore = "needs root"] (a tmpfs mount); CI runs as root.
  echo "==> cargo test: the desktop tests that need root"
  cargo test --locked -p utter-cli --test dictate_desktop -- --ignored
fi
echo "==> the UI's generated types match the Rust types"
if [ -n "$(git status --porcelain -- ui/src/lib/generated)" ]; then
  git status --short -- ui/src/lib/generated
  echo "ui/src/lib/generated is stale: run \`cargo test -p utter-core -p utter-capture -p utter-app-core -p utter-engine -p utter-models -p utter-platform -p utter-ports -p utter-convert -p utter-postprocess -p utter-rewrite -p utter-server --lib export_bindings\`" \
    "(commands.ts: \`cargo test -p utter-app --test command_types\`) and commit it" >&2
  exit 1
fi
echo "==> end-to-end tests of the desktop app (Xvfb, PulseAudio, WebDriver, a D-Bus session with AT-SPI)"
# In a D-Bus session bus, as on a real desktop: GTK and WebKit then start the accessibility bus
# (at-spi2-core), which changed how the window came and went (issue 63).
dbus-run-session -- node --test --test-concurrency=1 tests/e2e/app.test.mjs
echo "==> the .deb: build, inspect, install, run, remove"
bash tests/package/deb.sh
echo "==> GitHub Actions workflows (actionlint)"
bash scripts/lint-workflows.sh
