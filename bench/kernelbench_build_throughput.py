#!/usr/bin/env python3
"""A batch of new KernelBench `load_inline` candidates judged together by `ksmith kernelbench run`,
and KernelBench's own procedure on some of them in the same call (docs/benchmarks.md, "Builds in
seconds"). Run on the GPU machine after the tasks are imported:

    python3 bench/kernelbench_build_throughput.py --ksmith .gpu/bin/ksmith --tasks-path /tmp/kbt \\
        --count 16 --kernelbench-procedure 2 --out result.json tests/kernels/kernelbench/modelnew/cuda/honest_*.py

The candidates given (those calling load_inline) are cycled to make `--count` samples; each gets a
comment naming its sample inside its CUDA source, so every one is a new text to every cache (ksmith's
build folder and any per-file cache) and costs what a new candidate costs. The wall time runs from
`kernelbench run`'s start to its exit: every build, every verdict. A warm-up run first judges the
unchanged model (ModelNew = Model) of each problem (untimed), so that what a task needs once per
cache (its reference, its baseline, the GPU's facts) is not in the batch's time. `--alone FILE`
times `ksmith eval` of one new candidate by itself after the warm-up (ksmith's own prompt's form:
the goal is a verdict within 15 s).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernelbench_eval_compare import run_kernelbench  # noqa: E402  (KernelBench's procedure, fresh python)

NAME = re.compile(r"_kb_l(\d+)_(\d+)_")


def samples_from(paths, count):
    usable = []
    for path in paths:
        text = open(path).read()
        match = NAME.search(os.path.basename(path))
        if "load_inline" in text and match and "__global__" in text:
            usable.append((path, int(match.group(1)), int(match.group(2)), text))
    if not usable:
        sys.exit("no load_inline candidates named *_kb_l<level>_<problem>_*.py among the files given")
    samples = []
    for index in range(count):
        path, level, problem, text = usable[index % len(usable)]
        nonce = f"/* ksmith bench sample {index} {uuid.uuid4().hex} */ __global__"
        samples.append({"source": path, "level": level, "problem": problem, "sample": index,
                        "text": text.replace("__global__", nonce, 1)})
    return samples


def write_folder(folder, samples):
    os.makedirs(folder, exist_ok=True)
    for sample in samples:
        name = f"level_{sample['level']}_problem_{sample['problem']}_sample_{sample['sample']}_kernel.py"
        sample["path"] = os.path.join(folder, name)
        with open(sample["path"], "w") as out:
            out.write(sample["text"])


def problem_path(args, sample):
    folder = os.path.join(args.kernelbench, f"level{sample['level']}")
    return os.path.join(folder, next(name for name in sorted(os.listdir(folder)) if name.startswith(f"{sample['problem']}_")))


def kernelbench_run(args, folder, environment):
    command = [args.ksmith, "kernelbench", "run", folder, "--backend", "cuda", "--quiet"]
    if args.jobs:
        command += ["--jobs", str(args.jobs)]
    if args.build_memory_gib:
        command += ["--build-memory-gib", str(args.build_memory_gib)]
    started = time.perf_counter()
    done = subprocess.run(command, env=environment, capture_output=True, text=True)
    wall = time.perf_counter() - started
    verdicts = []
    path = os.path.join(folder, "ksmith_verdicts.jsonl")
    if os.path.exists(path):
        verdicts = [json.loads(line) for line in open(path) if line.strip()]
    return wall, done, verdicts


def build_seconds(verdict):
    """The build sandbox's own seconds: the verdict's build stage only counts the wait for a build
    that started when the job was queued, 0 when it was done before a worker took the job."""
    for stage in verdict.get("stages", []):
        if stage.get("name") == "build":
            return (stage.get("details") or {}).get("build_sandbox", {}).get("seconds", stage.get("seconds"))
    return None


def run_batch(args, samples, scratch, environment, result):
    """The batch through `kernelbench run`, then KernelBench's procedure on its first samples."""
    batch = os.path.join(scratch, "batch")
    write_folder(batch, samples)
    wall, done, verdicts = kernelbench_run(args, batch, environment)
    print(done.stderr[-1500:], flush=True)
    result["batch"] = {
        "wall_s": wall, "exit": done.returncode, "stderr_tail": done.stderr[-3000:],
        "verdicts": [{"candidate": os.path.basename(v.get("candidate", "")), "status": v.get("status"),
                      "build_s": build_seconds(v), "total_s": v.get("total_s"),
                      "speedup": (v.get("timing") or {}).get("speedup", {}).get("median")} for v in verdicts],
        "full": verdicts}
    print(f"batch: {len(samples)} new candidates in {wall:.1f} s (exit {done.returncode})", flush=True)

    procedure = []
    for sample in samples[:args.kernelbench_procedure]:
        fresh = dict(sample, text=sample["text"].replace("ksmith bench sample", "kernelbench procedure sample"))
        write_folder(os.path.join(scratch, "procedure"), [fresh])
        extensions = tempfile.mkdtemp(prefix="kb-ext-", dir=scratch)
        row, wall = run_kernelbench(problem_path(args, sample), fresh["path"], extensions)
        row["seconds"] = wall
        procedure.append(row)
        print(f"KernelBench's procedure, {os.path.basename(sample['source'])}: {row.get('seconds', 0):.1f} s", flush=True)
    result["kernelbench_procedure"] = procedure


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", nargs="+")
    parser.add_argument("--ksmith", required=True)
    parser.add_argument("--tasks-path", required=True, help="KSMITH_TASKS_PATH holding the imported problems")
    parser.add_argument("--kernelbench", default="tests/data/kernelbench", help="KernelBench's levels (problem files)")
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=0, help="kernelbench run --jobs (0: its default)")
    parser.add_argument("--build-memory-gib", type=float, default=0,
                        help="kernelbench run --build-memory-gib (0: its default); the pool fits more builds under a smaller limit")
    parser.add_argument("--kernelbench-procedure", type=int, default=0,
                        help="how many of the samples KernelBench's procedure also judges, one after another")
    parser.add_argument("--alone", action="append", default=[],
                        help="a candidate judged alone by `ksmith eval` (new text) after the warm-up; repeatable")
    parser.add_argument("--no-warm-up", action="store_true",
                        help="no untimed warm-up: the batch's time includes each task's first-time costs")
    parser.add_argument("--out")
    args = parser.parse_args()
    environment = dict(os.environ, KSMITH_TASKS_PATH=args.tasks_path)
    alone = {os.path.abspath(path) for path in args.alone}
    samples = samples_from([path for path in args.candidates if os.path.abspath(path) not in alone],
                           args.count) if args.count else []
    scratch = tempfile.mkdtemp(prefix="kb-throughput-")
    result = {"count": args.count, "jobs": args.jobs, "build_memory_gib": args.build_memory_gib, "nproc": os.cpu_count()}
    try:
        if not args.no_warm_up:
            # The unchanged model (ModelNew = Model) of each problem: no compiler, so what it costs is
            # what the task needs once per cache.
            warm = {}
            for sample in samples + (samples_from(args.alone, len(args.alone)) if args.alone else []):
                key = (sample["level"], sample["problem"])
                if key not in warm:
                    text = open(problem_path(args, sample)).read() + "\nModelNew = Model\n"
                    warm[key] = dict(sample, sample=1000 + len(warm), text=text)
            write_folder(os.path.join(scratch, "warm"), list(warm.values()))
            wall, done, verdicts = kernelbench_run(args, os.path.join(scratch, "warm"), environment)
            result["warm_up"] = {"wall_s": wall, "exit": done.returncode,
                                 "statuses": [v.get("status") for v in verdicts]}
            print(f"warm-up: {len(warm)} unchanged models in {wall:.1f} s", flush=True)

        for path in args.alone:
            match = NAME.search(os.path.basename(path))
            task = f"kb_l{int(match.group(1))}_{int(match.group(2)):03d}_"
            task = next(name for name in os.listdir(os.path.join(args.tasks_path, "kernelbench")) if name.startswith(task))
            fresh = os.path.join(scratch, os.path.basename(path))
            with open(fresh, "w") as out:
                out.write(open(path).read().replace("__global__", f"/* {uuid.uuid4().hex} */ __global__", 1))
            started = time.perf_counter()
            done = subprocess.run([args.ksmith, "eval", "--backend", "cuda", "--task", task, fresh, "--json", "--quiet"],
                                  env=environment, capture_output=True, text=True)
            wall = time.perf_counter() - started
            try:
                verdict = json.loads(done.stdout)
            except ValueError:
                verdict = {"stdout": done.stdout[-1000:], "stderr": done.stderr[-2000:]}
            result.setdefault("alone", []).append({"candidate": os.path.basename(path), "wall_s": wall,
                                                   "status": verdict.get("status"), "build_s": build_seconds(verdict),
                                                   "verdict": verdict})
            print(f"alone: {os.path.basename(path)}: {verdict.get('status')} in {wall:.1f} s "
                  f"(build {build_seconds(verdict)})", flush=True)

        if samples:  # --count 0: the alone verdicts only
            run_batch(args, samples, scratch, environment, result)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(result, out, indent=1)
    if "batch" not in result:
        return
    verdicts = result["batch"]["verdicts"]
    passed = sum(1 for v in verdicts if v["status"] == "passed")
    builds = sorted(v["build_s"] for v in verdicts if v["build_s"] is not None)
    print(f"| candidates | wall s | passed | build s (median, max) | per candidate s |")
    print(f"|---|---|---|---|---|")
    print(f"| {args.count} | {result['batch']['wall_s']:.1f} | {passed} | "
          f"{builds[len(builds) // 2] if builds else float('nan'):.1f}, {builds[-1] if builds else float('nan'):.1f} | "
          f"{result['batch']['wall_s'] / max(1, args.count):.1f} |")


if __name__ == "__main__":
    main()
