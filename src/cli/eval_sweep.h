// `ksmith eval --sweep rows=1024,4096 --sweep cols=512,2048`: one candidate judged and timed at
// each size of a grid, as nvbench's and CUTLASS's profiler's sweeps do, to show where a kernel
// wins and where it falls off (a speedup at one size says little about the next). Each point is a
// whole verdict with the task's bench shape set to that size: correctness is checked there too,
// and the baseline is timed beside the candidate, so every row compares like with like.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

/// The most points a sweep may have: each is a whole verdict.
inline constexpr size_t kMaxSweepPoints = 64;

/// The grid `items` ("dim=v1,v2,...", one dim each) spans over `timed_shape`, the shape the backend
/// times the task at (BackendPrompt::timed_shape: the task's, or its GPU one): every combination, the first item's dim varying slowest. An error
/// names a dim the task does not have or computes from others, a value that is not a positive
/// integer, a dim given twice, a grid past kMaxSweepPoints, or a point whose derived dims fail.
Result<std::vector<DimValues>> PlanSweep(const Task& task, const std::vector<std::string>& items,
                                         const DimValues& timed_shape);

/// `task` with `shape` as its bench shape on every backend (its hidden shapes are unchanged).
Task TaskAtBenchShape(const Task& task, const DimValues& shape);

/// One point of a sweep: its shape and what the verdict said there.
struct SweepRow {
  DimValues shape;
  Verdict verdict;
};

/// Per point: the status, both sides' median times [µs], the speedup with its 95% interval, and
/// each side's GB/s (the task's minimum bytes over the time) and GFLOP/s (its flops; 0: not counted).
nlohmann::json SweepJson(const Task& task, const std::vector<SweepRow>& rows);
/// The same as a table for a terminal.
std::string SweepTable(const Task& task, const std::vector<SweepRow>& rows);
/// The same as CSV, one header line, one line a point, the shape's dims as columns.
std::string SweepCsv(const Task& task, const std::vector<SweepRow>& rows);

}  // namespace ksmith
