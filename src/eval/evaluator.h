// The evaluation pipeline of DESIGN.md for the CPU backend: audit, build, correctness in a
// sandboxed worker, determinism, timing against the baseline, re-check, physical limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "backend/cpu/compiler.h"
#include "backend/cpu/machine.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

class GpuGate;

struct EvalOptions {
  int seeds = 3;                                   // seeds per eval shape and distribution
  int64_t large_elements = int64_t{1} << 20;       // shapes above this get one seed
  std::chrono::milliseconds call_timeout{10'000};  // one kernel call, [ms]
  bool time = true;
  double timing_budget_s = 1.0;   // [s] the timing loop stops by then (after min rounds)
  double target_rse = 0.01;       // stop timing once both sides' relative standard error is below
  int threads = 0;                // OpenMP threads in the worker; 0: all cores
  bool sandbox = true;
  std::optional<uint64_t> fixed_seed;  // for reproducing a run; otherwise secret and random
  std::filesystem::path worker_executable;
  std::filesystem::path cuda_worker_executable;  // ksmith-cuda-worker, for --backend cuda
  /// Shared by evaluations that run at once on one GPU (eval/gpu_gate.h); null when alone.
  GpuGate* gpu_gate = nullptr;
  std::filesystem::path scratch_parent;  // where workers get their private folders
  /// Progress lines ("correctness 12/40"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct CandidateSource {
  std::string path;  // as given, for messages
  std::string text;
  size_t file_bytes = 0;  // the file's size when known; a file over the limit is not read whole
};

class Evaluator {
 public:
  Evaluator(const CpuCompiler& compiler, MachineFacts machine, EvalOptions options)
      : compiler_(compiler), machine_(std::move(machine)), options_(std::move(options)) {}

  /// Never throws for anything a candidate does; infrastructure failures become infra_error.
  Verdict Evaluate(const Task& task, const CandidateSource& candidate) const;

 private:
  const CpuCompiler& compiler_;
  MachineFacts machine_;
  EvalOptions options_;
};

/// Size limit for candidate sources [bytes].
inline constexpr size_t kMaxCandidateBytes = size_t{1} << 20;

/// Why a candidate's text cannot be compiled at all (too big, empty, not text); empty when it
/// can be tried.
std::string UnusableSourceReason(const CandidateSource& candidate);

}  // namespace ksmith
