#!/usr/bin/env bash
# `npm run build:windows`: the Windows CLI, utter.exe (x86_64-pc-windows-gnu), cross-built
# on Linux (Debian 12) with mingw-w64, so it can be run under Wine (scripts/test-wine.sh).
# Prints the path of utter.exe. UTTER_PROFILE=release builds the release profile.
# `--clipboard-test`: builds only utter-clipboard's tests (no engine, no utter.exe: a minute
# once std is built) and prints their paths, one a line, for scripts/test-wine.sh clipboard.
#
# How:
# - std for the target is built from source (`RUSTC_BOOTSTRAP=1 cargo -Zbuild-std`; rustup
#   here cannot download the target's std) from the source scripts/rust-std-source.sh
#   provides, unless rustup already has the target.
# - C and C++ are compiled by mingw-w64's posix-thread-model compilers, which are also the
#   linker; CMake builds (the engine, libopus) get a toolchain file for them.
# - the engine (transcribe.cpp + ggml, the transcribe-cpp-sys crate's own source) is
#   built and installed here with CMake, then handed to cargo as a prebuilt install
#   (TRANSCRIBE_DIR), so that the MinGW fixes below can be applied to it.
# Installs what it needs through apt when missing (mingw-w64, cmake). Everything it
# builds is kept under ~/.cache/utter: the engine in windows/engine-*, cargo's output in
# target-windows. Cost here (2 busy cores): ~25 min cold, seconds warm.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
cache="${UTTER_CACHE_DIR:-$HOME/.cache/utter}"
work="$cache/windows"
export CARGO_TARGET_DIR="${UTTER_WINDOWS_TARGET_DIR:-$cache/target-windows}"
export PATH="$HOME/.cargo/bin:$PATH"
profile="${UTTER_PROFILE:-dev}"
clipboard_test=false
[[ "${1:-}" == --clipboard-test ]] && clipboard_test=true
mingw=x86_64-w64-mingw32

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
missing=()
# ggml's C++ uses std::thread, which mingw-w64's win32 thread model lacks: posix compilers.
command -v $mingw-gcc-posix >/dev/null || missing+=(gcc-mingw-w64-x86-64-posix)
command -v $mingw-g++-posix >/dev/null || missing+=(g++-mingw-w64-x86-64-posix)
# windows-gnu's std declares its imports as raw-dylib, which rustc turns into import
# libraries with GNU dlltool.
command -v $mingw-dlltool >/dev/null || missing+=(binutils-mingw-w64-x86-64)
command -v cmake >/dev/null || missing+=(cmake)
command -v make >/dev/null || missing+=(make)
command -v curl >/dev/null || missing+=(curl ca-certificates)
command -v xz >/dev/null || missing+=(xz-utils)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
  echo "==> installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi

build_std=()
if [[ ! -d "$(rustc --print sysroot)/lib/rustlib/$target/lib" ]]; then
  build_std=(-Zbuild-std)
  src_root="$(bash scripts/rust-std-source.sh)"
  # Where -Zbuild-std finds std's source (cargo's own name for it).
  [[ -n "$src_root" ]] && export __CARGO_TESTS_ONLY_SRC_ROOT="$src_root"
  export RUSTC_BOOTSTRAP=1
fi

mkdir -p "$work"
toolchain="$work/mingw-posix.cmake"
cat >"$toolchain" <<EOF
# CMake toolchain for $target with mingw-w64's posix compilers (scripts/build-windows.sh).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER $mingw-gcc-posix)
set(CMAKE_CXX_COMPILER $mingw-g++-posix)
set(CMAKE_RC_COMPILER $mingw-windres)
set(CMAKE_FIND_ROOT_PATH /usr/$mingw)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
EOF

t="${target//-/_}"
T="${t^^}"
export "CARGO_TARGET_${T}_LINKER=$mingw-gcc-posix"

# --- utter-clipboard's round-trip test (Rust and Win32 only) ---------------------------------
if $clipboard_test; then
  echo "==> utter-clipboard's tests${build_std:+, std built from source}" >&2
  cargo test --locked --profile "$profile" --target "$target" "${build_std[@]}" -p utter-clipboard \
    --lib --test windows_round_trip --no-run --message-format=json-render-diagnostics \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["executable"])'
  exit "${PIPESTATUS[0]}"
fi

# --- the engine --------------------------------------------------------------------------
sys_dir="$(cargo metadata --locked --format-version 1 --manifest-path crates/core/Cargo.toml \
  | python3 -c 'import json, sys, os
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "transcribe-cpp-sys":
        print(os.path.dirname(p["manifest_path"]))')"
