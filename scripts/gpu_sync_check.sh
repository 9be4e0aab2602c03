#!/usr/bin/env bash
# Runs on the GPU machine: the honest vector_add that synchronizes inside its call, at three fixed
# seeds, with the binaries in .gpu-before and .gpu (scripts/gpu_pack.sh): before the timing loop
# stopped comparing a round it cut short, the seed decided whether it passed (docs/benchmarks.md).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}; mkdir -p "$out"; OUT=$out
source scripts/gpu_env.sh
for pack in ${SYNC_PACKS:-.gpu-before .gpu}; do
  for s in 11 12 13; do
    LD_LIBRARY_PATH="$PWD/$pack/lib:$LD_LIBRARY_PATH" timeout 45 "$PWD/$pack/bin/ksmith" eval --backend cuda --task vector_add \
      tests/kernels/cuda/honest/vector_add_sync.cu --seed $s --timing-budget 0.2 --json --quiet > "$OUT/$pack-$s.json" 2> "$OUT/$pack-$s.err"
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], v.get('status'), (v.get('reason') or '')[:160])" "$OUT/$pack-$s.json" $pack $s
  done
done
