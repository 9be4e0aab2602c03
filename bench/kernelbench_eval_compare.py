#!/usr/bin/env python3
"""ksmith's verdict on KernelBench-format candidates beside KernelBench's own way of evaluating
them, on the GPU, in one run (docs/benchmarks.md, "ModelNew candidates").

    python3 bench/kernelbench_eval_compare.py --kernelbench .kb --ksmith .gpu/bin/ksmith \\
        --tasks-path /tmp/kbt --latency 1:19:cand.py,1:23:cand2.py --unchanged 1:19,1:23 --out r.json

KernelBench's procedure is reimplemented here from its src/eval.py (eval_kernel_against_ref,
commit 01f92ad): the candidate is exec'd into the evaluating process (load_inline compiles there,
under TORCH_EXTENSIONS_DIR), both models are built with seed 42, 5 correctness trials compare
with torch.allclose at atol = rtol = 1e-2 (KernelBench v0.1's tolerance), then 3 warm-up calls and
100 calls timed with CUDA events on the same inputs; runtime is the mean, and the reference is
timed the same way; speedup = ref_runtime / runtime. Each evaluation runs in a fresh python, as a
new process is what a new candidate costs.

--latency: wall seconds per candidate, new (empty extension folder / a candidate text ksmith has
not built) and cached (the same again), for both evaluators.
--unchanged: ModelNew = Model for each problem: how often KernelBench's speedup is above 1 (its
fast_1 counts such a candidate as faster), and what ksmith's verdict says (faster, tie, slower).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid


def kernelbench_procedure(problem_path, candidate_path, seed=42, correct_trials=5, perf_trials=100, warmup=3):
    """KernelBench's eval_kernel_against_ref, as its src/eval.py does it (see the module's text)."""
    import importlib.util
    import torch
    started = time.perf_counter()

    def set_seed(value):
        torch.manual_seed(value)
        torch.cuda.manual_seed(value)

    def cuda(value):
        return value.cuda() if isinstance(value, torch.Tensor) else value

    context = {}
    with open(problem_path) as problem:
        exec(problem.read(), context)
    set_seed(seed)
    init_inputs = [cuda(x) for x in context["get_init_inputs"]()]
    with torch.no_grad():
        set_seed(seed)
        reference = context["Model"](*init_inputs)
    result = {"compiled": False, "correctness": False, "runtime": -1.0, "ref_runtime": -1.0}
    try:
        source = open(candidate_path).read()
        if "triton" in source:  # KernelBench imports Triton candidates from a file (their @jit reads source)
            spec = importlib.util.spec_from_file_location("kernelbench_candidate", candidate_path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            model_class = module.ModelNew
        else:
            candidate = {}
            exec(source, candidate)
            model_class = candidate["ModelNew"]
        torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 - recorded as KernelBench does
        result["error"] = f"compile: {type(error).__name__}: {error}"[:500]
        result["seconds"] = time.perf_counter() - started
        return result
    result["compiled"] = True
    with torch.no_grad():
        set_seed(seed)
        candidate_model = model_class(*init_inputs).cuda()
        reference = reference.cuda()
    torch.manual_seed(seed)
    trial_seeds = [torch.randint(0, 2 ** 32 - 1, (1,)).item() for _ in range(correct_trials)]
    passed = 0
    with torch.no_grad():
        for trial_seed in trial_seeds:
            set_seed(trial_seed)
            inputs = [cuda(x) for x in context["get_inputs"]()]
            expected = reference(*inputs)
            torch.cuda.synchronize()
            got = candidate_model(*inputs)
            torch.cuda.synchronize()
            if got.shape == expected.shape and torch.allclose(expected, got, atol=1e-2, rtol=1e-2):
                passed += 1
    result["correctness"] = passed == correct_trials
    if not result["correctness"]:
        result["seconds"] = time.perf_counter() - started
        return result

    def timed(model, inputs):
        for _ in range(warmup):
            model(*inputs)
            torch.cuda.synchronize()
        times = []
        for _ in range(perf_trials):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return sum(times) / len(times)

    with torch.no_grad():
        set_seed(seed)
        inputs = [cuda(x) for x in context["get_inputs"]()]
        result["runtime"] = timed(candidate_model, inputs)
        result["ref_runtime"] = timed(reference, inputs)
    result["speedup"] = result["ref_runtime"] / result["runtime"]
    result["seconds"] = time.perf_counter() - started
    return result


def run_kernelbench(problem_path, candidate_path, extensions_dir):
    """One KernelBench evaluation in a fresh python; (result, wall seconds)."""
    environment = dict(os.environ, TORCH_EXTENSIONS_DIR=extensions_dir)
    command = [sys.executable, os.path.abspath(__file__), "--one", problem_path, candidate_path]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=900)
    wall = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"error": done.stderr[-800:]}
    return result, wall


def run_ksmith(ksmith, tasks_path, task, candidate_path):
    command = [ksmith, "eval", "--backend", "cuda", "--task", task, candidate_path, "--json", "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, KSMITH_TASKS_PATH=tasks_path),
                          timeout=900)
    wall = time.perf_counter() - started
    try:
        verdict = json.loads(done.stdout)
    except json.JSONDecodeError:
        verdict = {"status": "none", "reason": done.stderr[-800:]}
    timing = verdict.get("timing", {})
    build = next((s for s in verdict.get("stages", []) if s.get("name") == "build"), {})
    return {"status": verdict.get("status"), "reason": verdict.get("reason", "")[:300],
            "speedup": verdict.get("speedup"), "ci95": verdict.get("speedup_ci95"),
            "comparison": timing.get("comparison"), "labels": verdict.get("labels", []),
            "total_s": verdict.get("total_s"), "build_s": build.get("seconds")}, wall


def problem_file(kernelbench, level, number):
    folder = os.path.join(kernelbench, f"level{level}")
    for name in sorted(os.listdir(folder)):
        if name.split("_")[0] == str(number) and name.endswith(".py"):
            return os.path.join(folder, name)
    raise SystemExit(f"no level {level} problem {number} under {kernelbench}")


def task_name(tasks_path, level, number):
    prefix = f"kb_l{level}_{int(number):03d}_"
    for name in os.listdir(os.path.join(tasks_path, "kernelbench")):
        if name.startswith(prefix):
            return name
    raise SystemExit(f"no imported task {prefix}* under {tasks_path}/kernelbench")


def latency(args, scratch):
    rows = []
    for item in filter(None, args.latency.split(",")):
        level, number, candidate = item.split(":", 2)
        problem = problem_file(args.kernelbench, level, number)
        task = task_name(args.tasks_path, level, number)
        fresh = os.path.join(scratch, uuid.uuid4().hex)
        # A candidate text neither evaluator has seen: a comment makes it new to ksmith's cache too.
        new_path = os.path.join(scratch, os.path.basename(candidate))
        with open(candidate) as source, open(new_path, "w") as out:
            out.write(source.read() + f"\n# run {uuid.uuid4().hex}\n")
        row = {"problem": f"{level}:{number}", "candidate": os.path.basename(candidate)}
        for name, run in (("kernelbench_new", lambda: run_kernelbench(problem, new_path, fresh)),
                          ("kernelbench_cached", lambda: run_kernelbench(problem, new_path, fresh)),
                          ("ksmith_new", lambda: run_ksmith(args.ksmith, args.tasks_path, task, new_path)),
                          ("ksmith_cached", lambda: run_ksmith(args.ksmith, args.tasks_path, task, new_path))):
            row[name], row[name + "_s"] = run()
            print(f"{row['candidate']}: {name} {row[name + '_s']:.1f} s: {json.dumps(row[name])[:400]}", flush=True)
        print(json.dumps({k: row[k] for k in row if k.endswith("_s")} | {"candidate": row["candidate"]}), flush=True)
        rows.append(row)
    return rows


def unchanged(args, scratch):
    rows = []
    for item in filter(None, args.unchanged.split(",")):
        level, number = item.split(":")
        problem = problem_file(args.kernelbench, level, number)
        task = task_name(args.tasks_path, level, number)
        candidate = os.path.join(scratch, f"unchanged_{level}_{number}.py")
        with open(problem) as source, open(candidate, "w") as out:
            out.write(source.read() + "\n\nModelNew = Model\n")
        kb, _ = run_kernelbench(problem, candidate, os.path.join(scratch, "unchanged-extensions"))
        ks, _ = run_ksmith(args.ksmith, args.tasks_path, task, candidate)
        row = {"problem": f"{level}:{number}", "task": task, "kernelbench": kb, "ksmith": ks}
        print(json.dumps({"problem": row["problem"], "kernelbench_speedup": kb.get("speedup"),
                          "ksmith": [ks["status"], ks["speedup"], ks["comparison"]]}), flush=True)
        rows.append(row)
    faster_kb = sum(1 for r in rows if (r["kernelbench"].get("speedup") or 0) > 1.0 and r["kernelbench"]["correctness"])
    faster_ks = sum(1 for r in rows if r["ksmith"]["comparison"] == "faster")
    ties_ks = sum(1 for r in rows if r["ksmith"]["comparison"] == "tie")
    return {"rows": rows, "kernelbench_faster": faster_kb, "ksmith_faster": faster_ks, "ksmith_ties": ties_ks,
            "problems": len(rows)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--kernelbench")
    parser.add_argument("--ksmith")
    parser.add_argument("--tasks-path")
    parser.add_argument("--latency", default="")
    parser.add_argument("--unchanged", default="")
    parser.add_argument("--out", default="kernelbench_eval_compare.json")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(kernelbench_procedure(*args.one)))
        return
    with tempfile.TemporaryDirectory(prefix="kb-compare-") as scratch:
        report = {"latency": latency(args, scratch), "unchanged": unchanged(args, scratch) if args.unchanged else None}
    with open(args.out, "w") as out:
        json.dump(report, out, indent=1)
    if report["unchanged"]:
        u = report["unchanged"]
        print(f"unchanged model over {u['problems']} problems: KernelBench calls {u['kernelbench_faster']} faster; "
              f"ksmith: {u['ksmith_faster']} faster, {u['ksmith_ties']} ties")


if __name__ == "__main__":
    main()
