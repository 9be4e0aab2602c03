#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/gpu_pack.sh made .gpu/ here.
#   scripts/gpu_check.sh smoke   doctor, one honest kernel, a few red-team kernels
#   scripts/gpu_check.sh tests   the gpu-labelled tests
#   scripts/gpu_check.sh bench [what]   bench/cuda_bench.py (latency, throughput, ...)
# Logs go to $OUT (the device tool's output folder) or ./gpu-out.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
mode=${1:-smoke}
{
  nvidia-smi --query-gpu=name,driver_version,uuid,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -1
} > "$out/machine.txt" 2>&1
case "$mode" in
  smoke)
    "$K" doctor --json > "$out/doctor.json" 2> "$out/doctor.err"
    for kernel in honest/vector_add_fast honest/softmax_fast redteam/side_stream_softmax \
                  redteam/illegal_address_vector_add; do
      case "$kernel" in
        honest/*) task=$(basename "$kernel" .cu | sed -E 's/_(fast|slow)$//') ;;
        *) task=$(basename "$kernel" .cu | sed -E 's/^.*_(vector_add|softmax|relu|row_sum|matmul|transpose|gelu|layernorm|rmsnorm)$/\1/') ;;
      esac
      echo "== $kernel ($task)" >> "$out/smoke.log"
      /usr/bin/time -f "%e s wall" "$K" eval --backend cuda --task "$task" --json \
        "tests/kernels/cuda/$kernel.cu" >> "$out/smoke.log" 2>&1
    done
    ;;
  tests)
    "$root/.gpu/bin/ksmith_gpu_tests" 2>&1 | tee "$out/gpu_tests.log" | tail -40
    ;;
  bench)
    python3 bench/cuda_bench.py "${2:-all}" 2>&1 | tee "$out/bench.md"
    ;;
esac
