#!/usr/bin/env python3
"""Throughput and latency of `ksmith serve` (docs/serve.md), stdlib only.

  compare: the same new candidates judged by `ksmith eval` (all at once, --jobs J) and through
           `ksmith serve` (local broker, --jobs J) in one call: verdicts per minute of each, the
           overhead, and the served jobs' p50/p95/p99 latency from submission to verdict.
  redis:   jobs per minute through `serve --broker redis://` with 1, 2, 4... CPU workers, on a
           redis-server of its own (AOF on).

Every candidate is new on each pass: a unique comment is appended, so its build is never cached.

  bench/serve_throughput.py compare --backend cuda --task softmax tasks/normalization/softmax/seed_cuda.cu --copies 16
  bench/serve_throughput.py redis --task vector_add tests/kernels/honest/vector_add_fast.cpp --jobs 60 --workers 1,2,4
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid


def new_copy(path, folder, index):
    """The candidate at `path` with a unique comment: a new build every time."""
    text = open(path).read()
    mark = "#" if path.endswith(".py") else "//"
    name = f"{index:03d}_{os.path.basename(path)}"
    out = os.path.join(folder, name)
    with open(out, "w") as f:
        f.write(text + f"\n{mark} serve_throughput {uuid.uuid4().hex}\n")
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, path, body, timeout=3600):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.load(reply)


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as reply:
        return json.load(reply)


def start_serve(ksmith, folder, args, env=None):
    port_file = os.path.join(folder, "serve.port")
    log = open(os.path.join(folder, "serve.log"), "w")
    proc = subprocess.Popen([ksmith, "serve", "--listen", "127.0.0.1:0", "--no-auth", "--port-file", port_file,
                             "--db", os.path.join(folder, "serve.db")] + args, stdout=log, stderr=log, env=env)
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"ksmith serve exited: {open(log.name).read()[-2000:]}")
        if os.path.exists(port_file) and open(port_file).read().endswith("\n"):
            return proc, int(open(port_file).read())
        time.sleep(0.05)
    sys.exit("ksmith serve did not come up in 120 s")


def stop(proc, timeout=120):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def serve_pass(port, task, backend, files, options):
    """Submits every file at once and waits for each verdict: wall time and each job's latency."""
    candidates = [{"task": task, "backend": backend, "source": open(f).read(), "file_name": os.path.basename(f)}
                  for f in files]
    start = time.time()
    jobs = post(port, "/v1/evaluations", {"candidates": candidates, "options": options})["jobs"]
    pending = {job["id"] for job in jobs}
    verdicts = {}
    while pending:
        for job_id in list(pending):
            state = get(port, f"/v1/evaluations/{job_id}")
            if state["state"] == "done":
                verdicts[job_id] = state
                pending.discard(job_id)
        time.sleep(0.2)
    wall = time.time() - start
    statuses = {}
    for v in verdicts.values():
        statuses[v["verdict"]["status"]] = statuses.get(v["verdict"]["status"], 0) + 1
    return wall, [latency_of(v) for v in verdicts.values()], statuses


def latency_of(job):
    """Seconds from submission to verdict, from the job's own timestamps."""
    def seconds(text):
        return time.mktime(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + text[19:-1])
    return seconds(job["finished_at"]) - seconds(job["submitted_at"])


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    low = int(k)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (k - low)


