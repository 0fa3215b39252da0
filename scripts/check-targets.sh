#!/usr/bin/env bash
# `npm run check:targets`: type-check Utter for the systems its installers promise but that
# no Linux machine can run: clippy (`--all-targets -- -D warnings`) over the whole workspace
# (utter-core, utter-cli and the Tauri app in src-tauri) for
#   x86_64-pc-windows-gnu  x86_64-pc-windows-msvc  aarch64-apple-darwin  x86_64-apple-darwin
# so the macOS and Windows code (cfg(windows) / cfg(target_os = "macos")) meets a compiler
# before a user's download does. Usage: scripts/check-targets.sh [--prepare] [TARGET...]
# (--prepare: fetch and set up everything, check nothing).
#
# How, without those systems' SDKs (nothing is linked, so nothing native has to be real):
# - std for a target: rustup's, when `rustup target add` put it there (CI does); otherwise
#   it is built from source with `RUSTC_BOOTSTRAP=1 cargo -Zbuild-std`. The source is
#   rustup's rust-src component when installed, else Debian's rust-src .deb of the same
#   rustc version, fetched and verified by scripts/rust-std-source.sh, unpacked under
#   ~/.cache/utter and handed to cargo with `__CARGO_TESTS_ONLY_SRC_ROOT`.
# - native code in build scripts is stood in for (these tools live in
#   ~/.cache/utter/foreign-tools and write empty outputs): a C/C++ compiler and archiver
#   (CC_/CXX_/AR_<target>: ring, objc2-exception-helper), a resource compiler (RC_<target>:
#   Tauri's Windows icon and manifest), a `cmake` (opusic-sys; told to use Ninja, so that
#   no Visual Studio is looked for); transcribe-cpp-sys is given an empty install
#   (TRANSCRIBE_DIR with a manifest that lists no libraries); SQLite is "found" in an empty
#   folder (LIBSQLITE3_SYS_USE_PKG_CONFIG + SQLITE3_LIB_DIR).
# - windows-gnu's std declares its imports as raw-dylib, so building it needs a GNU
#   x86_64-w64-mingw32-dlltool: mingw-w64's binutils (installed here through apt when
#   missing), or else a shim over llvm-dlltool.
# What this cannot check: the C/C++ and Objective-C code itself (the engine, ring, sqlite:
# stood in above), and anything that only fails at link time or at run time (a missing
# system library, a macOS permission, a Windows API misuse that type-checks). Every Rust
# crate of the workspace is checked for all four targets. With std built from source,
# RUSTC_BOOTSTRAP=1 also lets dependencies' build-script probes (anyhow, proc-macro2) find
# nightly features, so a dependency may take its nightly path here; Utter's code does not.
#
# Cost here (2 cores): about 18 min cold (std built from source four times), about a minute
# warm (67 s for the four after a change to utter-core); the output is kept in
# ~/.cache/utter/target-foreign, apart from the Linux build's.
# It is its own npm script, not part of `npm test` (whose cold run must fit CI's budget);
# CI runs it as a job of its own (.github/workflows/ci.yml, job `targets`).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${UTTER_CACHE_DIR:-$HOME/.cache/utter}"
tools="$cache/foreign-tools"
export CARGO_TARGET_DIR="${UTTER_FOREIGN_TARGET_DIR:-$cache/target-foreign}"
export PATH="$HOME/.cargo/bin:$PATH"

prepare_only=false
if [[ "${1:-}" == --prepare ]]; then
  prepare_only=true
  shift
fi
targets=("$@")
((${#targets[@]})) || targets=(x86_64-pc-windows-gnu x86_64-pc-windows-msvc aarch64-apple-darwin x86_64-apple-darwin)

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
apt_install() {
  command -v apt-get >/dev/null || return 1
  echo "==> installing $*" >&2
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "$@" >/dev/null; } || return 1
}

sysroot="$(rustc --print sysroot)"
has_std() { [[ -d "$sysroot/lib/rustlib/$1/lib" ]]; }

# The stand-ins. One script answers as every tool: it writes each output file it is asked
# for, empty, and prints nothing (a C preprocessor run then yields nothing).
write_tools() {
  mkdir -p "$tools/bin" "$tools/empty" "$tools/transcribe/lib" "$tools/sdk"
  cat >"$tools/bin/stand-in" <<'EOF'
#!/usr/bin/env bash
# A check-only stand-in for a native tool (scripts/check-targets.sh): writes empty outputs.
case "${1:-}" in
  --version) [[ "$(basename "$0")" == cmake ]] && echo "cmake version 3.31.0"; exit 0 ;;
  -V) echo "GNU windres (check-only stand-in)"; exit 0 ;;
esac
outputs=()
archive=""
while (($#)); do
  case "$1" in
    -o | --output) outputs+=("$2"); shift ;;
    --output=*) outputs+=("${1#--output=}") ;;
    [-/]Fo*) outputs+=("${1:3}") ;;
    [-/][Oo][Uu][Tt]:*) outputs+=("${1:5}") ;;
    -o?*) outputs+=("${1#-o}") ;;
    *.a | *.lib) [[ -z "$archive" ]] && archive="$1" ;;
  esac
  shift
