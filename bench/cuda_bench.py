#!/usr/bin/env python3
"""Benchmarks of `ksmith eval --backend cuda`, run on the GPU machine; results go into
docs/benchmarks.md by hand.

  bench/cuda_bench.py breakdown      each stage's seconds and the correctness stage's counters, per task
  bench/cuda_bench.py latency        a new (uncached) candidate per run: compile / verify / time
  bench/cuda_bench.py throughput     COUNT (default 24) new candidates in one `ksmith eval`: verdicts per minute
  bench/cuda_bench.py repeatability  one kernel evaluated 5 times: spread of its cold time
  bench/cuda_bench.py spares         verdicts in pre-started workers against fresh ones: cold time, seconds
  bench/cuda_bench.py ncu            our cold time against ncu's gpu__time_duration, same kernel
  bench/cuda_bench.py all            all of the above
KSMITH names the ksmith binary (default: .gpu/bin/ksmith, see scripts/gpu_env.sh); EXTRA more
`ksmith eval` arguments for every run (e.g. "--tie-band 0": timing without the decided stop); RUNS the
latency and breakdown runs per task (default 5); LABEL names the binary in the breakdown; VERDICTS
a JSON-lines file for every verdict the breakdown measured; COUNT, TASKS and JOBS the throughput's
candidates, tasks and --jobs values; FORM=nvrtc has latency, breakdown and throughput judge the
NVRTC-form kernels (tests/kernels/cuda/honest/<task>_nvrtc.cu, built by NVRTC) instead of the
nvcc-built <task>_fast.cu (throughput: and _slow.cu); SPARES=1 has latency and breakdown measure
verdicts in pre-started workers (the 2nd on of one multi-candidate eval).
"""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
KSMITH = os.environ.get("KSMITH", str(ROOT / ".gpu" / "bin" / "ksmith"))
EXTRA = os.environ.get("EXTRA", "").split()
HONEST = ROOT / "tests" / "kernels" / "cuda" / "honest"
FORM = os.environ.get("FORM", "nvcc")
VERIFY_STAGES = ("sandbox", "correctness", "idle_check", "recheck", "physical_limit", "close", "release")