def compare(args):
    folder = tempfile.mkdtemp(prefix="serve-bench-")
    options = {"seeds": args.seeds} if args.seeds else {}
    def eval_pass():
        files = [new_copy(args.candidates[i % len(args.candidates)], folder, i) for i in range(args.copies)]
        command = [args.ksmith, "eval", "--task", args.task, "--backend", args.backend, "--jobs", str(args.jobs),
                   "--json", "-q"] + (["--seeds", str(args.seeds)] if args.seeds else [])
        start = time.time()
        run = subprocess.run(command + files, capture_output=True, text=True)
        wall = time.time() - start
        statuses = {}
        for line in run.stdout.splitlines():
            try:
                status = json.loads(line)["status"]
                statuses[status] = statuses.get(status, 0) + 1
            except (ValueError, KeyError):
                pass
        return wall, statuses

    def served_pass():
        files = [new_copy(args.candidates[i % len(args.candidates)], folder, 1000 + i) for i in range(args.copies)]
        serve_args = ["--backend", args.backend, "--jobs", str(args.jobs)]
        if args.serve_devices:
            serve_args += ["--devices", args.serve_devices]
        proc, port = start_serve(args.ksmith, folder, serve_args)
        try:
            return serve_pass(port, args.task, args.backend, files, options)
        finally:
            stop(proc)

    # Which goes first is a choice (--serve-first): the second pass finds the first's warm caches
    # of everything but the candidates.
    if args.serve_first:
        serve_wall, latencies, serve_statuses = served_pass()
        eval_wall, eval_statuses = eval_pass()
    else:
        eval_wall, eval_statuses = eval_pass()
        serve_wall, latencies, serve_statuses = served_pass()
    per_minute = lambda wall: 60 * args.copies / wall
    result = {
        "task": args.task, "backend": args.backend, "candidates": args.copies, "jobs": args.jobs,
        "serve_devices": args.serve_devices or "default", "serve_first": args.serve_first,
        "eval": {"wall_s": eval_wall, "verdicts_per_min": per_minute(eval_wall), "statuses": eval_statuses},
        "serve": {"wall_s": serve_wall, "verdicts_per_min": per_minute(serve_wall), "statuses": serve_statuses,
                  "latency_s": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                                "p99": percentile(latencies, 99)}},
        "overhead": serve_wall / eval_wall - 1,
    }
    print(json.dumps(result, indent=2))
    print(f"| {args.task} ({args.backend}) | {args.copies} | {eval_wall:.1f} s ({per_minute(eval_wall):.1f}/min) | "
          f"{serve_wall:.1f} s ({per_minute(serve_wall):.1f}/min) | {100 * result['overhead']:+.1f}% | "
          f"{percentile(latencies, 50):.1f} / {percentile(latencies, 95):.1f} / {percentile(latencies, 99):.1f} s |")
    shutil.rmtree(folder, ignore_errors=True)
    return result


def redis(args):
    if not shutil.which("redis-server"):
        sys.exit("no redis-server (Debian: apt-get install redis-server)")
    rows = []
    for workers in [int(w) for w in args.workers.split(",")]:
        folder = tempfile.mkdtemp(prefix="serve-redis-bench-")
        port = free_port()
        redis_proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", folder,
                                       "--appendonly", "yes", "--save", ""], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        broker = f"redis://127.0.0.1:{port}/bench"
        proc, http_port = start_serve(args.ksmith, folder, ["--backend", args.backend, "--broker", broker])
        worker_procs = [subprocess.Popen([args.ksmith, "worker", "--broker", broker, "--backend", args.backend,
                                          "--name", f"w{i}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        for i in range(workers)]
        try:
            files = [new_copy(args.candidates[i % len(args.candidates)], folder, i) for i in range(args.copies)]
            options = {"seeds": args.seeds or 1, "time": not args.no_time}
            wall, latencies, statuses = serve_pass(http_port, args.task, args.backend, files, options)
        finally:
            for w in worker_procs:
                w.send_signal(signal.SIGTERM)
            for w in worker_procs:
                w.wait(timeout=120)
            stop(proc)
            redis_proc.terminate()
            redis_proc.wait(timeout=30)
            shutil.rmtree(folder, ignore_errors=True)
        rows.append({"workers": workers, "jobs": args.copies, "wall_s": wall, "jobs_per_min": 60 * args.copies / wall,
                     "p50_s": percentile(latencies, 50), "p95_s": percentile(latencies, 95), "statuses": statuses})
        print(f"| {workers} | {args.copies} | {wall:.1f} s | {60 * args.copies / wall:.1f} | "
              f"{percentile(latencies, 50):.1f} / {percentile(latencies, 95):.1f} s | {statuses} |", flush=True)
    print(json.dumps(rows, indent=2))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["compare", "redis"])
    parser.add_argument("candidates", nargs="+", help="candidate files, used in turn")
    parser.add_argument("--ksmith", default="build/ksmith")
    parser.add_argument("--task", required=True)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--copies", type=int, default=16, help="new candidates per pass")
    parser.add_argument("--jobs", type=int, default=3, help="compare: evaluations at once (eval --jobs, serve --jobs)")
    parser.add_argument("--serve-first", action="store_true", help="compare: the served pass before eval's")
    parser.add_argument("--serve-devices", help="compare: the server's --devices (eval keeps its default device)")
    parser.add_argument("--workers", default="1,2,4", help="redis: worker counts to try")
    parser.add_argument("--seeds", type=int, default=0, help="seeds per shape (0: the default)")
    parser.add_argument("--no-time", action="store_true", help="redis: verify only")
    parser.add_argument("--out", help="write the JSON result here")
    args = parser.parse_args()
    result = compare(args) if args.mode == "compare" else redis(args)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
