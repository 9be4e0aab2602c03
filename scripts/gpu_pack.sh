#!/usr/bin/env bash
# Packs what the GPU machine needs into .gpu/ (ignored by git; the device tool carries it):
# stripped binaries from a build folder made here, and the shared libraries Ubuntu 24.04 lacks.
# Then, on the GPU machine: scripts/gpu_check.sh. See docs/gpu.md. `gpu_pack.sh BUILD OUT` packs another
# build folder into OUT (e.g. .gpu-before for scripts/gpu_compare.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.gpu}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for binary in ksmith ksmith-worker ksmith-cuda-worker ksmith-nvrtc ksmith-oclc ksmith-opencl-worker ksmith_gpu_tests ksmith_gpu_kernel_tests ksmith-fake-llm; do
  if [[ -x "$build/$binary" ]]; then strip -o "$out/bin/$binary" "$build/$binary"; fi
done
# libOpenCL.so.1: Debian's OpenCL loader (ocl-icd), which the OpenCL binaries link; it reads the
# vendors registered in /etc/OpenCL/vendors (scripts/gpu_opencl.sh registers NVIDIA's).
for library in libfmt.so.9 libtomlplusplus.so.3 libcpp-httplib.so.0.11 libhiredis.so.0.14 libOpenCL.so.1; do
  cp -L "/usr/lib/x86_64-linux-gnu/$library" "$out/lib/"
done
du -sh "$out"
