#!/usr/bin/env python3
"""Orchestration overhead of `ksmith optimize` (issue 4); results go into docs/benchmarks.md.

A 20-candidate `refine` run on vector_add (cpu) against an instant scripted model server
(ksmith-fake-llm answering every request at once with a correct kernel). Overhead is the run's
wall time minus the evaluator's own time (the sum of the verdicts' total_s): prompts, feedback,
HTTP, extraction, the store, the report. Goal: under 5% of the total.

  bench/optimize_overhead.py [runs]     (default 3 runs; median reported)
Run from the repository root after `scripts/setup.sh build`.
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
BUILD = pathlib.Path(os.environ.get("KSMITH_BUILD", ROOT / "build"))
KSMITH = BUILD / "ksmith"
FAKE_LLM = BUILD / "ksmith-fake-llm"
CANDIDATES = 20

KERNEL = """#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""


def one_run(workdir, index):
    script = workdir / "script.json"
    answer = "Parallel and vectorized.\n\n```cpp\n" + KERNEL + "```\n"
    script.write_text(json.dumps({"steps": [{"content": answer}], "after_end": "repeat_last"}))
    server = subprocess.Popen([str(FAKE_LLM), "--script", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split()[1])
        db = workdir / f"runs-{index}.db"
        env = dict(os.environ, KSMITH_CACHE_DIR=str(workdir / "cache"), OPENAI_API_KEY="")
        start = time.perf_counter()
        out = subprocess.run([str(KSMITH), "optimize", "--task", "vector_add", "--provider", "openai",
                              "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "scripted",
                              "--strategy", "refine", "--max-candidates", str(CANDIDATES), "--db", str(db),
                              "--output-dir", str(workdir / f"out-{index}"), "--json", "--quiet"],
                             capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait()
    if out.returncode != 0:
        sys.exit(f"optimize failed ({out.returncode}): {out.stderr}")
    summary = json.loads(out.stdout)
    shown = subprocess.run([str(KSMITH), "runs", "show", summary["run_id"], "--db", str(db), "--json"],
                           capture_output=True, text=True, env=env, check=True)
    candidates = json.loads(shown.stdout)["candidates_list"]
    evaluator_s = sum(c["verdict"]["total_s"] for c in candidates if c["verdict"])
    return wall, evaluator_s, summary["candidates"]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="ksmith-overhead-"))
    # The machine's facts are measured once, before any timed run.
    subprocess.run([str(KSMITH), "doctor", "--json"], capture_output=True, check=True,
                   env=dict(os.environ, KSMITH_CACHE_DIR=str(workdir / "cache")))
    rows = []
    for index in range(runs):
        wall, evaluator_s, evaluated = one_run(workdir, index)
        overhead = wall - evaluator_s
        rows.append((wall, evaluator_s, overhead, overhead / wall, evaluated))
        print(f"run {index + 1}: {evaluated} candidates, wall {wall:.2f} s, evaluator {evaluator_s:.2f} s, "
              f"overhead {overhead:.2f} s ({100 * overhead / wall:.1f}%)", flush=True)
    print()
    print("| runs | candidates | median wall [s] | median evaluator [s] | median overhead [s] | median overhead [%] |")
    print("|---|---|---|---|---|---|")
    print(f"| {runs} | {rows[0][4]} | {statistics.median(r[0] for r in rows):.2f} | "
          f"{statistics.median(r[1] for r in rows):.2f} | {statistics.median(r[2] for r in rows):.2f} | "
          f"{100 * statistics.median(r[3] for r in rows):.1f} |")


if __name__ == "__main__":
    main()
