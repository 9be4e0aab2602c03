#!/usr/bin/env bash
# Sets up ksmith on Debian 12 (installs missing packages, configures, builds), then:
#   setup.sh demo   optimizes the built-in softmax task (with no model configured: tunes its seed
#                   kernel's knobs) and prints the best kernel's verdict
#   setup.sh test   runs the unit and integration tests
#   setup.sh build  only builds
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-build}"

packages=(g++ cmake ninja-build pkg-config libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
          libcli11-dev libgtest-dev libgmock-dev libssl-dev libseccomp-dev libopenblas-dev
          libcurl4-openssl-dev libsqlite3-dev libcpp-httplib-dev libdnnl-dev chromium python3-torch
          python3-pytest libtorch-dev pybind11-dev zlib1g-dev libhiredis-dev redis-server)
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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build

case "$mode" in
  demo)
    ./build/ksmith doctor
    echo
    ./build/ksmith optimize --task softmax --max-candidates 8
    ;;
  test)
    cd build && ctest -L 'unit|integration' --output-on-failure -j2
    ;;
  build) ;;
  *) echo "usage: scripts/setup.sh [demo|test|build]" >&2; exit 2 ;;
esac
