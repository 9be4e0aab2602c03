#!/usr/bin/env bash
# The opencl backend on the GPU machine (docs/gpu.md). NVIDIA's OpenCL library ships there but is
# not registered with the loader: this registers it (/etc/OpenCL/vendors/nvidia.icd), then
#   gpu_opencl.sh check   every OpenCL task's seed (timed) and baseline, the OpenCL red-team and
#                         honest kernels, each verdict's latency; the devices ksmith sees
#   gpu_opencl.sh tune N  each OpenCL task tuned on both backends (N candidates each), then the
#                         best CUDA kernel timed at the OpenCL task's bench shape (--sweep), so that
#                         both are timed at the same shape
# Results under $OUT (or ./gpu-out): one JSON per verdict, summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo "libnvidia-opencl.so.1" > /etc/OpenCL/vendors/nvidia.icd
fi
"$K" doctor --json > "$out/doctor.json" 2> "$out/doctor.err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get("opencl"), indent=1))' "$out/doctor.json" > "$out/opencl_devices.json"
tasks=$(for f in tasks/*/*/baseline_opencl.cl; do basename "$(dirname "$f")"; done)
summary="$out/summary.txt"
# Every verdict's JSON goes to $work, packed into one archive at the end (the device tool brings
# back a limited number of files).
work=$(mktemp -d)
trap 'tar -czf "$out/verdicts.tar.gz" -C "$work" . 2>/dev/null' EXIT
status_of() { python3 -c 'import json,sys
try:
  d=json.load(open(sys.argv[1])); t=d.get("timing") or {}
  print(d.get("status"), d.get("total_s", d.get("provenance",{}).get("total_s","")), (t.get("candidate_us") or {}).get("median",""), (t.get("baseline_us") or {}).get("median",""), d.get("reason","")[:160])
except Exception as e: print("unreadable", e)' "$1"; }
case "${1:-check}" in
  check)
    for task in $tasks; do
      dir=$(dirname tasks/*/"$task"/task.toml)
      start=$(date +%s%N)
      "$K" eval --backend opencl --task "$task" --json --quiet "$dir/seed_opencl.cl" > "$work/seed_$task.json" 2> "$work/seed_$task.err"
      end=$(date +%s%N)
      echo "seed $task wall $(( (end - start) / 1000000 )) ms: $(status_of "$work/seed_$task.json")" >> "$summary"
      "$K" eval --backend opencl --task "$task" --json --quiet --no-time "$dir/baseline_opencl.cl" > "$work/baseline_$task.json" 2>&1
      echo "baseline $task: $(status_of "$work/baseline_$task.json")" >> "$summary"
    done
    for file in tests/kernels/opencl/redteam/*.cl tests/kernels/opencl/honest/*.cl; do
      name=$(basename "$file" .cl)
      task=""
      for candidate in $tasks; do
        case "$name" in *_"$candidate"|"$candidate"_*) [ ${#candidate} -gt ${#task} ] && task=$candidate ;; esac
      done
      args=$(sed -n 's#^// args: ##p' "$file")
      expect=$(sed -n '1s#^// expect: ##p' "$file")
      timeout 120 "$K" eval --backend opencl --task "$task" --json --quiet --timing-budget 0.3 $args "$file" > "$work/kernel_$name.json" 2>&1
      echo "kernel $name (expect ${expect:-passed}): $(status_of "$work/kernel_$name.json")" >> "$summary"
    done
    ;;
  tune)
    # Both backends tune their seed with the same number of candidates; then both best kernels are
    # timed again at the OpenCL task's bench shape (the CPU's: an OpenCL task keeps it on every
    # device), CUDA's through --sweep, so that the two times are of the same work.
    n=${2:-6}
    for task in $tasks; do
      for backend in opencl cuda; do
        "$K" optimize --backend "$backend" --task "$task" --strategy tune --max-candidates "$n" --timing-budget 0.5 \
          --db "$work/runs.db" --output-dir "$work/tune_${backend}_$task" --json > "$work/tune_${backend}_$task.json" 2> "$work/tune_${backend}_$task.err"
      done
      sweep=$(python3 -c 'import tomllib,sys
t=tomllib.load(open(sys.argv[1],"rb")); print(" ".join(f"--sweep {k}={v}" for k,v in t["shapes"]["bench"].items()))' tasks/*/"$task"/task.toml)
      "$K" eval --backend opencl --task "$task" --json --quiet $sweep "$work/tune_opencl_$task/best.cl" > "$work/best_opencl_$task.json" 2>&1
      "$K" eval --backend cuda --task "$task" --json --quiet $sweep "$work/tune_cuda_$task/best.cu" > "$work/best_cuda_$task.json" 2>&1
      python3 scripts/gpu_opencl_compare.py "$task" "$work/best_opencl_$task.json" "$work/best_cuda_$task.json" >> "$summary"
    done
    ;;
esac
cat "$summary"
