#!/usr/bin/env bash
# `npm run test:wine`: the Windows CLI under Wine. utter.exe (scripts/build-windows.sh) runs
# on a virtual desktop here: an Xvfb display, a PulseAudio virtual microphone (Wine's audio
# goes to PulseAudio through winepulse) and a Wine prefix under ~/.cache/utter. Each check
# asserts what a Windows user would see and stops the run with its logs when it fails:
#   1. `utter.exe --version` names this build;
#   2. `models install-default` provisions whisper tiny.en + Silero VAD into %APPDATA% from
#      the wheels in ~/.cache/utter (fetched first when missing), converted under Wine;
#   3. `transcribe` of the five LibriVox clips (pocketsphinx-testdata) gives their known
#      transcripts (word error rate <= 0.15 over the five, as the Linux tests ask), with the
#      engine in a worker process: this exe re-executed the Windows way (current_exe, a new
#      process group), seen in Wine's process list with its hidden argument and in the log;
#   4. a worker that aborts on its first run (UTTER_ENGINE_FAULT) is restarted by its
#      supervisor and the same text comes out; a worker whose parent is killed exits;
#   5. push-to-talk into Wine's Notepad: the hotkey held down with xdotool while speech
#      plays into the microphone, the text pasted (clipboard + Ctrl+V) into Notepad, and the
#      clipboard given back what it held before.
# And first, 0. the whole clipboard across a paste: utter-clipboard's tests under Wine, its
# round trip (crates/clipboard/tests/windows_round_trip.rs) among them: an image (CF_DIB), a file list,
# an enhanced metafile, a registered format and text copied, the clipboard taken for the
# dictated text as the paste takes it, and every format given back byte for byte.
# `scripts/test-wine.sh clipboard` runs only check 0 (no engine, no utter.exe to build).
# What does not work under Wine, and why, is in docs/reliability.md ("Windows under Wine").
# Installs what is missing with apt; needs the network only when nothing is cached yet.
# Logs: kept in /tmp/utter-wine.* when a check fails (or with UTTER_KEEP_LOGS=1).
# Cost here (2 cores): ~2 min, plus the build when utter.exe is not built yet.
set -euo pipefail
cd "$(dirname "$0")/.."
only_clipboard=false
[[ "${1:-}" == clipboard ]] && only_clipboard=true
cache="${UTTER_CACHE_DIR:-$HOME/.cache/utter}"
started=$SECONDS

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
missing=()
need() { command -v "$1" >/dev/null || missing+=("$2"); }
# Debian's 64-bit Wine (no i386 multiarch needed: utter.exe is 64-bit).
[[ -x /usr/lib/wine/wine64 ]] || command -v wine64 >/dev/null || missing+=(wine wine64)
need Xvfb xvfb
need xdpyinfo x11-utils
need xdotool xdotool
need xclip xclip
need pulseaudio pulseaudio
need paplay pulseaudio-utils
need sox sox
need python3 python3
need pgrep procps
need curl curl
[[ -f /usr/share/pocketsphinx/test/data/librivox/transcription ]] || missing+=(pocketsphinx-testdata)
if ((${#missing[@]})); then
  echo "==> installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi

mapfile -t clipboard_tests < <(bash scripts/build-windows.sh --clipboard-test)
((${#clipboard_tests[@]} == 2)) || { echo "FAILED: utter-clipboard's tests not built" >&2; exit 1; }
$only_clipboard || exe="$(bash scripts/build-windows.sh | tail -n 1)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"

tmp="$(mktemp -d /tmp/utter-wine.XXXXXX)"
pids=()
cleanup() {
  local code=$?
  [[ -n "${WINEPREFIX:-}" ]] && wineserver -k 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if ((code)) || [[ -n "${UTTER_KEEP_LOGS:-}" ]]; then
    echo "(logs kept in $tmp)" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

fail() {
  echo "FAILED: $*" >&2
  exit 1
}
step() { echo "==> $* ($((SECONDS - started)) s)"; }
# The Windows name of a file here (Wine's Z: drive is /).
win() { printf 'Z:%s' "${1//\//\\}"; }
wait_for() { # what timeout-seconds command...
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out waiting for $what"
    sleep 0.2
  done
}
# Word error rate of $2 against the reference $1, words normalised as utter_core::text does.
wer() {
  python3 - "$1" "$2" <<'EOF'
import sys
def words(text):
    text = "".join(c if c.isalnum() or c == "'" or c.isspace() else " " for c in text.lower())
    return [w.strip("'") for w in text.split() if w.strip("'")]
ref, hyp = words(sys.argv[1]), words(sys.argv[2])
prev = list(range(len(hyp) + 1))
for i, r in enumerate(ref):
    cur = [i + 1] * (len(hyp) + 1)
    for j, h in enumerate(hyp):
        cur[j + 1] = min(prev[j] + (r != h), prev[j + 1] + 1, cur[j] + 1)
    prev = cur
print(f"{prev[-1] / max(len(ref), 1):.3f}")
EOF
}
wer_at_most() { python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))' "$1" "$2"; }

# --- the virtual desktop ---------------------------------------------------------------
step "desktop: Xvfb + PulseAudio virtual microphone"
display=""
for n in $(seq 90 190); do
  if [[ ! -e /tmp/.X$n-lock && ! -e /tmp/.X11-unix/X$n ]]; then display=":$n"; break; fi
done
[[ -n "$display" ]] || fail "no free X display number"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY="$display"
wait_for "Xvfb on $display" 20 xdpyinfo
export XDG_RUNTIME_DIR="$tmp/runtime"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# norewinds=1: without it the start of what is played can vanish (docs: headless-linux).
pulseaudio --daemonize=no --exit-idle-time=-1 --disallow-exit -n \
  --load="module-native-protocol-unix auth-anonymous=1" \
  --load="module-null-sink sink_name=vspk" \
  --load="module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1" \
  --load="module-remap-source master=vmic_sink.monitor source_name=vmic" \
  --load="module-always-sink" >"$tmp/pulse.log" 2>&1 &
pids+=($!)
wait_for PulseAudio 20 pactl info
pactl set-default-source vmic
pactl set-default-sink vspk

# --- the Wine prefix ---------------------------------------------------------------------
# wine64 itself: Debian's `wine` wrapper only adds a warning that wine32 is missing.
wine="$(command -v wine64 || echo /usr/lib/wine/wine64)"
step "Wine prefix ($("$wine" --version))"
export WINEPREFIX="$cache/wine-prefix"
export WINEDEBUG=-all
# No Mono or Gecko installer dialogs: utter.exe needs neither.
export WINEDLLOVERRIDES="mscoree,mshtml="
# Nothing from the caller's environment steers utter.exe (Wine passes it through).
while read -r var; do unset "$var"; done < <(env | sed -n 's/^\(UTTER_[A-Z_]*\)=.*/\1/p')
wineserver -k 2>/dev/null || true
if [[ ! -f "$WINEPREFIX/.utter-ready" ]]; then
  rm -rf "$WINEPREFIX"
  "$wine" wineboot -i >"$tmp/wineboot.log" 2>&1 || { cat "$tmp/wineboot.log" >&2; fail "wineboot"; }
  wineserver -w
  touch "$WINEPREFIX/.utter-ready"
fi
system32="$WINEPREFIX/drive_c/windows/system32"
if [[ ! -f "$system32/bcryptprimitives.dll" ]]; then
  # Wine < 9 has no bcryptprimitives.dll, whose ProcessPrng Rust's std (>= 1.78) imports
  # for random numbers: a stand-in over advapi32's RtlGenRandom (SystemFunction036).
  cat >"$tmp/bcryptprimitives.c" <<'EOF'
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
EOF
  x86_64-w64-mingw32-gcc-posix -shared -O2 -s -o "$system32/bcryptprimitives.dll" \
    "$tmp/bcryptprimitives.c" -ladvapi32
fi

# --- 0. the whole clipboard ------------------------------------------------------------------
step "0. the whole clipboard across a paste: every format back byte for byte"
# The unit tests, then the round trip: it replaces the clipboard, so it is #[ignore]d unless
# asked for; one test at a time.
for test in "${clipboard_tests[@]}"; do
  "$wine" "$test" --include-ignored --test-threads=1 --nocapture >>"$tmp/clipboard.log" 2>&1 \
    || { cat "$tmp/clipboard.log" >&2; fail "utter-clipboard's tests under Wine ($(basename "$test"))"; }
done
grep -E "^(the clipboard|snapshot|restored|  |waited|held open|test result)" "$tmp/clipboard.log" \
  | tr -d '\r' | sed 's/^/    /'
if $only_clipboard; then
  step "test:wine clipboard passed"
  exit 0
fi

# Installed as a user would have it, and run by its Windows path.
mkdir -p "$WINEPREFIX/drive_c/Utter"
cp "$exe" "$WINEPREFIX/drive_c/Utter/utter.exe"
utter_exe='C:\Utter\utter.exe'
utter() { "$wine" "$utter_exe" "$@"; }
appdata="$WINEPREFIX/drive_c/users/$(id -un)/AppData/Roaming/utter"

# --- 1. version ------------------------------------------------------------------------
step "1. utter.exe --version"
got="$(utter --version | tr -d '\r')"
[[ "$got" == "utter $version" ]] || fail "--version printed '$got', expected 'utter $version'"
echo "    $got"

# --- 2. models -----------------------------------------------------------------------------
step "2. utter.exe models install-default"
rm -rf "$appdata"
# The default models' wheels, when the cache lacks them, are fetched here with curl
# (utter.exe checks them against its pinned sha256): behind a TLS-intercepting proxy, Windows
# TLS under Wine refuses the connection (docs/reliability.md), and that is not under test.
mkdir -p "$cache/wheels"
mapfile -t urls < <(sed -n 's/^ *url: "\(https:[^"]*\.whl\)",$/\1/p' crates/models/src/defaults.rs)
((${#urls[@]} == 2)) || fail "expected two wheel URLs in crates/models/src/defaults.rs"
for url in "${urls[@]}"; do
  wheel="$cache/wheels/${url##*/}"
  if [[ ! -f "$wheel" ]]; then
    echo "    fetching ${url##*/}"
    curl -sSfL --retry 3 -o "$wheel.part" "$url" && mv "$wheel.part" "$wheel"
  fi
done
UTTER_CACHE_DIR="$(win "$cache")" utter models install-default \
  >"$tmp/install.out" 2>"$tmp/install.err" \
  || { cat "$tmp/install.out" "$tmp/install.err" >&2; fail "models install-default"; }
utter models list >"$tmp/list.out" 2>&1 || { cat "$tmp/list.out" >&2; fail "models list"; }
for model in whisper-tiny.en silero-vad-v6.2; do
  grep -q "$model" "$tmp/list.out" || { cat "$tmp/list.out" >&2; fail "$model is not listed"; }
done
sed 's/^/    /' "$tmp/list.out" | tr -d '\r'
for model in whisper-tiny.en silero-vad-v6.2; do
  [[ -s "$appdata/models/$model.bin" ]] || fail "no $model.bin in $appdata/models"
done
# The converters are plain Rust: a model converted here from the same wheel as the Linux
# build's (when this machine has one) must be the same bytes.
python3 - "$appdata/models" "${XDG_DATA_HOME:-$HOME/.local/share}/utter/models" <<'EOF' \
  || fail "a model converted under Wine differs from the Linux build's"
import hashlib, json, os, sys
windows, linux = sys.argv[1], sys.argv[2]
def entries(folder):
    try:
        return {m["name"]: m for m in json.load(open(os.path.join(folder, "manifest.json")))["models"]}
    except FileNotFoundError:
        return {}
ok = True
for name, ours in entries(windows).items():
    digest = hashlib.sha256(open(os.path.join(windows, ours["file"]), "rb").read()).hexdigest()
    if digest != ours["sha256"]:
        print(f"    {name}: its file does not match its manifest"); ok = False
    theirs = entries(linux).get(name)
    if theirs and theirs.get("source") == ours.get("source"):
        same = theirs["sha256"] == digest
        print(f"    {name}: {'the same bytes as' if same else 'NOT the same bytes as'} the Linux build's")
        ok = ok and same
sys.exit(0 if ok else 1)
EOF

# --- 3. transcribe -------------------------------------------------------------------------
librivox=/usr/share/pocketsphinx/test/data/librivox
mapfile -t clips < <(ls "$librivox"/*.wav | sort)
((${#clips[@]} == 5)) || fail "expected the five LibriVox clips in $librivox"
truth() { # the reference text of clip $1 (the package's `transcription`, in name order)
  sed -n "$(($1 + 1))p" "$librivox/transcription" | sed 's/<\/\?s>//g; s/ ([^)]*)$//; s/^ *//; s/ *$//'
}
# The utter.exe processes (this prefix's copy) whose command line has $1, as "pid command
# line": Wine shows a Windows process's command line as the Linux process's arguments.
windows_processes() { pgrep -a -f -- "C:.Utter.utter\.exe $1" || true; }
# Notes each worker seen while $1 runs, into $2.
watch_workers() {
  local pid=$1 out=$2
  while kill -0 "$pid" 2>/dev/null; do
    windows_processes --utter-engine-worker >>"$out"
    sleep 0.2
  done
}
transcribe_clips() { # out-dir, then environment assignments for utter.exe
  local dir=$1 args=()
  shift
  mkdir -p "$dir"
  for clip in "${clips[@]}"; do args+=("$(win "$clip")"); done
  env "$@" "$wine" "$utter_exe" -v transcribe --format txt --output "$(win "$dir")" "${args[@]}" \
    >"$dir.out" 2>"$dir.err" &
  local pid=$!
  watch_workers "$pid" "$dir.workers"
  local rc=0
  wait "$pid" || rc=$?
  ((rc == 0)) || { cat "$dir.err" >&2; fail "utter.exe transcribe exited with $rc"; }
}
check_transcripts() { # out-dir: the five transcripts against the reference, as one text
  local all_ref="" all_got="" name txt rate
  for i in "${!clips[@]}"; do
    name="$(basename "${clips[$i]}" .wav)"
    txt="$1/$name.txt"
    [[ -f "$txt" ]] || { cat "$1.err" >&2; fail "no transcript $txt"; }
    echo "    $name: $(tr -d '\r' <"$txt" | tr '\n' ' ')"
    all_ref+="$(truth "$i") "
    all_got+="$(tr -d '\r' <"$txt") "
  done
  rate="$(wer "$all_ref" "$all_got")"
  echo "    word error rate over the five: $rate"
  wer_at_most "$rate" 0.15 || fail "WER $rate > 0.15 (reference: $all_ref)"
}
step "3. utter.exe transcribe: five LibriVox clips, the engine in a worker process"
transcribe_clips "$tmp/plain"
check_transcripts "$tmp/plain"
grep -Eq "engine worker [0-9]+ ready on" "$tmp/plain.err" \
  || { cat "$tmp/plain.err" >&2; fail "utter's log does not say an engine worker started"; }
[[ -s "$tmp/plain.workers" ]] || fail "no engine worker process was seen while transcribing"
echo "    $(grep -Eo "engine worker [0-9]+ ready on [a-zA-Z]+" "$tmp/plain.err" | head -n 1)"
echo "    seen by Linux: $(sort -u "$tmp/plain.workers" | head -n 1)"

# --- 4. supervision ------------------------------------------------------------------------
step "4a. a worker that aborts on its first run is restarted; the same text comes out"
transcribe_clips "$tmp/fault" UTTER_ENGINE_FAULT=abort-on-run:1
check_transcripts "$tmp/fault"
grep -q "fault injection: aborting on call 1" "$tmp/fault.err" \
  || { cat "$tmp/fault.err" >&2; fail "the worker did not abort as asked"; }
grep -q "the engine worker died" "$tmp/fault.err" \
  || { cat "$tmp/fault.err" >&2; fail "the supervisor did not notice the dead worker"; }
(($(grep -Ec "engine worker [0-9]+ ready on" "$tmp/fault.err") >= 2)) \
  || { cat "$tmp/fault.err" >&2; fail "no second engine worker started"; }
for i in "${!clips[@]}"; do
  name="$(basename "${clips[$i]}" .wav)"
  cmp -s "$tmp/plain/$name.txt" "$tmp/fault/$name.txt" || fail "$name: another text after the restart"
done
echo "    $(grep -o "the engine worker died.*" "$tmp/fault.err" | head -n 1 | tr -d '\r')"

step "4b. a worker whose parent is killed exits"
long="$tmp/long.wav"
sox "${clips[@]}" "${clips[@]}" "${clips[@]}" "$long"
[[ -z "$(windows_processes --utter-engine-worker)" ]] || fail "an engine worker is left from an earlier check"
# Wine's loader becomes the Windows process: this pid is utter.exe itself.
"$wine" "$utter_exe" transcribe "$(win "$long")" >"$tmp/orphan.out" 2>"$tmp/orphan.err" &
parent=$!
deadline=$((SECONDS + 60))
until [[ -n "$(windows_processes --utter-engine-worker)" ]]; do
  ((SECONDS < deadline)) || fail "no engine worker started for the long file"
  sleep 0.2
done
worker="$(windows_processes --utter-engine-worker | awk 'NR == 1 {print $1}')"
sleep 2
kill -0 "$worker" 2>/dev/null || fail "the engine worker $worker ended before its parent was killed"
kill -KILL "$parent"
rc=0
wait "$parent" 2>/dev/null || rc=$?
((rc == 137)) || fail "utter.exe was not killed (exit status $rc)"
deadline=$((SECONDS + 20))
while kill -0 "$worker" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "the engine worker $worker outlived its killed parent by 20 s"
  sleep 0.2
done
echo "    the worker ended $((SECONDS - deadline + 20)) s after its parent was killed"

# --- 5. push-to-talk into Notepad ------------------------------------------------------------
step "5. push-to-talk dictation into Notepad, clipboard restored"
speech="$tmp/speech.wav"
# The five clips, each followed by the pause a person makes between sentences.
pad=()
for clip in "${clips[@]}"; do
  sox "$clip" -r 48000 -c 1 "$tmp/pad-$(basename "$clip")" pad 0 1.2
  pad+=("$tmp/pad-$(basename "$clip")")
done
sox "${pad[@]}" "$speech"
reference="$(for i in "${!clips[@]}"; do truth "$i"; done | tr '\n' ' ')"

# The clipboard holds what another program put there; Wine's clipboard is the X one.
printf 'previous clipboard ✓' | xclip -selection clipboard -quiet >/dev/null 2>&1 &
pids+=($!)
clip_owner=$!
"$wine" notepad >"$tmp/notepad.log" 2>&1 &
pids+=($!)
wait_for "Notepad's window" 30 xdotool search --name "Untitled - Notepad"
notepad="$(xdotool search --name "Untitled - Notepad" | head -n 1)"
sleep 1
# Wine delivers a hotkey (RegisterHotKey) only while one of its own windows has the focus.
xdotool windowfocus --sync "$notepad"
"$wine" "$utter_exe" dictate --events json --output paste --hotkey ctrl+shift+space \
  --recordings-dir "$(win "$tmp/recordings")" >"$tmp/dictate.out" 2>"$tmp/dictate.err" &
dictate=$!
event() { grep -q "\"event\":\"$1\"" "$tmp/dictate.out" 2>/dev/null; }
dictate_fail() {
  xdotool keyup ctrl+shift+space 2>/dev/null || true
  echo "--- events ---" >&2
  cat "$tmp/dictate.out" >&2
  echo "--- stderr ---" >&2
  cat "$tmp/dictate.err" >&2
  fail "$@"
}
deadline=$((SECONDS + 90))
until event ready; do
  ((SECONDS < deadline)) || dictate_fail "utter.exe dictate was not ready within 90 s"
  kill -0 "$dictate" 2>/dev/null || dictate_fail "utter.exe dictate exited"
  sleep 0.2
done
echo "    $(grep '"event":"ready"' "$tmp/dictate.out" | tr -d '\r')"
xdotool windowfocus --sync "$notepad"
xdotool keydown ctrl+shift+space
deadline=$((SECONDS + 10))
until event recording_started; do
  ((SECONDS < deadline)) || dictate_fail "the hotkey did not start a recording"
  sleep 0.1
done
paplay --latency-msec=200 --device=vmic_sink "$speech"
xdotool keyup ctrl+shift+space
deadline=$((SECONDS + 180))
until event text_delivered; do
  ((SECONDS < deadline)) || dictate_fail "no text delivered within 180 s of the release"
  sleep 0.2
done
delivered="$(grep '"event":"text_delivered"' "$tmp/dictate.out" | head -n 1 | tr -d '\r')"
grep -q '"error"' <<<"$delivered" && dictate_fail "delivered with an error: $delivered"
grep -q '"output":"paste"' <<<"$delivered" || dictate_fail "not delivered by paste: $delivered"
for role in --utter-engine-worker --utter-vad-worker; do
  [[ -n "$(windows_processes "$role")" ]] || dictate_fail "no $role process under utter.exe dictate"
done
sleep 1
restored="$(xclip -selection clipboard -o 2>/dev/null || true)"
[[ "$restored" == 'previous clipboard ✓' ]] \
  || dictate_fail "the clipboard holds '$restored', not what it held before"
# What Notepad holds: select all, copy, read the clipboard.
xdotool windowfocus --sync "$notepad"
xdotool key ctrl+a ctrl+c
sleep 0.5
pasted="$(xclip -selection clipboard -o 2>/dev/null | tr -d '\r')"
rate="$(wer "$reference" "$pasted")"
echo "    Notepad holds (WER $rate): $pasted"
wer_at_most "$rate" 0.15 || dictate_fail "WER $rate > 0.15 in Notepad"
echo "    clipboard restored: $restored"
kill "$clip_owner" 2>/dev/null || true
# Ctrl+C: Wine turns SIGINT into the console's CTRL_C_EVENT, which the ctrlc crate handles.
kill -INT "$dictate"
deadline=$((SECONDS + 30))
while kill -0 "$dictate" 2>/dev/null; do
  ((SECONDS < deadline)) || dictate_fail "utter.exe dictate still running 30 s after Ctrl+C"
  sleep 0.2
done
rc=0
wait "$dictate" || rc=$?
((rc == 0)) || dictate_fail "utter.exe dictate exited with $rc after Ctrl+C"
echo "    stopped by Ctrl+C, exit status 0"

step "test:wine passed"
