#!/usr/bin/env python3
"""evolve without a model against exhaustive tune, task by task (issue 30).

For each task: `ksmith optimize --strategy tune` over every setting of the seed's @tune knobs,
then `--strategy evolve` (no model: it mutates and crosses the settings) with the same number of
candidates. From each run's candidates in order (`ksmith runs show --json`) it reports how many
evaluations evolve needed to reach tune's best (the same setting, or a speedup within 3% of it),
and the best each found with half the evaluations. Writes JSON to stdout and a Markdown table to
--markdown.

  bench/evolve_vs_tune.py --ksmith build/ksmith --backend cuda --tasks relu,gelu --markdown out.md
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import time

REACH = 0.97  # a speedup within 3% of tune's best counts as reaching it (timing noise)


def run(ksmith, args):
    done = subprocess.run([ksmith] + args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ksmith {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def candidates(ksmith, db, run_id):
    shown = run(ksmith, ["runs", "show", run_id, "--db", db, "--json"])
    return [(c.get("speedup") if c.get("status") == "passed" else None, json.dumps(c.get("knobs"), sort_keys=True))
            for c in shown["candidates_list"]]


def optimize(ksmith, db, task, backend, strategy, count, extra):
    started = time.monotonic()
    summary = run(ksmith, ["optimize", "--task", task, "--backend", backend, "--strategy", strategy, "-n", str(count),
                           "--db", db, "--json", "--quiet", "--output-dir", f"/tmp/evolve-vs-tune/{task}-{strategy}"] + extra)
    return summary["run_id"], time.monotonic() - started


def best(history, upto=None):
    speeds = [s for s, _ in history[:upto] if s is not None]
    return max(speeds) if speeds else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ksmith", required=True)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--tasks", required=True, help="comma-separated task names")
    parser.add_argument("--db", default="/tmp/evolve-vs-tune.db")
    parser.add_argument("--timing-budget", default="0.3")
    parser.add_argument("--markdown")
    parser.add_argument("--warmup", action="store_true",
                        help="judge each task's default setting once first (a run of one candidate, not counted), so "
                             "that neither strategy pays the task's cold start")
    options = parser.parse_args()
    extra = ["--timing-budget", options.timing_budget, "--seeds", "1"]
    rows = []
    failed = []
    for task in options.tasks.split(","):
        try:
            if options.warmup:
                optimize(options.ksmith, options.db, task, options.backend, "tune", 1, extra)
            tune_id, tune_s = optimize(options.ksmith, options.db, task, options.backend, "tune", 1000, extra)
            tune = candidates(options.ksmith, options.db, tune_id)
            count = len(tune)
            evolve_id, evolve_s = optimize(options.ksmith, options.db, task, options.backend, "evolve", count, extra)
            evolve = candidates(options.ksmith, options.db, evolve_id)
        except RuntimeError as error:  # one task's failure is reported, the others still run
            failed.append({"task": task, "error": str(error)[-500:]})
            print(json.dumps(failed[-1]), file=sys.stderr, flush=True)
            continue
        tune_best = best(tune)
        tune_best_knobs = next((k for s, k in tune if s == tune_best), None)
        reached = None
        for index, (speedup, knobs) in enumerate(evolve, 1):
            if speedup is not None and tune_best is not None and (knobs == tune_best_knobs or speedup >= REACH * tune_best):
                reached = index
                break
        half = max(1, math.ceil(count / 2))
        rows.append({"task": task, "settings": count, "tune_best": tune_best, "evolve_best": best(evolve),
                     "evolve_evaluations_to_reach_tune_best": reached, "half": half,
                     "tune_best_at_half": best(tune, half), "evolve_best_at_half": best(evolve, half),
                     "tune_wall_s": round(tune_s, 1), "evolve_wall_s": round(evolve_s, 1),
                     "tune_run": tune_id, "evolve_run": evolve_id})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    reached = [r["evolve_evaluations_to_reach_tune_best"] / r["settings"] for r in rows
               if r["evolve_evaluations_to_reach_tune_best"]]
    def at_half(key):
        return sum(1 for r in rows if r[key] is not None and r["tune_best"] and r[key] >= REACH * r["tune_best"])
    summary = {"tasks": len(rows), "evolve_reached_tune_best": len(reached),
               "median_fraction_of_space_to_reach": statistics.median(reached) if reached else None,
               "evolve_at_half_within_3pct_of_tune_best": at_half("evolve_best_at_half"),
               "tune_at_half_within_3pct_of_tune_best": at_half("tune_best_at_half"), "rows": rows, "failed": failed}
    print(json.dumps(summary, indent=1))
    if options.markdown:
        fmt = lambda v: "-" if v is None else f"{v:.2f}x"
        lines = ["| task | settings | tune best | evolve best | evolve evals to reach tune's best | best at half: tune | evolve |",
                 "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['task']} | {r['settings']} | {fmt(r['tune_best'])} | {fmt(r['evolve_best'])} | "
                         f"{r['evolve_evaluations_to_reach_tune_best'] or 'not reached'} | {fmt(r['tune_best_at_half'])} | "
                         f"{fmt(r['evolve_best_at_half'])} |")
        lines.append("")
        lines.append(f"evolve reached tune's best on {len(reached)} of {len(rows)} tasks, after a median "
                     f"{summary['median_fraction_of_space_to_reach']} of the space; with half the evaluations, "
                     f"within 3% of tune's best: evolve {summary['evolve_at_half_within_3pct_of_tune_best']}, "
                     f"tune (its enumeration order) {summary['tune_at_half_within_3pct_of_tune_best']} of {len(rows)}")
        with open(options.markdown, "w") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
