#!/usr/bin/env bash
# Set-up shared by the README's two commands and CI: installs what is missing (Debian or
# Ubuntu, with apt-get when run as root), then configures and builds into build/.
# The CUDA toolkit (nvcc) must already be installed.
# With --fuzz (CI) it also installs clang and libFuzzer for tests/fuzz/run.sh: Debian's
# clang only recommends libclang-rt-dev, where libclang_rt.fuzzer lives.
set -eu
cd "$(dirname "$0")/.."

pkgs=(libcjson-dev gnuplot-nox cmake ninja-build gcc python3)
[ "${1:-}" = --fuzz ] && pkgs+=(clang libclang-rt-dev)
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in "${pkgs[@]}"; do
  have_pkg "$pkg" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing packages: ${need[*]} (install them, e.g. sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
fi

if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  else
    echo "setup: nvcc not found: install the CUDA toolkit (12.4 or newer) or put its bin/ on PATH" >&2
    exit 1
  fi
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --parallel "$(nproc)"