done
((${#outputs[@]})) || { [[ -n "$archive" ]] && outputs=("$archive"); }
for out in "${outputs[@]}"; do
  case "$out" in */ | *\\) ;; *) mkdir -p "$(dirname "$out")" && : >"$out" ;; esac
done
EOF
  chmod +x "$tools/bin/stand-in"
  ln -sf stand-in "$tools/bin/cmake"
  echo '{"shared":false,"libraries":[]}' >"$tools/transcribe/lib/transcribe-link.json"

  if ! command -v x86_64-w64-mingw32-dlltool >/dev/null \
    && [[ ! -x "$tools/bin/x86_64-w64-mingw32-dlltool" ]]; then
    if ! apt_install binutils-mingw-w64-x86-64; then
      local llvm
      llvm="$(command -v llvm-dlltool || true)"
      [[ -n "$llvm" ]] || { echo "error: no dlltool for windows-gnu: install mingw-w64's binutils or LLVM" >&2; return 1; }
      # rustc calls GNU dlltool; llvm-dlltool takes the same flags but --temp-prefix.
      cat >"$tools/bin/x86_64-w64-mingw32-dlltool" <<EOF
#!/usr/bin/env bash
args=()
while ((\$#)); do
  case "\$1" in --temp-prefix) shift ;; --temp-prefix=*) ;; *) args+=("\$1") ;; esac
  shift
done
exec "$llvm" "\${args[@]}"
EOF
      chmod +x "$tools/bin/x86_64-w64-mingw32-dlltool"
    fi
  fi
}

target_env() {
  local t="${1//-/_}"
  export "CC_$t=$tools/bin/stand-in" "CXX_$t=$tools/bin/stand-in" "AR_$t=$tools/bin/stand-in"
  export "RC_$t=$tools/bin/stand-in"
}

write_tools
src_root=""
for target in "${targets[@]}"; do
  if ! has_std "$target"; then
    src_root="$(bash scripts/rust-std-source.sh)"
    break
  fi
done
# Where -Zbuild-std finds std's source (cargo's own name for it).
[[ -n "$src_root" ]] && export __CARGO_TESTS_ONLY_SRC_ROOT="$src_root"
export PATH="$tools/bin:$PATH"
export CMAKE="$tools/bin/cmake"
# Without a generator, the cmake crate looks for Visual Studio for an msvc target.
export CMAKE_GENERATOR=Ninja
export TRANSCRIBE_DIR="$tools/transcribe"
export LIBSQLITE3_SYS_USE_PKG_CONFIG=1 SQLITE3_LIB_DIR="$tools/empty"
# cc-rs asks xcrun for the macOS SDK unless SDKROOT names one.
export SDKROOT="$tools/sdk" MACOSX_DEPLOYMENT_TARGET=11.0
for target in "${targets[@]}"; do target_env "$target"; done
if $prepare_only; then
  echo "check-targets: ready (std source: ${src_root:-rustup rust-src or installed std})"
  exit 0
fi

# The desktop app embeds the built UI.
if [[ ! -f ui/dist/index.html ]]; then
  [[ -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error
  npm run --silent ui:build >/dev/null
fi

failed=()
for target in "${targets[@]}"; do
  build_std=()
  if ! has_std "$target"; then
    build_std=(-Zbuild-std)
  fi
  echo "==> clippy for $target${build_std:+ (std built from source)}"
  start=$SECONDS
  if RUSTC_BOOTSTRAP=1 cargo clippy --locked --workspace --all-targets --target "$target" "${build_std[@]}" \
    -- -D warnings; then
    echo "    $target: clean ($((SECONDS - start)) s)"
  else
    echo "    $target: FAILED ($((SECONDS - start)) s)"
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "check-targets: clippy found problems for ${failed[*]}" >&2
  exit 1
fi
echo "check-targets: ${targets[*]} clean"
