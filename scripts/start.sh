#!/usr/bin/env bash
# `npm start`: set everything up, then start the Utter desktop app on the default model.
# With files as arguments it transcribes them on the command line instead:
#   npm start -- meeting.m4a interview.mp4
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh run
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
if (($# > 0)); then
  exec "$CARGO_TARGET_DIR/release/utter" transcribe --format srt "$@"
fi
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "error: no display (DISPLAY / WAYLAND_DISPLAY unset): the desktop app needs a graphical session." >&2
  echo "       Transcribe files without one: npm start -- FILE..." >&2
  exit 1
fi
echo "==> starting Utter (it lives in the tray; hold Ctrl+Shift+Space to dictate)"
exec "$CARGO_TARGET_DIR/release/utter-app"