def evaluate(task, kernels, extra=()):
    """One `ksmith eval` over `kernels`; returns (wall seconds, verdicts)."""
    start = time.perf_counter()
    out = subprocess.run([KSMITH, "eval", "--backend", "cuda", "--quiet", "--json", "--task", task,
                          *EXTRA, *extra, *map(str, kernels)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    text = out.stdout.strip()
    verdicts = [json.loads(line) for line in text.splitlines()] if len(kernels) > 1 else [json.loads(text)]
    for verdict in verdicts:
        if verdict["status"] != "passed":
            sys.exit(f"{task}: {verdict['status']}: {verdict['reason']}")
    return wall, verdicts


def new_kernel(task, fast=True):
    """The honest kernel a new-candidate measurement judges: in the NVRTC form where FORM says so."""
    if FORM == "nvrtc":
        return HONEST / f"{task}_nvrtc.cu"
    return HONEST / f"{task}_{'fast' if fast else 'slow'}.cu"


def fresh_variant(kernel, directory, index):
    """The same kernel with a unique comment: a new source, so nvcc really runs."""
    path = pathlib.Path(directory) / f"{kernel.stem}_{index}_{time.time_ns()}.cu"
    path.write_text(kernel.read_text() + f"\n// variant {index} {time.time_ns()}\n")
    return path


def stage_seconds(verdict, names):
    return sum(stage.get("seconds", 0) for stage in verdict["stages"] if stage["name"] in names)


def stage(verdict, name):
    return next(s for s in verdict["stages"] if s["name"] == name)


LATENCY_TASKS = ("vector_add", "relu", "softmax", "matmul")


def new_candidate_verdicts(directory, runs):
    """Per latency task: `runs` verdicts of its honest fast kernel, each a new build (a first,
    unmeasured one warms the caches). Yields (task, [(wall seconds, verdict)]). SPARES=1: the
    `runs` verdicts after the first of one `ksmith eval --jobs 1`, whose workers were started
    ahead (a series of candidates, as search and the service judge them); the wall is then the
    eval's divided by its verdicts."""
    for task in LATENCY_TASKS:
        evaluate(task, [fresh_variant(new_kernel(task), directory, 0)])
        if os.environ.get("SPARES") == "1":
            kernels = [fresh_variant(new_kernel(task), directory, run + 1) for run in range(runs + 1)]
            wall, verdicts = evaluate(task, kernels, ("--jobs", "1"))
            ahead = [v for v in verdicts if v.get("provenance", {}).get("workers_started_ahead_s")]
            yield task, [(wall / len(verdicts), verdict) for verdict in ahead]
            continue
        results = []
        for run in range(runs):
            wall, (verdict,) = evaluate(task, [fresh_variant(new_kernel(task), directory, run + 1)])
            results.append((wall, verdict))
        yield task, results


def latency(runs=int(os.environ.get("RUNS", "5"))):
    print(f"## Verdict latency, new candidate, {FORM} form (median of {runs}; trusted builds cached)\n")
    print("| task | wall s | total_s | compile s | verify s | time s | of verify: start / correctness / recheck / release s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for task, results in new_candidate_verdicts(directory, runs):
            rows = []
            for wall, verdict in results:
                rows.append((wall, verdict["total_s"], stage(verdict, "build")["details"]["compile_s"],
                             stage_seconds(verdict, VERIFY_STAGES), stage_seconds(verdict, ("timing",)),
                             *(stage_seconds(verdict, (name,)) for name in ("sandbox", "correctness", "recheck", "release"))))
            medians = [statistics.median(column) for column in zip(*rows)]
            print(f"| {task} | " + " | ".join(f"{value:.2f}" for value in medians[:5]) + " | " +
                  " / ".join(f"{value:.2f}" for value in medians[5:]) + " |")
    print()


def breakdown(runs=int(os.environ.get("RUNS", "5"))):
    """Where a new candidate's verdict spends its time, stage by stage, median of `runs`.

    VERDICTS names a JSON-lines file that gets every verdict measured (for a later look)."""
    label = os.environ.get("LABEL", pathlib.Path(KSMITH).parent.parent.name)
    workers = "workers started ahead" if os.environ.get("SPARES") == "1" else "workers started for each"
    print(f"## Where a verdict's time goes ({label}: {KSMITH}; median of {runs}, trusted builds cached, {workers})\n")
    columns = ["total", "sandbox", "build", "compile", "correctness", "cand. request", "ref. wait", "case wait",
               "arena prep", "snapshot", "host check", "check wait", "download", "idle", "timing", "final check",
               "recheck", "close", "release", "timing stopped by"]
    print("| task | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    saved = open(os.environ["VERDICTS"], "a") if os.environ.get("VERDICTS") else None
    phases_by_task = {}

    def first_known(*values):  # 0.0 is a measurement, not a missing one
        return next((value for value in values if value is not None), None)

    def counter(verdict, name, group, key):
        value = stage(verdict, name)["details"].get(group, {}).get(key)
        return None if value is None else value / 1000

    with tempfile.TemporaryDirectory() as directory:
        for task, results in new_candidate_verdicts(directory, runs):
            rows = []
            for _, verdict in results:
                if saved:
                    saved.write(json.dumps({"label": label, "task": task, "verdict": verdict}) + "\n")
                timing = stage(verdict, "timing")["details"]
                rows.append((verdict["total_s"], stage_seconds(verdict, ("sandbox",)), stage_seconds(verdict, ("build",)),
                             stage(verdict, "build")["details"]["compile_s"],
                             stage_seconds(verdict, ("correctness",)),
                             counter(verdict, "correctness", "evaluator_ms", "candidate_request"),
                             counter(verdict, "correctness", "evaluator_ms", "reference_wait"),
                             # the wait for the next case's inputs (and, since the case feed, its answers)
                             first_known(counter(verdict, "correctness", "evaluator_ms", "case_wait"),
                                         counter(verdict, "correctness", "evaluator_ms", "inputs_wait")),
                             counter(verdict, "correctness", "evaluator_ms", "arena_prepare"),
                             counter(verdict, "correctness", "evaluator_ms", "snapshot"),
                             counter(verdict, "correctness", "evaluator_ms", "check"),
                             counter(verdict, "correctness", "evaluator_ms", "check_wait"),
                             counter(verdict, "correctness", "worker_phase_ms", "download"),
                             stage_seconds(verdict, ("idle_check",)), stage_seconds(verdict, ("timing",)),
                             timing.get("final_check_s"), stage_seconds(verdict, ("recheck",)),
                             stage_seconds(verdict, ("close",)), stage_seconds(verdict, ("release",))))
            cells = []
            for column in zip(*rows):
                known = [value for value in column if value is not None]
                cells.append(f"{statistics.median(known):.2f}" if known else "-")
            cells.append(stopped_by_counts(verdict for _, verdict in results))
            print(f"| {task} | " + " | ".join(cells) + " |")
            sys.stdout.flush()
            phases_by_task[task] = [stage(verdict, "timing")["details"].get("worker_phase_ms", {}) for _, verdict in results]
    print()
    # The worker's timing call, phase by phase (median ms), where the worker reports them.
    names = sorted({name for runs in phases_by_task.values() for phases in runs for name in phases})
    if names:
        print("Timing in the worker, median ms per phase:\n")
        print("| task | " + " | ".join(name.removeprefix("timing_") for name in names) + " |")
        print("|---|" + "---|" * len(names))
        for task, runs in phases_by_task.items():
            cells = []
            for name in names:
                known = [phases[name] for phases in runs if name in phases]
                cells.append(f"{statistics.median(known):.1f}" if known else "-")
            print(f"| {task} | " + " | ".join(cells) + " |")
        print()


def stopped_by_counts(verdicts):
    """Why each verdict's timing loop ended, counted: "decided 4, budget 1"."""
    counts = {}
    for verdict in verdicts:
        reason = stage(verdict, "timing")["details"].get("stopped_by", "?")
        counts[reason] = counts.get(reason, 0) + 1
    return ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items()))


def throughput(count=int(os.environ.get("COUNT", "24")), tasks=tuple(os.environ.get("TASKS", "vector_add softmax").split()),
               jobs_list=tuple(int(jobs) for jobs in os.environ.get("JOBS", "3 6").split())):
    print(f"## Sustained verdicts per minute, {FORM} form ({count} new candidates in one `ksmith eval`)\n")
    print("| task | --jobs | verdicts | wall s | per minute | fast kernel's cold us: median (spread) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for task in tasks:
            for jobs in jobs_list:
                kernels = [fresh_variant(new_kernel(task, fast=i % 2 == 1), directory, i)
                           for i in range(count)]
                wall, verdicts = evaluate(task, kernels, ("--jobs", str(jobs)))
                # Timing takes the GPU alone: the same kernel must time the same under load.
                colds = [stage(v, "timing")["details"]["candidate"]["cold_us"] for v in verdicts[1::2]]
                spread = (max(colds) - min(colds)) / statistics.median(colds)
                print(f"| {task} | {jobs} | {len(verdicts)} | {wall:.1f} | {60 * len(verdicts) / wall:.1f} | "
                      f"{statistics.median(colds):.1f} ({100 * spread:.2f}%) |")
                sys.stdout.flush()
    print()


def repeatability(runs=5):
    print(f"## Timing repeatability ({runs} evaluations of the same kernel)\n")
    print("| kernel | cold us per run | spread (max-min)/median | speedup per run | timing s (median) | stopped by |")
    print("|---|---|---|---|---|---|")
    for task in ("vector_add", "softmax", "row_sum", "transpose", "matmul"):
        kernel = HONEST / f"{task}_fast.cu"
        colds, speedups, verdicts = [], [], []
        for _ in range(runs):
            _, (verdict,) = evaluate(task, [kernel])
            verdicts.append(verdict)
            timing = stage(verdict, "timing")["details"]
            colds.append(timing["candidate"]["cold_us"])
            speedups.append(verdict["speedup"]["median"] if isinstance(verdict["speedup"], dict) else verdict["speedup"])
        spread = (max(colds) - min(colds)) / statistics.median(colds)
        timing_s = statistics.median(stage_seconds(v, ("timing",)) for v in verdicts)
        print(f"| {task}_fast | {', '.join(f'{c:.1f}' for c in colds)} | {100 * spread:.2f}% | "
              f"{', '.join(f'{s:.3f}' for s in speedups)} | {timing_s:.2f} | {stopped_by_counts(verdicts)} |")
    print()


def spares(rounds=int(os.environ.get("RUNS", "3")), count=6):
    """Pre-started workers: a kernel's verdicts in workers started for it (a one-candidate `ksmith
    eval`, whose workers start as it does) against those in spares started before it arrived (the
    2nd to `count`th of a `count`-candidate eval, --jobs 1), interleaved `rounds` times. Its cold
    time must not differ; the verdict's seconds are what the spare saves."""
    print(f"## Pre-started workers against fresh ones ({rounds} rounds: two fresh verdicts, then {count} "
          "in one eval, the 2nd on in spares)\n")
    print("| kernel | workers | verdicts | cold us: median (spread) | verdict total_s median | sandbox s median | started ahead s median |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for task in ("vector_add", "matmul"):
            kernel = new_kernel(task)
            evaluate(task, [fresh_variant(kernel, directory, 0)])  # the trusted builds, cached
            sides = {"fresh": [], "pre-started": []}
            for round_index in range(rounds):
                for i in range(2):
                    _, (verdict,) = evaluate(task, [fresh_variant(kernel, directory, 100 * round_index + i + 1)])
                    sides["fresh"].append(verdict)
                kernels = [fresh_variant(kernel, directory, 100 * round_index + 10 + i) for i in range(count)]
                _, verdicts = evaluate(task, kernels, ("--jobs", "1"))
                for verdict in verdicts:
                    ahead = verdict.get("provenance", {}).get("workers_started_ahead_s")
                    sides["pre-started" if ahead else "fresh"].append(verdict)
            for side, verdicts in sides.items():
                if not verdicts:
                    print(f"| {kernel.name} | {side} | 0 | - | - | - | - |")
                    continue
                colds = [stage(v, "timing")["details"]["candidate"]["cold_us"] for v in verdicts]
                spread = (max(colds) - min(colds)) / statistics.median(colds)
                ahead = [v.get("provenance", {}).get("workers_started_ahead_s", 0) for v in verdicts]
                print(f"| {kernel.name} | {side} | {len(verdicts)} | {statistics.median(colds):.2f} ({100 * spread:.2f}%) | "
                      f"{statistics.median(v['total_s'] for v in verdicts):.2f} | "
                      f"{statistics.median(stage_seconds(v, ('sandbox',)) for v in verdicts):.3f} | "
                      f"{statistics.median(ahead):.2f} |")
                sys.stdout.flush()
    print()


def ncu():
    print("## Our cold time against ncu's gpu__time_duration (same kernel, bench shape)\n")
    print("| kernel | ksmith cold us | ncu us | ratio |")
    print("|---|---|---|---|")
    for task in ("vector_add", "softmax", "transpose", "matmul"):
        _, (verdict,) = evaluate(task, [HONEST / f"{task}_fast.cu"], ("--profile",))
        cold = stage(verdict, "timing")["details"]["candidate"]["cold_us"]
        profile = stage(verdict, "profile")["details"]
        kernels = profile.get("kernels", [])
        ncu_ns = sum(k["metrics"].get("gpu__time_duration.sum", 0) for k in kernels)
        if not kernels:
            print(f"| {task}_fast | {cold:.1f} | - | {profile.get('summary')} |")
            continue
        print(f"| {task}_fast | {cold:.1f} | {ncu_ns / 1000:.1f} | {cold / (ncu_ns / 1000):.3f} |")
        for fact in profile.get("facts", [])[:3]:
            print(f"|  | {fact} | | |")
    print()


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    steps = {"latency": latency, "breakdown": breakdown, "throughput": throughput, "repeatability": repeatability,
             "spares": spares, "ncu": ncu}
    for name, step in steps.items():
        if what in (name, "all"):
            step()
            sys.stdout.flush()


if __name__ == "__main__":
    main()
