#!/usr/bin/env bash
# Release build of `utter` that runs on any x86-64 CPU (not only on the build machine): the
# engine is built with runtime CPU dispatch (`--features dynamic-backends`: ggml's CPU backend
# as one module per x86-64 level, from SSE2 to AVX-512, the best one loaded at start), as a
# shared library beside the binary. The result is a folder:
#   $CARGO_TARGET_DIR/portable/utter, libtranscribe.so, libggml*.so, libggml-cpu-*.so
# Extra arguments go to cargo, e.g. `--features vulkan`. UTTER_PROFILE=dev builds the debug
# profile instead (the tests' cache).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
profile="${UTTER_PROFILE:-release}"
cargo build --locked --profile "$profile" -p utter-cli --features dynamic-backends "$@"
out_dir="$CARGO_TARGET_DIR/$([[ $profile == dev ]] && echo debug || echo "$profile")"
dest="$CARGO_TARGET_DIR/portable"
rm -rf "$dest" && mkdir -p "$dest"
cp "$out_dir/utter" "$dest/"
bash scripts/stage-engine-libs.sh "$out_dir" "$dest"
echo "portable build in $dest"
