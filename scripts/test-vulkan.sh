#!/usr/bin/env bash
# `npm run test:vulkan`: build Utter's engine for Vulkan and test the GPU path on lavapipe,
# Mesa's software Vulkan device (no GPU needed): device listing, a transcript on the device
# that reads as the CPU's, the fallback to the CPU with a notice, a clear error for a named
# device that is gone, and a worker that dies on the GPU finishing on the CPU
# (crates/cli/tests/vulkan.rs). Kept out of `npm test`: a cold Vulkan build takes ~25 min on
# 2 cores (ggml's shaders), and it has its own build folder so the two builds never evict
# each other.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu.sh
gpu_setup vulkan
# The speech clips the tests transcribe.
dpkg-query -W -f='${Status}' pocketsphinx-testdata 2>/dev/null | grep -q "install ok installed" || {
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends pocketsphinx-testdata >/dev/null
}
export CARGO_TARGET_DIR="${UTTER_VULKAN_TARGET_DIR:-$HOME/.cache/utter/target-vulkan}"
export PATH="$HOME/.cargo/bin:$PATH"

echo "==> the Vulkan devices this machine has"
vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|deviceType' || {
  echo "error: vulkaninfo lists no Vulkan device (is mesa-vulkan-drivers installed?)" >&2
  exit 1
}
echo "==> building utter with --features vulkan (debug, engine optimised)"
cargo build --locked -p utter-cli --features vulkan
echo "==> provisioning the default models"
"$CARGO_TARGET_DIR/debug/utter" models install-default
echo "==> the GPU path on lavapipe"
cargo test --locked -p utter-cli --features vulkan --test vulkan -- --test-threads=1
