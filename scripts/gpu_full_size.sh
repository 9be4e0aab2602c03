#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/gpu_pack.sh made .gpu/ here:
# imports KernelBench level-1 problems whose tensors the old 1 GiB rule halved, at the problem's
# own sizes where they fit (the importer's default: a tenth of the GPU's memory), then judges the
# unchanged model (`ModelNew = Model`) on each, one after another (a verdict at these sizes holds
# tens of GB of the GPU), sampling the GPU's memory in use while it runs.
#   scripts/gpu_full_size.sh [problems]     (FULL_EVAL_TIMEOUT_S: each verdict's limit, default 900)
# Writes $OUT/full_size.md (a table), $OUT/full_size.jsonl (one line a verdict) and
# $OUT/verdict_<task>.json (the verdicts whole).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
problems=${1:-19,20,21,23,24,26,40,47,88,94}
kb=${KSMITH_TEST_KERNELBENCH_DIR:-}
if [[ -z "$kb" ]]; then
  for candidate_dir in tests/data/kernelbench .kb ../shared/kernelbench; do
    if [[ -d "$candidate_dir/level1" ]]; then kb=$candidate_dir; break; fi
  done
fi
tasks_dir=/tmp/ksmith-kb-full
candidates=/tmp/ksmith-kb-unchanged
mkdir -p "$candidates"
start=$(date +%s)
"$K" import kernelbench "$kb/level1" --problems "$problems" --out "$tasks_dir" --json --quiet \
  > "$out/full_import.json" 2> "$out/full_import.err"
echo "import: $(( $(date +%s) - start )) s" > "$out/full_size.md"
export KSMITH_TASKS_PATH="$tasks_dir"
: > "$out/full_size.jsonl"
for folder in "$tasks_dir"/kernelbench/*/; do
  task=$(basename "$folder")
  { cat "$folder/problem.py"; printf '\n\nModelNew = Model\n'; } > "$candidates/unchanged_$task.py"
  # Beside the unchanged model, this task's default-stream and hostile candidates at the same size.
  extra=$(ls tests/kernels/kernelbench/modelnew/cuda/{honest_default_stream,hostile_wrong_in_last_element}_"$task".py 2>/dev/null)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "/tmp/memory_$task.txt" &
  sampler=$!
  # shellcheck disable=SC2086
  # Its own timeout: a `timeout` around this script ends the script, not a verdict it started.
  timeout "${FULL_EVAL_TIMEOUT_S:-900}" "$K" eval --backend cuda --task "$task" --json --quiet --timing-budget 0.5 "$candidates/unchanged_$task.py" \
    $extra > "/tmp/verdict_$task.json" 2> "/tmp/verdict_$task.err"
  kill "$sampler" 2>/dev/null
  cp "/tmp/verdict_$task.json" "$out/verdict_$task.json"  # every stage's counters, for where the time goes
  python3 - "$task" "/tmp/verdict_$task.json" "/tmp/memory_$task.txt" "$folder/kernelbench.json" \
    >> "$out/full_size.jsonl" <<'PY'
import json, pathlib, sys
task, verdict_path, memory_path, spec_path = sys.argv[1:5]
peak = max((int(line) for line in open(memory_path) if line.strip().isdigit()), default=0)
spec = json.load(open(spec_path)).get("cuda", {})
text = open(verdict_path).read()
try:  # one candidate: one indented verdict; several: one verdict a line
    verdicts = [json.loads(text)]
except ValueError:
    verdicts = []
    for line in text.splitlines():
        try:
            verdicts.append(json.loads(line))
        except ValueError:
            pass
for verdict in verdicts or [{}]:
    if not isinstance(verdict, dict):
        verdict = {}
    verdict.setdefault("status", "no verdict")
    shapes = verdict.get("generalization") or {}
    print(json.dumps({"task": task, "candidate": pathlib.Path(verdict.get("candidate", "?")).name,
                  "status": verdict.get("status"), "speedup": verdict.get("speedup"),
                  "verdict_kind": (verdict.get("timing") or {}).get("comparison"), "total_s": verdict.get("total_s"),
                  "judged_at": shapes.get("decided_at"), "problem_sizes": spec.get("problem_sizes"),
                  "bench_bytes": spec.get("bench_bytes"), "peak_gpu_mib": peak,
                  "stages": {s.get("name"): round(s.get("seconds", 0), 1) for s in verdict.get("stages", [])},
                  "reason": verdict.get("reason", "")[:300]}))
PY
done
python3 - "$out/full_size.jsonl" >> "$out/full_size.md" <<'PY'
import json, sys
print("| task | candidate | status | speedup | timing | s | judged at | problem's sizes | tensors GB | peak GPU GiB | reason |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"| {r['task']} | {r['candidate']} | {r['status']} | {r['speedup']} | {r['verdict_kind']} | {r['total_s']} | {r['judged_at']} | "
          f"{r['problem_sizes']} | {(r['bench_bytes'] or 0) / 1e9:.1f} | {r['peak_gpu_mib'] / 1024:.1f} | {r['reason'][:160]} |")
PY
echo "all: $(( $(date +%s) - start )) s" >> "$out/full_size.md"
cat "$out/full_size.md"
