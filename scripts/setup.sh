#!/usr/bin/env bash
# Sets up ksmith on Debian 12 (installs missing packages, configures, builds), then:
#   setup.sh demo   runs the evolve search without a model on a fused task (residual add + layer
#                   norm, where PyTorch eager makes several passes over memory): islands of
#                   knob settings of the seed kernel, the archive of the best kernel of each kind,
#                   and the best kernel with what made it faster
#   setup.sh test   runs the unit and integration tests
#   setup.sh build  only builds
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-build}"

packages=(g++ cmake ninja-build pkg-config libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
          libcli11-dev libgtest-dev libgmock-dev libssl-dev libseccomp-dev libopenblas-dev
          libcurl4-openssl-dev libsqlite3-dev libcpp-httplib-dev libdnnl-dev chromium python3-torch
          python3-pytest libtorch-dev pybind11-dev zlib1g-dev libhiredis-dev redis-server tmux
          pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers clinfo)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Release at -O2 without debug info: a third less compile time than RelWithDebInfo on a 2-core
# machine (measured: 8.2 s -> 5.7 s for one test file), which CI's time limit needs.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
cmake --build build

case "$mode" in
  demo)
    ./build/ksmith doctor
    echo
    ./build/ksmith optimize --task add_layernorm --strategy evolve --max-candidates 16 --output-dir ksmith-demo
    echo
    sed -n '/^### What differs/,/^## Attempts/p' ksmith-demo/report.md | sed '$d'
    echo "(every attempt: ksmith-demo/report.md; the kernel: ksmith-demo/best.cc)"
    ;;
  test)
    # What this machine offers (compilers, the CUDA toolkit's folders, the sandbox): in CI's log.
    ./build/ksmith doctor || true
    cd build && ctest -L 'unit|integration' --output-on-failure -j2
    ;;
  build) ;;
  *) echo "usage: scripts/setup.sh [demo|test|build]" >&2; exit 2 ;;
esac
