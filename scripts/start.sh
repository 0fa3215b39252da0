#!/usr/bin/env bash
# `npm start`: set everything up, then run Utter's main job on the default model.
# With no arguments it transcribes a sample recording; pass files to transcribe your own:
#   npm start -- meeting.m4a interview.mp4
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh run
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
utter="$CARGO_TARGET_DIR/release/utter"
if (($# == 0)); then
  sample="$HOME/.cache/utter/sample.wav"
  if [[ ! -f "$sample" ]]; then
    # A real LibriVox recording, shipped in Debian's pocketsphinx-testdata.
    dpkg-query -W pocketsphinx-testdata >/dev/null 2>&1 || {
      SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq pocketsphinx-testdata >/dev/null
    }
    cp /usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav "$sample"
  fi
  set -- "$sample"
  echo "==> transcribing a sample recording: $sample"
fi
exec "$utter" transcribe --format srt "$@"
