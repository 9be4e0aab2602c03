#!/usr/bin/env bash
# Runs on the GPU machine after scripts/gpu_pack.sh made .gpu/ here: how busy the evaluator and the
# GPU are during an evolve run whose model answers in 20 s (issue 30), with and without writing the
# next generation while the last is judged. The model is bench/scripted_model.py (variants of
# relu's CUDA seed; the kernels are real). Writes $OUT/overlap.md and the runs' JSON beside it.
#   OVERLAP_DELAY_S (20), OVERLAP_CANDIDATES (48), OVERLAP_PARALLEL (16)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
md="$out/overlap.md"
delay=${OVERLAP_DELAY_S:-20}
candidates=${OVERLAP_CANDIDATES:-48}
parallel=${OVERLAP_PARALLEL:-16}
echo "# overlap on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%FT%TZ), commit $(cat .gpu/commit 2>/dev/null || echo ?)" > "$md"
echo "evolve on relu (cuda), $candidates candidates, generations of $parallel, 4 islands, a scripted model answering in $delay s" >> "$md"
echo >> "$md"

python3 bench/scripted_model.py --seed tasks/elementwise/relu/seed_cuda.cu --delay-s "$delay" --port 8931 > "$out/model.log" 2>&1 &
model=$!
trap 'kill $model 2>/dev/null' EXIT
sleep 1
# A warm-up run so that the trusted builds and the GPU's facts are cached for both runs.
"$K" optimize --task relu --backend cuda --strategy tune -n 2 --db /tmp/overlap.db --quiet --json \
  --output-dir /tmp/overlap-warm --timing-budget 0.3 --seeds 1 > /dev/null 2>&1

echo "| schedule | wall s | evaluations in flight | model calls in flight | both at once | calls made while evaluating | GPU samples > 0% | mean GPU util | best |" >> "$md"
echo "|---|---|---|---|---|---|---|---|---|" >> "$md"
for mode in no-overlap overlap; do
  flags=()
  [[ $mode == no-overlap ]] && flags=(--no-overlap)
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > "$out/util-$mode.csv" 2>/dev/null &
  sampler=$!
  OPENAI_API_KEY=sk-scripted "$K" optimize --task relu --backend cuda --strategy evolve --provider openai \
    --base-url http://127.0.0.1:8931/v1 --model scripted -n "$candidates" --parallel "$parallel" --islands 4 "${flags[@]}" \
    --db /tmp/overlap.db --json --output-dir "/tmp/overlap-$mode" --timing-budget 0.3 --seeds 1 \
    > "$out/overlap-$mode.json" 2> "$out/overlap-$mode.err"
  kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
  python3 - "$out/overlap-$mode.json" "$out/util-$mode.csv" "$mode" >> "$md" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
a = summary.get("activity", {})
samples = [float(x) for x in open(sys.argv[2]).read().split() if x.strip().replace('.', '', 1).isdigit()]
busy = sum(1 for s in samples if s > 0) / len(samples) if samples else 0
mean = sum(samples) / len(samples) if samples else 0
wall = a.get("wall_s", 0) or 1
best = summary.get("best") or {}
print(f"| {sys.argv[3]} | {a.get('wall_s', 0):.1f} | {100 * a.get('evaluating_s', 0) / wall:.0f}% | "
      f"{100 * a.get('proposing_s', 0) / wall:.0f}% | {100 * a.get('overlapped_s', 0) / wall:.0f}% | "
      f"{a.get('proposals_while_evaluating', 0)} of {a.get('proposals', 0)} | {100 * busy:.0f}% of {len(samples)} | "
      f"{mean:.1f}% | {best.get('speedup', '-')} |")
PY
done
cat "$md"
