#!/usr/bin/env bash
# Runs on the GPU machine after scripts/gpu_pack.sh made .gpu/ here: `ksmith serve` on the GPU.
#   scripts/gpu_serve.sh share     the kernel time share CUPTI attributes (KernelBench ModelNew
#                                  candidates of problem 19) and a served reward round trip
#                                  (ksmith's /v1/rewards and KernelGYM's /evaluate) on cuda
#   scripts/gpu_serve.sh native    serve against eval on new native CUDA candidates (softmax, matmul)
#   scripts/gpu_serve.sh modelnew  the same for new ModelNew candidates (problem 19, the fast-build form)
#   scripts/gpu_serve.sh two       one server on two GPUs against eval on one (needs 2 GPUs)
# Writes $OUT/serve-<part>.md and the JSON beside it.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_env.sh
out=${OUT:-gpu-out}
mkdir -p "$out"
part=${1:-share}
md="$out/serve-$part.md"
tasks_dir=/tmp/ksmith-kb-tasks
import_problems() {
  if [[ ! -f "$tasks_dir/imported" ]]; then
    "$K" import kernelbench tests/data/kernelbench/level1 --problems 19,23 --out "$tasks_dir" --json --quiet \
      --gpu-bench-bytes 1073741824 > "$out/import.json" 2> "$out/import.err" && touch "$tasks_dir/imported"
  fi
  export KSMITH_TASKS_PATH="$tasks_dir"
}
modelnew=tests/kernels/kernelbench/modelnew/cuda
bench() { python3 bench/serve_throughput.py compare --ksmith "$K" --backend cuda "$@"; }
echo "# serve on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x$(nvidia-smi -L | wc -l), $(date -u +%FT%TZ)" > "$md"
case "$part" in
  share)
    import_problems
    for f in honest_load_inline_relu honest_torch_ops honest_triton_relu honest_fast_build_relu; do
      file=$(ls $modelnew/${f}*kb_l1_019_relu.py | head -1)
      "$K" eval --task kb_l1_019_relu --backend cuda --json -q "$file" > "$out/share-$f.json" 2> "$out/share-$f.err"
      python3 - "$out/share-$f.json" "$f" >> "$md" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print(f"- {sys.argv[2]}: {v['status']}, speedup {v.get('speedup')}, kernel_time_share {v.get('kernel_time_share')}, labels {v.get('labels', [])}")
PY
    done
    # A served round trip on the GPU: ksmith's rewards and KernelGYM's endpoints.
    python3 - "$K" >> "$md" 2>&1 <<'PY'
import json, os, signal, subprocess, sys, tempfile, time, urllib.request
sys.path.insert(0, "clients/python")
from ksmith_client import KsmithClient
k = sys.argv[1]
folder = tempfile.mkdtemp()
port_file = os.path.join(folder, "port")
log = open(os.path.join(folder, "serve.log"), "w")
proc = subprocess.Popen([k, "serve", "--listen", "127.0.0.1:0", "--no-auth", "--backend", "cuda", "--port-file", port_file,
                         "--db", os.path.join(folder, "runs.db")], stdout=log, stderr=log)
for _ in range(600):
    if os.path.exists(port_file) and open(port_file).read().endswith("\n"):
        break
    time.sleep(0.1)
port = int(open(port_file).read())
c = KsmithClient(f"http://127.0.0.1:{port}", token="")
seed = open("tasks/normalization/softmax/seed_cuda.cu").read()
wrong = seed.replace("expf(", "exp2f(")
t = time.time()
results = c.rewards([seed, wrong], task="softmax", backend="cuda")
print(f"- /v1/rewards softmax seed and a wrong twin: {[(r['status'], round(r['reward'], 3)) for r in results]} in {time.time() - t:.1f} s")
reference = open("tests/data/kernelbench/level1/19_ReLU.py").read()
kernel = open("tests/kernels/kernelbench/modelnew/cuda/honest_fast_build_relu_kb_l1_019_relu.py").read()
def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=900))
t = time.time()
post("/evaluate", {"task_id": "gpu_0", "reference_code": reference, "kernel_code": kernel, "backend": "cuda",
                   "num_correct_trials": 5, "num_perf_trials": 100, "timeout": 300, "workflow": "kernelbench"})
while True:
    status = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/status/gpu_0"))["status"]
    if status in ("completed", "failed"):
        break
    time.sleep(1)
r = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/results/gpu_0"))
print(f"- KernelGYM /evaluate (problem 19 imported on the fly, fast-build ModelNew): status {r['status']}, compiled {r['compiled']}, "
      f"correctness {r['correctness']}, decoy {r['decoy_kernel']}, speedup {r['speedup']}, kernel {r['kernel_runtime']} ms, "
      f"reference {r['reference_runtime']} ms, share {r['metadata']['ksmith_verdict'].get('kernel_time_share')}, {time.time() - t:.1f} s")
metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
print("- metrics: " + "; ".join(l for l in metrics.splitlines() if l.startswith(("ksmith_verdicts_total", "ksmith_workers"))))
proc.send_signal(signal.SIGTERM)
proc.wait(timeout=120)
print("- serve log: " + open(os.path.join(folder, "serve.log")).read().replace("\n", " | "))
PY
    ;;
  native)
    echo "| task | candidates | ksmith eval | ksmith serve | overhead | serve p50 / p95 / p99 |" >> "$md"
    echo "|---|---|---|---|---|---|" >> "$md"
    bench --task softmax tasks/normalization/softmax/seed_cuda.cu --copies 16 --jobs 3 --out "$out/serve-native-softmax.json" | tail -1 >> "$md"
    bench --task matmul tasks/gemm/matmul/seed_cuda.cu --copies 16 --jobs 3 --out "$out/serve-native-matmul.json" | tail -1 >> "$md"
    ;;
  modelnew)
    import_problems
    echo "| task | candidates | ksmith eval | ksmith serve | overhead | serve p50 / p95 / p99 |" >> "$md"
    echo "|---|---|---|---|---|---|" >> "$md"
    bench --task kb_l1_019_relu $modelnew/honest_fast_build_relu_kb_l1_019_relu.py --copies 12 --jobs 3 ${SERVE_FIRST:+--serve-first} \
      --out "$out/serve-modelnew.json" | tail -1 >> "$md"
    ;;
  two)
    echo "| task | candidates | ksmith eval (GPU 0) | ksmith serve (GPUs 0,1) | change | serve p50 / p95 / p99 |" >> "$md"
    echo "|---|---|---|---|---|---|" >> "$md"
    bench --task softmax tasks/normalization/softmax/seed_cuda.cu --copies 32 --jobs 3 --serve-devices 0,1 \
      --out "$out/serve-two.json" | tail -1 >> "$md"
    ;;
esac
cat "$md"