[[ -f "$sys_dir/CMakeLists.txt" ]] || { echo "error: no transcribe-cpp-sys source found" >&2; exit 1; }
engine_args=(
  -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release
  # ggml-cpu uses THREAD_POWER_THROTTLING_STATE when _WIN32_WINNT >= 0x0602, and
  # mingw-w64 10 (Debian 12) does not define it: build for the Windows 7 API level.
  -DCMAKE_C_FLAGS=-D_WIN32_WINNT=0x0601 -DCMAKE_CXX_FLAGS=-D_WIN32_WINNT=0x0601
  # What transcribe-cpp-sys's build script sets for a static build.
  -DTRANSCRIBE_INSTALL=ON -DTRANSCRIBE_BUILD_TESTS=OFF -DTRANSCRIBE_BUILD_EXAMPLES=OFF
  -DTRANSCRIBE_BUILD_TOOLS=OFF -DTRANSCRIBE_BUILD_SHARED=OFF -DTRANSCRIBE_USE_OPENMP=OFF
  # The CPU level: AVX2 + FMA + F16C + BMI2 (x86-64-v3), as the shipped builds were before
  # runtime dispatch; this build is for testing under Wine on the build machine.
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
)
# A new crate version or other options: another folder.
engine="$work/engine-$(basename "$sys_dir")-$(echo "${engine_args[*]}" | sha256sum | cut -c1-8)"
if [[ ! -f "$engine/.complete" ]]; then
  echo "==> the engine ($(basename "$sys_dir")) for $target into $engine" >&2
  rm -rf "$engine" "$engine.build"
  cmake -S "$sys_dir" -B "$engine.build" -DCMAKE_INSTALL_PREFIX="$engine" "${engine_args[@]}" \
    >"$work/engine-cmake.log" 2>&1 || { tail -30 "$work/engine-cmake.log" >&2; exit 1; }
  cmake --build "$engine.build" -j "$(nproc)" >>"$work/engine-cmake.log" 2>&1 \
    || { tail -30 "$work/engine-cmake.log" >&2; exit 1; }
  cmake --install "$engine.build" >>"$work/engine-cmake.log" 2>&1
  # ggml names its MinGW archives without the `lib` prefix (ggml.a, ggml-base.a...), which
  # rustc's `-l static=ggml` does not look for: give them the usual names.
  for archive in "$engine"/lib/ggml*.a; do
    mv "$archive" "$engine/lib/lib$(basename "$archive")"
  done
  # transcribe-cpp-sys 0.4.1's link manifest names no C++ runtime for MinGW (it assumes
  # MSVC, which links it implicitly): add libstdc++ and the winpthread it needs (posix
  # thread model), as static archives so that utter.exe needs no MinGW DLLs beside it. And
  # libssp: libopus (opusic-sys) is built with the stack protector and fortified string
  # functions, whose MinGW runtime is libssp; these archives come last on the link line.
  gcc_dir="$(dirname "$($mingw-g++-posix -print-file-name=libstdc++.a)")"
  python3 - "$engine/lib/transcribe-link.json" "$gcc_dir" <<'EOF'
import json, sys
path, gcc_dir = sys.argv[1], sys.argv[2]
manifest = json.load(open(path))
runtime = [f"{gcc_dir}/libstdc++.a", f"{gcc_dir}/libssp.a", "/usr/x86_64-w64-mingw32/lib/libwinpthread.a"]
manifest["library_paths"] = manifest.get("library_paths", []) + runtime
json.dump(manifest, open(path, "w"), indent=2)
EOF
  rm -rf "$engine.build"
  touch "$engine/.complete"
fi
export TRANSCRIBE_DIR="$engine"

# --- utter.exe ---------------------------------------------------------------------------
export "CC_$t=$mingw-gcc-posix" "CXX_$t=$mingw-g++-posix" "AR_$t=$mingw-ar" "RC_$t=$mingw-windres"
# libopus (opusic-sys) is a CMake build too.
export "CMAKE_TOOLCHAIN_FILE_$t=$toolchain"
echo "==> utter.exe ($profile)${build_std:+, std built from source}" >&2
start=$SECONDS
cargo build --locked --profile "$profile" --target "$target" "${build_std[@]}" -p utter-cli >&2
echo "    built in $((SECONDS - start)) s" >&2
exe="$CARGO_TARGET_DIR/$target/$([[ $profile == dev ]] && echo debug || echo "$profile")/utter.exe"
[[ -f "$exe" ]] || { echo "error: no $exe" >&2; exit 1; }
echo "$exe"
