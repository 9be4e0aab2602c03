#!/usr/bin/env bash
# Runs on the GPU machine after scripts/gpu_pack.sh made .gpu/ here: the evolve search (issue 30).
#   - evolve without a model against exhaustive tune over level-1 tasks (bench/evolve_vs_tune.py)
#   - the wall time of one evolve generation of 16 candidates against 16 evaluated one at a time
#     (relu's seed with a fifth THREADS value: 20 settings)
# Writes $OUT/evolve.md and the JSON beside it; each task's row also goes to evolve-vs-tune.err as it
# ends, so a call cut short keeps the tasks it finished. EVOLVE_TASKS picks the tasks,
# EVOLVE_GENERATION=0 skips the generation timing, EVOLVE_WARMUP=1 judges each task's default once
# before either strategy (bench/evolve_vs_tune.py --warmup).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
md="$out/evolve.md"
tasks=${EVOLVE_TASKS:-relu,gelu,sigmoid,silu,tanh,elu,softplus,leaky_relu,vector_add,gelu_bf16,smooth_l1_loss,softmax}
echo "# evolve on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%FT%TZ), commit $(cat .gpu/commit 2>/dev/null || echo ?)" > "$md"

if [[ ${EVOLVE_GENERATION:-1} != 0 ]]; then
sed 's/@tune THREADS: 128, 256, 512/@tune THREADS: 64, 128, 256, 512, 1024/' tasks/elementwise/relu/seed_cuda.cu > /tmp/relu20.cu
# A warm-up run so that the trusted builds and the GPU's facts are cached for both timings.
"$K" optimize --task relu --backend cuda --strategy tune -n 2 --kernel /tmp/relu20.cu --db /tmp/gen.db --quiet --json \
  --output-dir /tmp/gen-warm --timing-budget 0.3 --seeds 1 > /dev/null 2>&1
for mode in generation sequential; do
  if [[ $mode == generation ]]; then flags=(--parallel 16 --islands 4); else flags=(--parallel 1 --islands 1); fi
  start=$(date +%s.%N)
  "$K" optimize --task relu --backend cuda --strategy evolve -n 16 --kernel /tmp/relu20.cu "${flags[@]}" --db /tmp/gen.db \
    --json --output-dir "/tmp/gen-$mode" --timing-budget 0.3 --seeds 1 > "$out/gen-$mode.json" 2> "$out/gen-$mode.err"
  end=$(date +%s.%N)
  echo "- $mode of 16 candidates (${flags[*]}): $(python3 -c "print(round($end - $start, 1))") s wall, best $(python3 -c "import json; print(json.load(open('$out/gen-$mode.json'))['best']['speedup'])" 2>/dev/null)x" >> "$md"
done
fi

echo >> "$md"
warmup=()
[[ ${EVOLVE_WARMUP:-0} == 1 ]] && warmup=(--warmup)
python3 bench/evolve_vs_tune.py --ksmith "$K" --backend cuda --tasks "$tasks" --db /tmp/evolve-vs-tune.db \
  --timing-budget 0.3 "${warmup[@]}" --markdown "$out/evolve-vs-tune.md" > "$out/evolve-vs-tune.json" 2> "$out/evolve-vs-tune.err"
cat "$out/evolve-vs-tune.md" >> "$md"
cat "$md"
