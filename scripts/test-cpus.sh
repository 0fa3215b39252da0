#!/usr/bin/env bash
# `npm run test:cpus`: the portable engine (`--features dynamic-backends`: one ggml CPU module
# per x86-64 level, the best loaded at start) under qemu-user as a CPU without AVX and as one
# with AVX2 (crates/cli/tests/cpus.rs). Not part of `npm test`: the CPU modules add a cold
# build of their own and emulation is slow. Run after `npm test` (models, clips installed).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
if ! command -v qemu-x86_64 >/dev/null; then
  echo "==> installing qemu-user (emulated CPUs)"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends qemu-user >/dev/null
fi
cargo test --locked -p utter-cli --features dynamic-backends --test cpus -- --nocapture
