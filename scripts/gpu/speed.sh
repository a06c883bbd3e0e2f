#!/usr/bin/env bash
# The GPU speed check of issue 31 in one go (docs/speed.md, "WebGPU on a GPU"): checks that
# Vulkan's loader is present (Dawn reaches NVIDIA's GPU through Vulkan on Linux), builds the CLI
# when dist/ is missing, then runs scripts/gpu/speed.mjs with every argument given here:
# ours on WebGPU vs PyTorch CUDA fp32 vs ours on WebAssembly (this machine's CPU), nanoGPT's
# shakespeare-char shape, 200 steps.
#
#   bash scripts/gpu/speed.sh --python "$(which python3)" [--data input.txt] [--json report.json]
#   bash scripts/gpu/speed.sh --small --allow-software --torch-device cpu   # a check without a GPU
#
# Exit codes: 0 done and the losses agree; 1 an engine failed or the losses differ; 2 a usage
# or setup problem; 3 no usable WebGPU adapter (no Vulkan loader, no adapter, or a software one).
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v node >/dev/null || { echo "gpu speed: Node.js (20 or later) is not on PATH; install it first." >&2; exit 2; }

if [[ "$(uname -s)" == Linux ]]; then
  found=""
  # Where the dynamic loader looks: its cache, then LD_LIBRARY_PATH.
  if command -v ldconfig >/dev/null && ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then found=yes; fi
  IFS=: read -r -a dirs <<< "${LD_LIBRARY_PATH:-}"
  for d in "${dirs[@]}"; do [[ -n "$d" && -e "$d/libvulkan.so.1" ]] && found=yes; done
  if [[ -z "$found" ]]; then
    echo "gpu speed: Vulkan's loader libvulkan.so.1 is missing, so WebGPU (Dawn) cannot reach the GPU:" \
      "install it (Debian/Ubuntu: apt-get install libvulkan1; NVIDIA's driver brings its own Vulkan driver," \
      "nvidia_icd.json), or put its folder on LD_LIBRARY_PATH." >&2
    exit 3
  fi
  if [[ -z "${VK_ICD_FILENAMES:-}" ]] && ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
    echo "gpu speed: no Vulkan driver manifest (icd.d/*.json) was found; with NVIDIA's driver it is" \
      "nvidia_icd.json (installed with the driver's Vulkan part). Trying anyway." >&2
  fi
fi

[[ -f dist/cli.js ]] || npm run --silent build
exec node scripts/gpu/speed.mjs "$@"
