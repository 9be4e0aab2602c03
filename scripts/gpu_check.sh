#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/gpu_pack.sh made .gpu/ here.
#   scripts/gpu_check.sh smoke   doctor, one honest kernel, a few red-team kernels
#   scripts/gpu_check.sh tests   the gpu-labelled tests
#   scripts/gpu_check.sh bench [what]   bench/cuda_bench.py (latency, throughput, ...)
#   scripts/gpu_check.sh seam    what the backend seam moved (issue 32): doctor's CUDA part, the
#                                reference cross-check of `tasks check --gpu`, `ksmith build`'s
#                                resources, the CUDA session's stages (every task kernel, the
#                                dump, the seeds), each bounded by SEAM_TEST_TIMEOUT_S
#   scripts/gpu_check.sh optimize [tasks]   `ksmith optimize --backend cuda`: tune every task's seed
#                                kernel, then refine against a scripted model server
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
  seam)
    limit=${SEAM_TEST_TIMEOUT_S:-240}
    "$K" doctor --json > "$out/doctor.json" 2> "$out/doctor.err"
    "$K" doctor > "$out/doctor.txt" 2>&1
    timeout 120 "$K" tasks check --gpu vector_add softmax matmul > "$out/tasks_check.txt" 2>&1
    echo "tasks check exit $?" >> "$out/tasks_check.txt"
    "$K" build --backend cuda --task softmax tests/kernels/cuda/honest/softmax_fast.cu > "$out/build_report.txt" 2>&1
    echo "build exit $?" >> "$out/build_report.txt"
    timeout "$limit" "$root/.gpu/bin/ksmith_gpu_tests" \
      --gtest_filter='Tasks/CudaTaskKernels.*:CudaDoctor.*:CudaDumpFailure.*' > "$out/gpu_tests_kernels.log" 2>&1
    echo "exit $?" >> "$out/gpu_tests_kernels.log"
    timeout "$limit" "$root/.gpu/bin/ksmith_gpu_tests" --gtest_filter='Tasks/CudaSeedKernel.*' \
      > "$out/gpu_tests_seeds.log" 2>&1
    echo "exit $?" >> "$out/gpu_tests_seeds.log"
    ;;
  tests)
    "$root/.gpu/bin/ksmith_gpu_kernel_tests" 2>&1 | tee "$out/gpu_kernel_tests.log" | tail -5
    "$root/.gpu/bin/ksmith_gpu_tests" 2>&1 | tee "$out/gpu_tests.log" | tail -40
    ;;
  bench)
    python3 bench/cuda_bench.py "${2:-all}" 2>&1 | tee "$out/bench.md"
    ;;
  optimize)
    tasks=${2:-"vector_add relu gelu transpose matmul layernorm rmsnorm softmax row_sum"}
    for task in $tasks; do
      echo "== tune $task" | tee -a "$out/optimize.log"
      /usr/bin/time -f "%e s wall" "$K" optimize --backend cuda --task "$task" --max-candidates 12 --json \
        --db "$out/runs.db" --output-dir "$out/$task" > "$out/tune-$task.json" 2>> "$out/optimize.log"
      python3 -c "import json,sys; s=json.load(open(sys.argv[1])); b=s['best'] or {}; print(s['task'], s['status'], s['candidates'], 'passed', s['passed'], 'best', b.get('speedup'), b.get('knobs'), s['stop_reason'])" \
        "$out/tune-$task.json" | tee -a "$out/optimize.log"
    done
    "$K" runs list --db "$out/runs.db" > "$out/runs.txt" 2>&1
    # The loop with a model on the GPU: a scripted server answers a wrong kernel, then the seed.
    python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
seed = pathlib.Path("tasks/elementwise/vector_add/seed_cuda.cu").read_text()
wrong = seed.replace("return p + q;", "return p - q;")
assert wrong != seed
steps = [{"content": "Subtract.\n```cuda\n" + wrong + "\n```"}, {"content": "The seed.\n```cuda\n" + seed + "\n```"}]
(out / "script.json").write_text(json.dumps({"steps": steps, "after_end": "repeat_last"}))
PY
    "$root/.gpu/bin/ksmith-fake-llm" --script "$out/script.json" --log "$out/fake-llm.jsonl" > "$out/fake-llm.port" &
    fake=$!
    sleep 1
    port=$(awk '{print $2}' "$out/fake-llm.port")
    OPENAI_API_KEY= "$K" optimize --backend cuda --task vector_add --provider openai --base-url "http://127.0.0.1:$port/v1" \
      --model scripted --max-candidates 3 --json --db "$out/runs.db" --output-dir "$out/refine" \
      > "$out/refine.json" 2>> "$out/optimize.log"
    echo "refine exit $?" >> "$out/optimize.log"
    kill $fake
    "$K" runs show "$(python3 -c "import json; print(json.load(open('$out/refine.json'))['run_id'])")" --db "$out/runs.db" \
      > "$out/refine-show.txt" 2>&1
    ;;
esac
