#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/gpu_pack.sh made .gpu/ here: the
# build-speed measurements of docs/benchmarks.md ("Builds in seconds"): the machine, load_inline's
# build paths (bench/load_inline_paths.py), then a batch of new load_inline candidates through
# `ksmith kernelbench run` beside KernelBench's procedure (bench/kernelbench_build_throughput.py).
#   scripts/gpu_builds.sh [count] [kernelbench-procedure samples]
# Env: KB_GPU_BENCH_BYTES (the import's --gpu-bench-bytes, default 1 GiB), KB_JOBS (kernelbench run
# --jobs), SKIP_PATHS=1 to skip the build paths (PATHS_VARIANTS: which), NO_WARM_UP=1 to time the batch with the tasks' own
# first-time costs in it. Writes $OUT/builds.md and $OUT/*.json.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
python=python3  # the one with torch (on the GPU machine, not /usr/bin/python3)
for candidate_python in python3 /usr/bin/python3; do
  if "$candidate_python" -c 'import torch' 2> /dev/null; then python=$candidate_python; break; fi
done
{
  echo "## machine"
  echo "cores: $(nproc); $(free -g | awk '/Mem:/ {print "memory " $2 " GiB, available " $7 " GiB"}')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" -c 'import torch, inspect; from torch.utils.cpp_extension import load_inline; print("torch", torch.__version__, "cuda", torch.version.cuda); print("load_inline", inspect.signature(load_inline))'
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} > "$out/builds.md" 2>&1
if [[ -z "${SKIP_PATHS:-}" ]]; then
  echo "## load_inline paths" >> "$out/builds.md"
  timeout 300 "$python" bench/load_inline_paths.py --variants "${PATHS_VARIANTS:-torch_in_cu,binding_in_cpp,pybind_only}" \
    --out "$out/paths.json" >> "$out/builds.md" 2>&1
fi
tasks=/tmp/ksmith-kb-throughput-tasks
if [[ ! -f "$tasks/imported" ]]; then
  "$K" import kernelbench tests/data/kernelbench/level1 --problems 1,19,23,47,87 --out "$tasks" --json --quiet \
    --gpu-bench-bytes "${KB_GPU_BENCH_BYTES:-1073741824}" > "$out/import.json" 2> "$out/import.err" \
    && touch "$tasks/imported"
fi
echo "## batch" >> "$out/builds.md"
"$python" bench/kernelbench_build_throughput.py --ksmith "$K" --tasks-path "$tasks" --count "${1:-16}" \
  --jobs "${KB_JOBS:-0}" ${NO_WARM_UP:+--no-warm-up} --kernelbench-procedure "${2:-1}" --out "$out/throughput.json" \
  --alone tests/kernels/kernelbench/modelnew/cuda/honest_fast_build_relu_kb_l1_019_relu.py \
  tests/kernels/kernelbench/modelnew/cuda/honest_*.py >> "$out/builds.md" 2>&1
