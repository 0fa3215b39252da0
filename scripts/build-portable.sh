#!/usr/bin/env bash
# Release build of `utter` that runs on any x86-64 CPU with AVX2 (not only on
# the build machine): the engine is compiled without -march=native.
# Extra arguments go to cargo, e.g. `--features cuda`.
set -euo pipefail
cd "$(dirname "$0")/.."
export TRANSCRIBE_CMAKE_ARGS="${TRANSCRIBE_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON}"
exec cargo build --release --locked -p utter-cli "$@"
