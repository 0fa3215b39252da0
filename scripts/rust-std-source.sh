#!/usr/bin/env bash
# The source of Rust's standard library, for building std from source (`cargo -Zbuild-std`)
# for a target whose std rustup cannot install here. Prints the library folder to hand to
# cargo as `__CARGO_TESTS_ONLY_SRC_ROOT`, or nothing when rustup's rust-src component is
# installed (cargo finds that one by itself). Used by scripts/check-targets.sh and
# scripts/build-windows.sh.
#
# Without rustup's component, the source is Debian's rust-src .deb of the same rustc
# version, fetched by its pinned pool URL and verified as scripts/vulkan-headers.sh does
# (the suite's InRelease with gpgv + debian-archive-keyring, then Packages.xz's sha256 from
# InRelease, then the .deb's sha256 from Packages), unpacked under ~/.cache/utter.
set -euo pipefail
cache="${UTTER_CACHE_DIR:-$HOME/.cache/utter}"
mirror="${DEBIAN_MIRROR:-https://deb.debian.org/debian}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
export PATH="$HOME/.cargo/bin:$PATH"

# Debian's rust-src for each rustc version this script has been used with: the suite
# whose signed index lists it, and its path in the archive pool.
declare -A debian_rust_src=(
  [1.95.0]="trixie-backports pool/main/r/rustc/rust-src_1.95.0+dfsg1-2~bpo13+1_all.deb"
)

sysroot="$(rustc --print sysroot)"
rustc_version="$(rustc -V | awk '{print $2}')"
if [[ -f "$sysroot/lib/rustlib/src/rust/library/Cargo.lock" ]]; then
  exit 0
fi
dest="$cache/rust-src-$rustc_version"
library="$dest/usr/src/rustc-$rustc_version/library"
if [[ -f "$dest/.complete" ]]; then
  echo "$library"
  exit 0
fi
pinned="${debian_rust_src[$rustc_version]:-}"
if [[ -z "$pinned" ]]; then
  echo "error: no Debian rust-src is pinned for rustc $rustc_version: add it to debian_rust_src" \
    "in $0 (look for rust-src in $mirror/dists/trixie-backports/main/binary-amd64/Packages.xz)," \
    "or install rustup's: rustup component add rust-src" >&2
  exit 1
fi
if [[ ! -f "$keyring" ]] || ! command -v gpgv >/dev/null; then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "==> installing debian-archive-keyring gpgv" >&2
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends debian-archive-keyring gpgv >/dev/null; } \
    || { echo "error: $keyring and gpgv are needed to verify Debian's rust-src" >&2; exit 1; }
fi
suite="${pinned%% *}" filename="${pinned#* }"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "==> std's source: Debian's $(basename "$filename") into $dest" >&2
cd "$work"
curl -sSf -o InRelease "$mirror/dists/$suite/InRelease"
gpgv --keyring "$keyring" InRelease 2>/dev/null \
  || { echo "error: the signature of $suite's InRelease did not verify" >&2; exit 1; }
curl -sSf -o Packages.xz "$mirror/dists/$suite/main/binary-amd64/Packages.xz"
index_sum="$(awk '$3 == "main/binary-amd64/Packages.xz" && length($1) == 64 {print $1; exit}' InRelease)"
echo "$index_sum  Packages.xz" | sha256sum -c --quiet
# Unpacked first: awk stops at the entry, which would leave xz writing to a closed pipe.
xz -dc Packages.xz >Packages
sha256="$(awk -v want="$filename" '
  /^Filename: / { f = $2 }
  /^SHA256: / { s = $2 }
  /^$/ { if (f == want) { print s; exit } f = ""; s = "" }' Packages)"
[[ -n "$sha256" ]] || { echo "error: $filename is no longer in $suite's index" >&2; exit 1; }
curl -sSf -o pkg.deb "$mirror/$filename"
echo "$sha256  pkg.deb" | sha256sum -c --quiet
rm -rf "$dest.partial"
mkdir -p "$dest.partial"
dpkg-deb -x pkg.deb "$dest.partial"
[[ -f "$dest.partial/usr/src/rustc-$rustc_version/library/Cargo.lock" ]] \
  || { echo "error: the .deb has no usr/src/rustc-$rustc_version/library" >&2; exit 1; }
rm -rf "$dest"
mv "$dest.partial" "$dest"
touch "$dest/.complete"
echo "$library"
