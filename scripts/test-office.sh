#!/usr/bin/env bash
# `npm run test:office`: issue 39's paste matrix for LibreOffice Writer, on X11 (Xvfb) and as a
# Wayland client of a headless sway (crates/platform/tests/paste_office.rs): every text of the
# matrix pasted twice, read back from the document Writer saves, the user's copied image back on
# the clipboard after each paste. Not part of `npm test`: LibreOffice is ~90 MB more of packages
# for the cold CI run. Needs what `npm test` installs (Xvfb, sway, xclip, wl-clipboard).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
missing=()
for p in libreoffice-writer libreoffice-gtk3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "==> installing ${missing[*]} (LibreOffice Writer and its GTK 3 plugin for Wayland)"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# One test at a time: each points this process at its own display (X11, then sway).
cargo test --locked -p utter-platform --test paste_office -- --ignored --test-threads=1 --nocapture
