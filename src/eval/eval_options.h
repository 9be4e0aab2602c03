// What every evaluation is asked to do and what it judges, whatever backend runs it: the
// options of one evaluation and the candidate's source.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

class CandidateFormat;  // eval/candidate_format.h
struct FailedCase;      // eval/failed_case.h
class GpuGate;

/// What a caller asks of the candidate's format beyond ksmith's own contract
/// (eval/candidate_format.h); a format that does not offer something notes so in the verdict.
struct FormatOptions {
  /// Also time the candidate against its format's second baseline, reported beside the speedup
  /// (KernelBench on the GPU: torch.compile of the problem's Model, kernelbench/compiled_baseline.h).
  bool second_baseline = false;
};

struct EvalOptions {
  int seeds = 3;                                   // seeds per eval shape and distribution
  int64_t large_elements = int64_t{1} << 20;       // shapes above this get one seed
  std::chrono::milliseconds call_timeout{10'000};  // one kernel call, [ms]
  bool time = true;
  double timing_budget_s = 1.0;   // [s] the timing loop stops by then (after min rounds)
  double target_rse = 0.01;       // stop timing once both sides' relative standard error is below
  /// Stop timing once the speedup's 95% interval is clear of 1, or inside 1 +- this (cpu); 0: off,
  /// the loop runs to target_rse or the budget.
  double tie_band = 0.02;
  int threads = 0;                // OpenMP threads in the worker; 0: all cores
  bool sandbox = true;
  bool profile = false;           // add the backend's profile of a passing candidate (slow)
  FormatOptions format_options;   // what the candidate's format is asked for
  std::optional<uint64_t> fixed_seed;  // for reproducing a run; otherwise secret and random
  /// Given the first wrong case (its inputs, the reference's and the candidate's outputs) once
  /// the verdict ended as wrong_output, on the session's thread; never for any other verdict.
  /// Null: no case is kept (`ksmith eval --dump-failure` sets it: eval/failure_dump.h).
  std::function<void(const FailedCase&)> failed_case_sink;
  /// Stop after the build and the binary audit (`ksmith build`): no trusted build, no worker, no
  /// device. The verdict then ends with no status of its own when the build succeeded (its build
  /// stage holds the resources and the SASS summary); a failed audit or build sets the status as
  /// in any evaluation. Never set for an evaluation that is reported as a verdict.
  bool build_only = false;
  /// Progress lines ("correctness 12/40"); may be empty.
  std::function<void(const std::string&)> progress;
  /// Set by whoever may stop the evaluation (Ctrl-C, a service shutting down); null: never.
  /// The pipeline stops between stages and the workers stop mid-request; the verdict is then an
  /// infra_error that says it was cancelled, never the candidate's.
  const std::atomic<bool>* cancel = nullptr;

  // Filled by the backend that runs the evaluation, not by callers:
  std::filesystem::path worker_executable;  // ksmith-worker, ksmith-cuda-worker...
  std::filesystem::path scratch_parent;     // where workers get their private folders
  /// Extra environment for the workers ("CUDA_VISIBLE_DEVICES=1").
  std::vector<std::string> worker_environment;
  /// Shared by evaluations that run at once on one device (eval/gpu_gate.h); null when alone.
  GpuGate* gpu_gate = nullptr;
  /// The worker calls the candidate's ksmith_finish after each call, as it does the baseline's:
  /// set by the pipeline, only for a shim it generated itself (a KernelBench-format candidate),
  /// never for a candidate's own code, which would do untimed work there.
  bool candidate_finish = false;
  /// On the GPU, work the candidate launches on the legacy default stream counts as work on the
  /// stream it was given, which is then one the legacy stream synchronizes with: KernelBench runs
  /// `forward` where the legacy default stream is current, so its candidates launch there
  /// (`kernel<<<grid, block>>>`). ksmith's own contract keeps the stream argument. Set by the
  /// pipeline only.
  bool default_stream_ordered = false;
  /// On the GPU, the candidate's worker calls the baseline's warm entry (kKernelWarmSymbol)
  /// before its walls go up, while the candidate builds: where the candidate runs in the
  /// interpreter the baseline starts (a KernelBench-format candidate). Set by the pipeline only.
  bool warm_baseline = false;
  /// Folders the candidate's worker may read besides its build's: a KernelBench-format
  /// candidate's build sandbox output. Set by the pipeline only.
  std::vector<std::filesystem::path> candidate_readable;
  /// Whether the task's hidden eval shapes decide the verdict (ksmith's contract). False for a
  /// KernelBench-format candidate, whose problems are fixed-shape by definition: the bench shape
  /// (the problem's own sizes, as far as they fit) decides, and the hidden shapes run after
  /// every other check as a property ("generalizes: yes/no"). Set by the pipeline only.
  bool hidden_shapes_decide = true;

  bool Cancelled() const { return cancel != nullptr && cancel->load(); }
};

struct CandidateSource {
  std::string path;  // as given, for messages
  std::string text;
  size_t file_bytes = 0;  // the file's size when known; a file over the limit is not read whole
  /// How it is written and judged (eval/candidate_format.h); null: ksmith's own contract
  /// (eval/native_format.h). Formats are singletons: the pointer stays valid.
  const CandidateFormat* format = nullptr;
};

/// Size limit for candidate sources [bytes].
inline constexpr size_t kMaxCandidateBytes = size_t{1} << 20;

/// Reads a candidate's file; one over the limit is returned unread (with its size), so that its
/// verdict (compile_error) says why it was refused. Fails for a folder or an unreadable file. The
/// format is left unset: formats/format_registry.h's ReadCandidateFile sets it from the path.
Result<CandidateSource> ReadCandidateSource(const std::string& path);

/// Why a candidate's text cannot be compiled at all (too big, empty, not text); empty when it
/// can be tried.
std::string UnusableSourceReason(const CandidateSource& candidate);

}  // namespace ksmith
