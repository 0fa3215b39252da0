#!/usr/bin/env bash
# Sourced by bootstrap.sh and test-vulkan.sh: what a GPU build of the engine needs.
#   gpu_setup vulkan|cuda|metal   installs (or checks) the toolchain, exports
#                                 TRANSCRIBE_CMAKE_ARGS where needed, and sets
#                                 gpu_features=(--features NAME)
# The choice comes from UTTER_GPU (e.g. `UTTER_GPU=vulkan npm start`).

gpu_features=()

# Vulkan headers of at least this VK_HEADER_VERSION build ggml-vulkan.
VULKAN_HEADERS_NEEDED=275

vulkan_header_version() {
  sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\)$/\1/p' /usr/include/vulkan/vulkan_core.h 2>/dev/null
}

gpu_setup() {
  local gpu="$1"
  case "$gpu" in
    "" | cpu) return 0 ;;
    vulkan)
      # glslc compiles ggml's shaders; mesa-vulkan-drivers brings lavapipe (a software device,
      # for trying the path without a GPU) and the Mesa drivers for AMD and Intel GPUs.
      local wanted=(glslc libvulkan-dev spirv-headers mesa-vulkan-drivers vulkan-tools xz-utils curl gpgv)
      local missing=() p
      for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
      done
      if ((${#missing[@]})); then
        echo "==> installing the Vulkan build tools: ${missing[*]}"
        local sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
      fi
      local have
      have="$(vulkan_header_version)"
      if [[ -z "$have" || "$have" -lt "$VULKAN_HEADERS_NEEDED" ]]; then
        echo "==> the system's Vulkan headers (${have:-none}) are older than ggml-vulkan needs ($VULKAN_HEADERS_NEEDED)"
        TRANSCRIBE_CMAKE_ARGS="${TRANSCRIBE_CMAKE_ARGS:+$TRANSCRIBE_CMAKE_ARGS }$(bash "$(dirname "${BASH_SOURCE[0]}")/vulkan-headers.sh")"
        export TRANSCRIBE_CMAKE_ARGS
      fi
      ;;
    cuda)
      command -v nvcc >/dev/null || {
        echo "error: UTTER_GPU=cuda needs the CUDA toolkit (nvcc on PATH): https://developer.nvidia.com/cuda-downloads" >&2
        return 1
      }
      ;;
    metal)
      [[ "$(uname -s)" == Darwin ]] || { echo "error: UTTER_GPU=metal builds only on macOS" >&2; return 1; }
      ;;
    *)
      echo "error: UTTER_GPU=$gpu: expected vulkan, cuda, metal or cpu" >&2
      return 1
      ;;
  esac
  gpu_features=(--features "$gpu")
}
