#!/usr/bin/env bash
# Copies the engine's shared libraries and CPU/GPU modules of a `dynamic-backends` build into
# DEST, where the binaries look for them (their rpath: next to themselves, or ../lib/utter).
#   scripts/stage-engine-libs.sh TARGET_PROFILE_DIR DEST
# TARGET_PROFILE_DIR is e.g. ~/.cache/utter/target/release. The library's build script records
# where it installed them (cargo:runtime_dir / cargo:module_dir in its build output).
set -euo pipefail
out_dir="$1" dest="$2"
# The newest build of transcribe-cpp-sys that produced loadable modules.
output="$(ls -t "$out_dir"/build/transcribe-cpp-sys-*/output 2>/dev/null \
  | xargs -r grep -l '^cargo:module_dir=' | head -1 || true)"
if [[ -z "$output" ]]; then
  echo "error: no dynamic-backends build of the engine under $out_dir (build with --features dynamic-backends)" >&2
  exit 1
fi
runtime_dir="$(sed -n 's/^cargo:runtime_dir=//p' "$output")"
module_dir="$(sed -n 's/^cargo:module_dir=//p' "$output")"
mkdir -p "$dest"
shopt -s nullglob
for dir in "$runtime_dir" "$module_dir"; do
  for lib in "$dir"/*.so "$dir"/*.so.* "$dir"/*.dylib "$dir"/*.dll; do
    cp -P "$lib" "$dest/"  # symlinks (soname -> file) stay links
  done
done
n="$(ls "$dest" | grep -c 'ggml-cpu' || true)"
if [[ "$n" -eq 0 ]]; then
  echo "error: no CPU modules (libggml-cpu-*) in $runtime_dir or $module_dir" >&2
  exit 1
fi
echo "staged the engine libraries ($n CPU modules) in $dest"
