#!/usr/bin/env python3
"""Benchmarks of `ksmith eval` on this machine; results go into docs/benchmarks.md by hand.

  bench/eval_bench.py latency        verdict latency per task, cold and cached build, median of 5
  bench/eval_bench.py repeatability  one kernel evaluated 5 times: spread of the reported speedup
  bench/eval_bench.py suite          every level-1 task's seed kernel, cached build: median verdict
                                     (RUNS, default 3), each stage's share, for each build in KSMITHS
                                     (label=path pairs, comma-separated; default: this build)
Run from the repository root after `scripts/setup.sh build`.
"""
import collections
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
KSMITH = ROOT / "build" / "ksmith"
HONEST = ROOT / "tests" / "kernels" / "honest"
TASKS = ["vector_add", "relu", "gelu", "softmax", "layernorm", "rmsnorm", "row_sum", "transpose", "matmul"]


def evaluate(task, kernel, cache_dir, extra=(), ksmith=KSMITH):
    env = dict(os.environ, KSMITH_CACHE_DIR=str(cache_dir))
    start = time.perf_counter()
    out = subprocess.run([str(ksmith), "eval", "--quiet", "--json", "--task", task, *extra, str(kernel)],
                         capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    verdict = json.loads(out.stdout)
    if verdict["status"] != "passed":
        sys.exit(f"{task}: {verdict['status']}: {verdict['reason']}")
    return wall, verdict


def fresh_cache(machine_files):
    directory = pathlib.Path(tempfile.mkdtemp(prefix="ksmith-bench-"))
    for path in machine_files:  # keep the measured machine facts; only builds start cold
        shutil.copy(path, directory)
    return directory


def latency(runs=5):
    home_cache = pathlib.Path(tempfile.mkdtemp(prefix="ksmith-bench-home-"))
    evaluate("vector_add", HONEST / "vector_add_fast.cpp", home_cache)  # measures the machine once
    machine_files = list(home_cache.glob("machine-*.json"))
    print("| task | cold build: median wall [s] | cached: median wall [s] | cached: correctness / timing / recheck [s] | cases |")
    print("|---|---|---|---|---|")
    for task in TASKS:
        kernel = HONEST / f"{task}_fast.cpp"
        cold = []
        for _ in range(runs):
            cache = fresh_cache(machine_files)
            cold.append(evaluate(task, kernel, cache)[0])
            shutil.rmtree(cache)
        cached, stages = [], []
        for _ in range(runs):
            wall, verdict = evaluate(task, kernel, home_cache)
            cached.append(wall)
            stages.append({s["name"]: s["seconds"] for s in verdict["stages"]})
        pick = lambda name: statistics.median(s.get(name, 0.0) for s in stages)
        cases = next(s["details"].get("cases") for s in verdict["stages"] if s["name"] == "correctness")
        print(f"| {task} | {statistics.median(cold):.2f} | {statistics.median(cached):.2f} | "
              f"{pick('correctness'):.2f} / {pick('timing'):.2f} / {pick('recheck'):.2f} | {cases} |")
    shutil.rmtree(home_cache)


def repeatability(runs=5):
    cache = pathlib.Path(tempfile.mkdtemp(prefix="ksmith-bench-rep-"))
    print("| kernel | timing budget [s] | speedups | median | spread (max-min)/median |")
    print("|---|---|---|---|---|")
    for budget in ["1", "3"]:
        for task in ["softmax", "matmul", "vector_add"]:
            speedups = [evaluate(task, HONEST / f"{task}_fast.cpp", cache, ("--timing-budget", budget))[1]["speedup"]
                        for _ in range(runs)]
            median = statistics.median(speedups)
            spread = (max(speedups) - min(speedups)) / median
            print(f"| {task}_fast | {budget} | {', '.join(f'{s:.3f}' for s in speedups)} | {median:.3f} | "
                  f"{100 * spread:.1f}% |")
    shutil.rmtree(cache)


def level1_tasks():
    tasks = []
    for toml in sorted((ROOT / "tasks").glob("*/*/task.toml")):
        text = toml.read_text()
        if "level = 2" not in text:
            tasks.append(toml.parent)
    return tasks


def suite(runs=int(os.environ.get("RUNS", "3"))):
    """The cached verdict of every level-1 task's seed kernel, side by side for each build."""
    builds = [pair.split("=", 1) for pair in os.environ.get("KSMITHS", f"this={KSMITH}").split(",")]
    home_cache = pathlib.Path(tempfile.mkdtemp(prefix="ksmith-bench-suite-"))
    tasks = level1_tasks()
    if os.environ.get("SUITE_TASKS"):  # a subset, by name
        tasks = [folder for folder in tasks if folder.name in os.environ["SUITE_TASKS"].split()]
    labels = [label for label, _ in builds]
    print("| task | " + " | ".join(f"{label}: verdict [s]" for label in labels) +
          " | " + " | ".join(f"{label}: correctness / timing / recheck [s] (timing stopped by)" for label in labels) + " |")
    print("|---|" + "---|" * (2 * len(builds)))
    totals = {label: [] for label in labels}
    stopped = {label: collections.Counter() for label in labels}
    for folder in tasks:
        task = folder.name
        cells, shares = [], []
        for label, path in builds:
            try:
                evaluate(str(folder), folder / "seed_cpu.cc", home_cache, ksmith=path)  # builds the kernels once
                verdicts = [evaluate(str(folder), folder / "seed_cpu.cc", home_cache, ksmith=path)[1]
                            for _ in range(runs)]
            except SystemExit as failure:  # a verdict that did not pass: say so, go on
                cells.append("failed")
                shares.append(str(failure)[:80])
                continue
            total = statistics.median(v["total_s"] for v in verdicts)
            pick = lambda name: statistics.median(
                sum(s["seconds"] for s in v["stages"] if s["name"] == name) for v in verdicts)
            totals[label].append(total)
            cells.append(f"{total:.2f}")
            # Why each run's timing loop stopped (interval, decided, budget), counted.
            stops = collections.Counter(s["details"].get("stopped_by", "?") for v in verdicts for s in v["stages"]
                                        if s["name"] == "timing")
            stopped[label].update(stops)
            shares.append(f"{pick('correctness'):.2f} / {pick('timing'):.2f} / {pick('recheck'):.2f} "
                          f"({', '.join(f'{k} {n}' for k, n in sorted(stops.items()))})")
        print(f"| {task} | " + " | ".join(cells) + " | " + " | ".join(shares) + " |")
        sys.stdout.flush()
    for label in labels:
        values = sorted(totals[label])
        print(f"\n{label}: median {statistics.median(values):.2f} s, fastest {values[0]:.2f} s, slowest "
              f"{values[-1]:.2f} s, {sum(v <= 1.0 for v in values)} of {len(values)} tasks at or under 1 s; timing "
              f"stopped by {dict(sorted(stopped[label].items()))}")
    shutil.rmtree(home_cache)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "latency"
    {"latency": latency, "repeatability": repeatability, "suite": suite}[what]()
