#!/usr/bin/env bash
# The Linux .deb, for real: build it (debug profile, reusing the test build), check its
# declared dependencies and file list, install it with dpkg, run the installed `utter
# --version`, start the installed app under Xvfb and see its window appear, then remove
# it and check nothing is left behind. Needs root (or sudo). Run by `npm test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/utter/target}"
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
fail() { echo "deb test: FAIL: $*" >&2; exit 1; }

cli="$CARGO_TARGET_DIR/debug/utter"
[[ -x "$cli" ]] || fail "build the CLI first ($cli missing)"
bundle_dir="$CARGO_TARGET_DIR/debug/bundle/deb"
rm -f "$bundle_dir"/*.deb
# The Vulkan variant's package (the release workflow's configuration for it, over the same
# binaries: what it declares is what is checked) must pull in the Vulkan loader and keep the
# rest of the dependencies.
vulkan_config=$(mktemp --suffix=.json)
UTTER_CLI="$cli" VARIANT=vulkan OS=linux node scripts/release-config.mjs "$vulkan_config" >/dev/null
node -e 'const fs = require("fs"), f = process.argv[1], c = JSON.parse(fs.readFileSync(f, "utf8"));
  c.bundle.createUpdaterArtifacts = false; fs.writeFileSync(f, JSON.stringify(c));' "$vulkan_config"
npx tauri bundle --debug --bundles deb --ci --config "$vulkan_config" >/dev/null
vulkan_deb=$(ls "$bundle_dir"/*.deb 2>/dev/null | head -1)
vulkan_depends=$(dpkg-deb -f "$vulkan_deb" Depends)
for dep in libvulkan1 libwebkit2gtk-4.1-0 libayatana-appindicator3-1 libasound2 libxdo3; do
  grep -q "$dep" <<<"$vulkan_depends" || fail "the Vulkan variant's Depends lacks $dep: $vulkan_depends"
done
rm -f "$bundle_dir"/*.deb "$vulkan_config"

# The CLI ships in the same package, next to the app, as the release configuration puts
# it (here the test build's CLI, where a release builds its own).
# Bundle the app the test build made (`tauri bundle` does not compile; `tauri build`
# would rebuild with its own environment). No updater signatures here: that key lives
# in the release workflow's secrets.
config=$(mktemp --suffix=.json)
UTTER_CLI="$cli" OS=linux node scripts/release-config.mjs "$config" >/dev/null
node -e 'const fs = require("fs"), f = process.argv[1], c = JSON.parse(fs.readFileSync(f, "utf8"));
  c.bundle.createUpdaterArtifacts = false; fs.writeFileSync(f, JSON.stringify(c));' "$config"
npx tauri bundle --debug --bundles deb --ci --config "$config" >/dev/null
rm -f "$config"
deb=$(ls "$bundle_dir"/*.deb 2>/dev/null | head -1)
[[ -f "$deb" ]] || fail "no .deb in $bundle_dir"
package=$(dpkg-deb -f "$deb" Package)

depends=$(dpkg-deb -f "$deb" Depends)
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 libayatana-appindicator3-1 libasound2 libxdo3; do
  grep -q "$dep" <<<"$depends" || fail "Depends lacks $dep: $depends"
done
files=$(dpkg-deb -c "$deb" | awk '{sub(/^\.\//, "", $6); print $6}')
# utter-worker: the engine's and voice detector's workers run from it (without it, from the app).
for f in usr/bin/utter-app usr/bin/utter-worker usr/bin/utter usr/share/applications/Utter.desktop \
  usr/share/icons/hicolor/128x128/apps/utter-app.png; do
  grep -qx "$f" <<<"$files" || fail "$f missing from the package: $(tr '\n' ' ' <<<"$files")"
done

cleanup() {
  [[ -n "${app_pid:-}" ]] && kill "$app_pid" 2>/dev/null || true
  [[ -n "${xvfb_pid:-}" ]] && kill "$xvfb_pid" 2>/dev/null || true
  dpkg-query -W "$package" >/dev/null 2>&1 && $SUDO dpkg -r "$package" >/dev/null 2>&1 || true
  rm -rf "${tmp:-}"
}
trap cleanup EXIT
$SUDO dpkg -i "$deb" >/dev/null || fail "dpkg -i failed"

# The command is on the PATH as the README says, and says where Utter keeps things.
[[ "$(command -v utter)" == /usr/bin/utter ]] || fail "utter is not on the PATH: $(command -v utter || true)"
[[ "$package" == utter ]] || fail "the package is $package, where the README says \`apt remove utter\`"
utter paths | grep -q "settings" || fail "utter paths listed no settings folder"
version=$(/usr/bin/utter --version)
[[ "$version" == "utter $(node -p 'require("./package.json").version')" ]] || fail "utter --version said: $version"

tmp=$(mktemp -d)
display=:$((150 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & xvfb_pid=$!
for _ in $(seq 50); do DISPLAY=$display xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
# The update check on (as installed): offline here, it must say so quietly, not as an ERROR.
DISPLAY=$display UTTER_CONFIG_DIR=$tmp/config UTTER_DATA_DIR=$tmp/data XDG_CONFIG_HOME=$tmp/xdg \
  /usr/bin/utter-app >"$tmp/app.log" 2>&1 & app_pid=$!
window=""
for _ in $(seq 150); do
  window=$(DISPLAY=$display xdotool search --onlyvisible --name '^Utter$' 2>/dev/null | head -1) && [[ -n "$window" ]] && break
  kill -0 "$app_pid" 2>/dev/null || fail "the installed app exited: $(tail -5 "$tmp/app.log")"
  sleep 0.1
done
[[ -n "$window" ]] || fail "no Utter window appeared: $(tail -5 "$tmp/app.log")"
# Its start is logged once setup is done (the window may show a moment before).
for _ in $(seq 150); do grep -q "tray ready" "$tmp/app.log" && break; sleep 0.1; done
for _ in $(seq 300); do grep -q "update check: " "$tmp/app.log" && break; sleep 0.1; done
kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
grep -q "tray ready" "$tmp/app.log" || fail "the installed app logged no start: $(tail -5 "$tmp/app.log")"
grep -q "update check: " "$tmp/app.log" || fail "the update check logged no outcome in 30 s: $(tail -5 "$tmp/app.log")"
! grep -iE " ERROR .*updat" "$tmp/app.log" || fail "the offline update check logged an ERROR: $(grep -iE " ERROR .*updat" "$tmp/app.log" | head -3)"
! grep -q "no utter-worker beside the app" "$tmp/app.log" || fail "the installed app found no utter-worker beside it"

$SUDO dpkg -r "$package" >/dev/null
for f in /usr/bin/utter-app /usr/bin/utter-worker /usr/bin/utter /usr/share/applications/Utter.desktop; do
  [[ ! -e "$f" ]] || fail "$f left behind after dpkg -r"
done
echo "deb test: ok ($(basename "$deb"), $(du -h "$deb" | cut -f1); installed, ran, window shown, removed)"
