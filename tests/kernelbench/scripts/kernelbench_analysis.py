#!/usr/bin/env python3
"""KernelBench's analysis of a run, read the way its scripts read it, to check that they run
unchanged on what `ksmith kernelbench run` writes (eval_results.json and baseline_time_torch.json).

This follows scripts/benchmark_eval_analysis.py's analyze_greedy_eval and src/kernelbench/score.py
of ScalingIntelligence/KernelBench (commit 423217d) step for step: the same files, keys, lookups,
filters and formulas, so that a field it reads and ksmith leaves out raises here as it would
there (KeyError, the assertion on sample 0). Its own imports (pydra, tabulate, the dataset module)
are not needed for that: the dataset is the level folder's problem files, as its local dataset
lists them ("<id>_<name>.py"). Written for ksmith's tests; it does not copy KernelBench's code.

    kernelbench_analysis.py --level-dir DIR --level L --eval-results FILE --baseline-file FILE
Prints the analysis' results dict as JSON, plus the warnings it would print.
"""
import argparse
import json
import os
import sys

import numpy as np


def problems_of(level_dir):
    """{problem id: file name}, as KernelBench's local dataset finds them."""
    problems = {}
    for file_name in os.listdir(level_dir):
        if not file_name.endswith(".py"):
            continue
        try:
            problem_id = int(file_name.split("_")[0])
        except ValueError:
            continue
        problems[problem_id] = file_name
    return problems


def analyze(level_dir, level, eval_results_path, baseline_path):
    problems = problems_of(level_dir)
    with open(eval_results_path) as f:
        eval_results = json.load(f)
    with open(baseline_path) as f:
        baseline_results = json.load(f)
    total_count = len(problems)
    total_eval = len(eval_results)

    # Only sample 0 of each problem, at most one entry of it.
    stripped = {}
    for key, result in eval_results.items():
        entry = [r for r in result if r["sample_id"] == 0]
        assert len(entry) <= 1, "Multiple entries for sample_id = 0"
        if len(entry) == 1:
            stripped[key] = entry[0]
    eval_results = stripped
    # Problems without results count as not compiled and not correct.
    for pid in problems:
        if str(pid) not in eval_results:
            eval_results[str(pid)] = {"sample_id": 0, "compiled": False, "correctness": False, "metadata": {},
                                      "runtime": -1.0, "runtime_stats": {}}
    compiled_count = sum(1 for entry in eval_results.values() if entry["compiled"] == True)  # noqa: E712
    correct_count = sum(1 for entry in eval_results.values() if entry["correctness"] == True)  # noqa: E712

    warnings = []
    is_correct, baseline_speed, actual_speed = [], [], []
    for pid in sorted(problems):
        if str(pid) not in eval_results:
            warnings.append(f"Problem {pid} not found in eval results")
            continue
        entry = eval_results[str(pid)]
        name = problems[pid]
        if name not in baseline_results[f"level{level}"]:
            warnings.append(f"Problem {name} not found in baseline results")
            continue
        is_correct.append(entry["correctness"])
        actual_speed.append(entry["runtime"])
        baseline_speed.append(baseline_results[f"level{level}"][name]["mean"])
    is_correct = np.array(is_correct)
    baseline_speed = np.array(baseline_speed)
    actual_speed = np.array(actual_speed)
    n = len(is_correct)

    # score.py: geometric mean of baseline / runtime over correct samples; fast_p over all n.
    speed_up = np.array([b / a for b, a, ok in zip(baseline_speed, actual_speed, is_correct) if ok])
    n_correct = int(np.sum(is_correct)) if n else 0
    gmsr = float(np.prod(speed_up) ** (1 / n_correct)) if n_correct > 0 else 0.0
    fast_p = {str(p): float(np.sum(speed_up > p) / n) if n > 0 else 0.0 for p in [0.0, 0.5, 0.8, 1.0, 1.5, 2.0]}
    return {"level": level, "total_count": total_count, "total_eval": total_eval, "aligned": n,
            "compiled_count": compiled_count, "correct_count": correct_count,
            "geo_mean_speedup": gmsr, "fast_p": fast_p, "warnings": warnings}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level-dir", required=True)
    parser.add_argument("--level", type=int, required=True)
    parser.add_argument("--eval-results", required=True)
    parser.add_argument("--baseline-file", required=True)
    args = parser.parse_args()
    json.dump(analyze(args.level_dir, args.level, args.eval_results, args.baseline_file), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
