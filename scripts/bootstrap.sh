#!/usr/bin/env bash
# Idempotent setup for a fresh Debian/Ubuntu machine: system packages, the
# Rust build, and the default models. Usage: scripts/bootstrap.sh [run|test]
#   run  (default)  what the app needs to build and run
#   test            also what the test suite needs (sox, ffmpeg, speech clips, Xvfb, PulseAudio, zenity)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"

run_packages=(build-essential pkg-config cmake libssl-dev libasound2-dev libxdo-dev libxkbcommon0 python3 python3-pip)
# The desktop tests: an X server, a PulseAudio virtual microphone, key presses, a paste target.
test_packages=(sox libsox-fmt-mp3 ffmpeg pocketsphinx-testdata xvfb xauth x11-utils xdotool xclip zenity
  pulseaudio pulseaudio-utils libasound2-plugins alsa-utils)

missing=()
wanted=("${run_packages[@]}")
[[ "$mode" == test ]] && wanted+=("${test_packages[@]}")
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "==> installing system packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "error: Rust is not installed; get it from https://rustup.rs and re-run" >&2
  exit 1
fi

profile_flag=(--release); bin_dir="$CARGO_TARGET_DIR/release"
[[ "$mode" == test ]] && { profile_flag=(); bin_dir="$CARGO_TARGET_DIR/debug"; }
echo "==> building utter (${profile_flag[*]:-debug})"
cargo build --locked "${profile_flag[@]}" -p utter-cli

echo "==> provisioning the default models"
"$bin_dir/utter" models install-default
