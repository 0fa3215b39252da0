#!/usr/bin/env bash
# Newer Vulkan and SPIR-V headers for a Vulkan build on Debian 12.
#
# ggml-vulkan needs Vulkan headers newer than Debian 12's 1.3.239 (it uses
# vk::LayerSettingEXT, and the build stops at ggml-vulkan.cpp otherwise). Debian 13 ships
# them. This script takes Debian 13's libvulkan-dev and spirv-headers packages from the
# Debian archive, checks them against the archive's signed index (gpgv + the
# debian-archive-keyring already on the machine), and unpacks them into a folder of their
# own: nothing is installed system-wide, and the run-time loader (libvulkan1) stays the
# system's. Prints the CMake arguments that point the build at them.
#
# Usage: scripts/vulkan-headers.sh [DEST]   (default ~/.cache/utter/vulkan-headers)
set -euo pipefail
dest="${1:-$HOME/.cache/utter/vulkan-headers}"
mirror="${DEBIAN_MIRROR:-https://deb.debian.org/debian}"
suite=trixie
packages=(libvulkan-dev spirv-headers)

cmake_args() {
  echo "-DVulkan_INCLUDE_DIR=$dest/usr/include -DSPIRV-Headers_DIR=$dest/usr/share/cmake/SPIRV-Headers"
}
if [[ -f "$dest/.complete" ]]; then
  cmake_args
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "==> Vulkan headers: Debian $suite's ${packages[*]} into $dest" >&2
curl -sSf -o InRelease "$mirror/dists/$suite/InRelease"
gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg InRelease 2>/dev/null \
  || { echo "error: the signature of $suite's InRelease did not verify" >&2; exit 1; }
curl -sSf -o Packages.xz "$mirror/dists/$suite/main/binary-amd64/Packages.xz"
index_sum="$(awk '$3 == "main/binary-amd64/Packages.xz" && length($1) == 64 {print $1; exit}' InRelease)"
echo "$index_sum  Packages.xz" | sha256sum -c --quiet
xz -dc Packages.xz > Packages

rm -rf "$dest.partial"
mkdir -p "$dest.partial"
for package in "${packages[@]}"; do
  read -r filename sha256 < <(awk -v want="$package" '
    /^Package: / { p = ($2 == want) }
    p && /^Filename: / { f = $2 }
    p && /^SHA256: / { s = $2 }
    /^$/ && p && f { print f, s; exit }' Packages)
  [[ -n "${filename:-}" ]] || { echo "error: $package is not in $suite's index" >&2; exit 1; }
  curl -sSf -o pkg.deb "$mirror/$filename"
  echo "$sha256  pkg.deb" | sha256sum -c --quiet
  dpkg-deb -x pkg.deb "$dest.partial"
  echo "    $(basename "$filename")" >&2
done
rm -rf "$dest"
mv "$dest.partial" "$dest"
touch "$dest/.complete"
cmake_args
