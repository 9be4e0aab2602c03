#!/usr/bin/env bash
# Runs on the GPU machine: the same commands with two builds, side by side in one run, for
# before/after wall times (docs/benchmarks.md). .gpu/ holds this build and .gpu-before/ the one
# to compare with, both packed by scripts/gpu_pack.sh (`scripts/gpu_pack.sh build-before .gpu-before`).
#   scripts/gpu_compare.sh sample   `optimize --strategy sample`, 8 new kernels from a scripted model
#   scripts/gpu_compare.sh bench    `bench --suite level1 --strategy tune` (SAMPLES per task, default 2)
#   scripts/gpu_compare.sh breakdown   bench/cuda_bench.py breakdown (RUNS per task, default 3): each
#                                      stage's seconds for a new candidate of four tasks
#   scripts/gpu_compare.sh throughput  bench/cuda_bench.py throughput (COUNT candidates, default 24)
# Each build gets its own cold cache, warmed by `ksmith doctor` (the GPU's facts) first.
# Results: $OUT/compare-<mode>.txt, logs in $OUT/compare-<mode>.tar.gz. SIDES="after" runs one side;
# a side other than after runs the build packed in .gpu-<side> (SIDES="before after variant").
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mode=${1:-sample}
samples=${SAMPLES:-2}
work=$(mktemp -d /tmp/ksmith-compare.XXXX)
summary="$out/compare-$mode.txt"
mkdir -p "$out"

start_fake_llm() {  # bin
  python3 - "$work" <<'PY'
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
seed = pathlib.Path("tasks/normalization/softmax/seed_cuda.cu").read_text()
# Eight distinct kernels (each a new build): the seed with a different comment.
steps = [{"content": f"Variant {i}.\n```cuda\n// variant {i}\n{seed}\n```"} for i in range(8)]
(work / "script.json").write_text(json.dumps({"steps": steps, "after_end": "repeat_last"}))
PY
  "$1/ksmith-fake-llm" --script "$work/script.json" --log "$work/fake-llm-$2.jsonl" > "$work/fake-llm-$2.port" &
  fake_pid=$!
  sleep 1
  port=$(awk '{print $2}' "$work/fake-llm-$2.port")
}

for side in ${SIDES:-before after}; do
  bin="$root/.gpu/bin"
  [[ $side != after ]] && bin="$root/.gpu-$side/bin"
  export KSMITH_CACHE_DIR="$work/cache-$side"
  export KSMITH_WORKER="$bin/ksmith-worker" KSMITH_CUDA_WORKER="$bin/ksmith-cuda-worker"
  "$bin/ksmith" doctor > "$work/doctor-$side.txt" 2>&1
  case "$mode" in
    sample)
      start_fake_llm "$bin" "$side"
      begin=$(date +%s.%N)
      OPENAI_API_KEY= "$bin/ksmith" optimize --backend cuda --task softmax --provider openai \
        --base-url "http://127.0.0.1:$port/v1" --model scripted --strategy sample --max-candidates 8 --parallel 8 \
        --json --db "$work/$side.db" --output-dir "$work/sample-$side" > "$work/sample-$side.json" 2> "$work/sample-$side.log"
      status=$?
      end=$(date +%s.%N)
      kill $fake_pid
      passed=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['passed'], 'of', s['candidates'], 'passed; best', (s['best'] or {}).get('speedup'))" "$work/sample-$side.json" 2>&1)
      ;;
    bench)
      begin=$(date +%s.%N)
      "$bin/ksmith" bench --suite level1 --backend cuda --strategy tune --samples "$samples" --jobs 3 --json \
        --db "$work/$side.db" --report "$work/bench-$side" > "$work/bench-$side.json" 2> "$work/bench-$side.log"
      status=$?
      end=$(date +%s.%N)
      passed=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['summary']; print({k: s.get(k) for k in ('pass_at_1','fast_1','geomean_speedup','efficiency_at_1')})" "$work/bench-$side.json" 2>&1)
      ;;
    breakdown|throughput)
      begin=$(date +%s.%N)
      KSMITH="$bin/ksmith" LABEL="$side" RUNS="${RUNS:-3}" VERDICTS="$work/verdicts.jsonl" \
        python3 bench/cuda_bench.py "$mode" > "$work/$mode-$side.md" 2> "$work/$mode-$side.log"
      status=$?
      end=$(date +%s.%N)
      cat "$work/$mode-$side.md" >> "$summary"
      passed="tables above"
      ;;
  esac
  wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$begin" "$end")
  printf '%s %s: exit %s, wall %s s, %s\n' "$mode" "$side" "$status" "$wall" "$passed" | tee -a "$summary"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$summary"
tar -czf "$out/compare-$mode.tar.gz" -C "$work" --exclude='cache-*' .
