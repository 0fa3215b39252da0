#!/usr/bin/env bash
# Regenerates every icon from icons/source.svg: Tauri's PNG set, .icns and .ico
# (via `tauri icon`), and the tray's idle / recording / transcribing variants.
# Needs rsvg-convert (Debian: librsvg2-bin) and the npm dev dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

rsvg-convert -w 1024 -h 1024 icons/source.svg -o "$tmp/icon.png"
npx tauri icon "$tmp/icon.png" -o icons >/dev/null
# Mobile/Store sizes are not shipped.
rm -rf icons/android icons/ios icons/Square*Logo.png icons/StoreLogo.png

mkdir -p icons/tray
tray() { # name, dot colour
  sed "s|r=\"0\" fill=\"#ffffff\" id=\"dot\"|r=\"200\" fill=\"$2\" stroke=\"#ffffff\" stroke-width=\"48\" id=\"dot\"|" \
    icons/source.svg > "$tmp/$1.svg"
  rsvg-convert -w 64 -h 64 "$tmp/$1.svg" -o "icons/tray/$1.png"
}
rsvg-convert -w 64 -h 64 icons/source.svg -o icons/tray/idle.png
tray recording "#ff3b30"
tray transcribing "#ffb020"
echo "icons regenerated in icons/"
