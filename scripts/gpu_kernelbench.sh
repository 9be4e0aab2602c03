#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/gpu_pack.sh made .gpu/ here:
# imports KernelBench level-1 problems with the GPU's torch, then judges every KernelBench GPU
# candidate (tests/kernels/kernelbench/modelnew/cuda/*.py and tests/kernels/kernelbench/cuda/*.cu)
# whose task was imported, one `ksmith eval` per task, all tasks at once (their builds overlap on
# the cores; verdicts of different tasks may share the GPU, so read speedups as rough), and
# prints each verdict beside the status its header names.
#   scripts/gpu_kernelbench.sh [problems] [filter]   problems: --problems list (default below);
#                                                    filter: a regex on candidate file names
# Writes $OUT/kernelbench.md (the table), $OUT/verdicts.jsonl, $OUT/import.json and $OUT/pytest.txt
# (the package's pytest tests, the GPU's among them).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
problems=${1:-1,19,23,47,87,95}
filter=${2:-.}
kb=${KSMITH_TEST_KERNELBENCH_DIR:-}
if [[ -z "$kb" ]]; then
  for candidate_dir in tests/data/kernelbench .kb ../shared/kernelbench; do
    if [[ -d "$candidate_dir/level1" ]]; then kb=$candidate_dir; break; fi
  done
fi
tasks_dir=${KB_TASKS_DIR:-/tmp/ksmith-kb-tasks}
verdicts=/tmp/ksmith-kb-verdicts
rm -rf "$verdicts"
mkdir -p "$verdicts"
start=$(date +%s)
# The package's pytest tests, here where those that need the GPU run (python3: the one with torch).
python3 -B -m pytest -q -p no:cacheprovider tests/python > "$out/pytest.txt" 2>&1
if [[ ! -f "$tasks_dir/imported" ]]; then
  # KB_GPU_BENCH_BYTES: the import's --gpu-bench-bytes (0: the problem's own sizes where they fit a
  # tenth of the GPU). Tasks judged at once on one GPU need smaller shapes than one judged alone.
  "$K" import kernelbench "$kb/level1" --problems "$problems" --out "$tasks_dir" --json --quiet \
    --gpu-bench-bytes "${KB_GPU_BENCH_BYTES:-1073741824}" > "$out/import.json" \
    2> "$out/import.err" && touch "$tasks_dir/imported"
fi
echo "import: $(( $(date +%s) - start )) s" > "$out/kernelbench.md"
export KSMITH_TASKS_PATH="$tasks_dir"
declare -A by_task
for file in tests/kernels/kernelbench/modelnew/cuda/*.py tests/kernels/kernelbench/cuda/*.cu; do
  name=$(basename "$file")
  [[ "$name" =~ $filter ]] || continue
  [[ -n "${KB_EXCLUDE:-}" && "$name" =~ $KB_EXCLUDE ]] && continue
  task=kb_${name#*_kb_}  # <what it tries>_<task>.py, <kind>_<task>.cu
  task=${task%.*}
  [[ -d "$tasks_dir/kernelbench/$task" ]] || { echo "skipped $name: $task not imported" >> "$out/kernelbench.md"; continue; }
  by_task[$task]+="$file "
done
for task in "${!by_task[@]}"; do
  # shellcheck disable=SC2086
  timeout "${KB_EVAL_TIMEOUT_S:-1800}" "$K" eval --backend cuda --task "$task" --json --quiet --timing-budget 0.3 \
    ${by_task[$task]} \
    > "$verdicts/$task.jsonl" 2> "$verdicts/$task.err" &
done
wait
cat "$verdicts"/*.jsonl > "$out/verdicts.jsonl"
tail -n 5 "$verdicts"/*.err > "$out/eval.err" 2>/dev/null
echo "all: $(( $(date +%s) - start )) s" >> "$out/kernelbench.md"
python3 - "$verdicts"/*.jsonl >> "$out/kernelbench.md" <<'PY'
import json, pathlib, sys
rows, wrong = [], 0
verdicts = []
for text in sys.argv[1:]:
    try:  # one candidate: one indented verdict; several: one verdict a line
        verdicts.append(json.loads(pathlib.Path(text).read_text()))
        continue
    except ValueError:
        pass
    for line in pathlib.Path(text).read_text().splitlines():
        try:
            verdicts.append(json.loads(line))
        except ValueError:
            pass
for verdict in verdicts:
    if not isinstance(verdict, dict):
        continue
    path = pathlib.Path(verdict.get("candidate", "?"))
    first = path.read_text().splitlines()[0] if path.exists() else ""
    expect = first.split("expect:", 1)[1].strip() if "expect:" in first else "?"
    status = verdict.get("status", "?")
    wrong += status != expect
    shapes = verdict.get("generalization") or {}
    rows.append(f"| {'ok' if status == expect else 'MISMATCH'} | {path.name} | {expect} | {status} | "
                f"{verdict.get('speedup', '')} | {verdict.get('total_s', 0):.1f} | {shapes.get('generalizes', '')} | "
                f"{verdict.get('reason', '')[:300]} | {'; '.join(verdict.get('labels', []))[:120]} |")
print(f"\n{len(rows)} verdicts, {wrong} not as their header names\n")
print("| | candidate | expect | status | speedup | s | generalizes | reason | labels |\n|---|---|---|---|---|---|---|---|---|")
print("\n".join(sorted(rows)))
PY
cat "$out/kernelbench.md"
