// What a verdict's stages found, as types: one schema for every backend (docs/verdict.md).
//
// Each stage fills the sections that apply to it; a section's keys appear in the stage's JSON
// `details` object, flat, as versions before the types wrote them, so stored verdicts read back
// and older readers keep working. What failed is recorded as fields (`Failure`: the case, the
// output's mismatch numbers, the signal, the CUDA error) so that a reader never parses a reason.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/kernel_resources.h"
#include "binary/vector_code.h"
#include "compile/diagnostics.h"
#include "eval/audit.h"
#include "sandbox/policy.h"

namespace ksmith {

/// Why a stage failed, finer than the verdict's status: what a reader acts on.
enum class FailureKind {
  kUnspecified,          // older verdicts, and failures no reader distinguishes
  kUnusableSource,       // empty, too large, NUL byte
  kCompilerRejected,
  kBuildLimit,           // the compiler exceeded a build limit (`BuildFacts::limit_exceeded`)
  kContractFinding,      // audit findings in the source, the build log or the binary
  kNotLoadable,          // the built candidate could not be loaded
  kWorkerCrashed,        // killed by a signal (`Failure::signal`)
  kWorkerExited,
  kWorkerTimedOut,
  kForgedReply,          // a reply the worker protocol refused
  kCudaError,            // `Failure::cuda_error`
  kWrongOutput,          // outside the tolerance (`Failure::mismatch`)
  kInputModified,
  kOutOfBounds,          // a guard zone around a tensor was written
  kMalformedReply,       // a snapshot of the wrong size
  kOtherStream,          // GPU work outside the given stream
  kLateWrite,            // memory written after the given stream completed
  kWorkAfterReturn,      // CPU time or GPU launches after the call returned
  kTimedOutputDiffers,   // while timed, an output differed from the baseline's or the reference's
  kWrongAfterTiming,     // correct before timing, wrong after it
  kFasterOnReusedInputs, // faster when its inputs barely changed since the call before
  kTimeNotReal,          // the clocks disagree, or a time below the physical floor
  kProcessStateChanged,  // process-wide settings the baseline runs under (threads, FP mode, affinity)
  kForbiddenCall,        // a call the sandbox denies, tried by the candidate (sandbox/call_watch.h)
  kInfrastructure,       // the evaluator's fault
  kCancelled,
};

const char* FailureKindName(FailureKind kind);
/// kUnspecified for a name this version does not know.
FailureKind ParseFailureKind(const std::string& name);

/// A verification case, as its parts: what a reader needs without parsing the label.
struct CaseRef {
  std::string label;         // "rows=37, cols=5, large, seed #2 (random shape)"
  std::string shape;         // "rows=37, cols=5"; "" when the case is not a shape (the idle check)
  std::string distribution;  // "large"
  int64_t smallest_dim = 0;  // 0 when the case names no size

  nlohmann::json ToJson() const;
  static CaseRef FromJson(const nlohmann::json& json);
  /// Parts taken from a label (cases.cc's form): for verdicts written before the parts were.
  static CaseRef FromLabel(const std::string& label);
};

/// An output compared with the reference (tensor/compare.h's Comparison), or integers that differ.
struct OutputMismatch {
  std::string output;  // the output tensor's name
  int64_t count = 0;
  int64_t unwritten = 0;   // still holding the poison bits
  int64_t nonfinite = 0;   // NaN or Inf where the reference is finite
  int64_t over_bound = 0;  // beyond the elementwise bound
  double norm_error = 0;   // ||got - ref|| / ||ref||
  double norm_bound = 0;
  int64_t worst_index = -1;  // row-major flat index; -1 when none stood out
  double worst_got = 0, worst_ref = 0, worst_abs_error = 0;

  nlohmann::json ToJson() const;
  static OutputMismatch FromJson(const nlohmann::json& json);
};

/// A written guard zone (kOutOfBounds): the first one found, in slot order, the zone before a
/// tensor ahead of the zone after it.
struct GuardBreach {
  std::string tensor;  // the tensor's name
  std::string side;    // "before" or "after" it
  /// The changed byte nearest the tensor, counted from the tensor's first byte: -1 is the byte
  /// just before it, the tensor's size in bytes the byte just past its end.
  int64_t offset = 0;
  int64_t element = 0;        // the element slot holding that byte: -1 just before, n just past
  int64_t changed_bytes = 0;  // bytes of the zone that changed

  nlohmann::json ToJson() const;
  static GuardBreach FromJson(const nlohmann::json& json);
};

struct Failure {
  FailureKind kind = FailureKind::kUnspecified;
  std::optional<CaseRef> at;  // the case running or judged when it failed
  std::optional<OutputMismatch> mismatch;
  std::optional<GuardBreach> guard;  // kOutOfBounds
  int signal = 0;               // kWorkerCrashed: the signal number
  std::string cuda_error;       // kCudaError: the CUDA runtime's message
  std::string cuda_error_name;  // kCudaError: its name, "cudaErrorIllegalAddress"

  nlohmann::json ToJson() const;
  static Failure FromJson(const nlohmann::json& json);
};

struct BuildFacts {
  bool cache_hit = false;
  double compile_s = 0;
  bool compiler_sandboxed = false;
  std::string command;
  // Once compiled:
  std::optional<std::vector<KernelResources>> resources;  // ptxas's report; empty on cpu
  std::optional<SassSummary> sass;
  std::optional<VectorCode> vector_code;  // a CPU object's vector arithmetic (binary/vector_code.h)
  std::optional<std::string> shared_object;
  /// A KernelBench-format candidate's build sandbox: the extensions it built, what failed while it
  /// called the model once, how isolated it was (kernelbench/candidate_build.h).
  std::optional<nlohmann::json> build_sandbox;
  /// The build limit that stopped the compiler: "memory", "cpu_time" or "wall_time"
  /// (compile/build.h), and its value [bytes for memory, seconds for the times].
  std::optional<std::string> limit_exceeded;
  std::optional<double> limit_value;
};

/// The cases of one shape under one distribution (every seed of it) that a correctness stage judged.
struct CaseGroup {
  std::string shape;         // as CaseRef::shape
  std::string distribution;  // as CaseRef::distribution
  int64_t smallest_dim = 0;  // as CaseRef::smallest_dim
  int64_t cases = 0;         // judged
  int64_t failed = 0;        // of them, with a wrong output

  nlohmann::json ToJson() const;
  static CaseGroup FromJson(const nlohmann::json& json);
};

/// How widely a wrong kernel fails. Once a case's output is wrong, the correctness stage judges
/// the rest of its cases too and counts them, so that feedback can say whether one shape or
/// distribution is singled out or everything fails (the first case alone said neither). After a
/// first failure of another kind (a crash), which ends the stage, the cases that passed before it.
struct CaseTally {
  int64_t planned = 0;  // the stage's cases
  int64_t judged = 0;   // of them, judged: all unless `stopped`
  int64_t failed = 0;   // of those, with a wrong output
  std::vector<CaseGroup> groups;  // every judged case, by shape and distribution, in the order met
  /// Why judging stopped before every planned case: a later case failed otherwise (a crash, a
  /// hang, a contract breach), "<status>: <reason>"; "" when every case was judged.
  std::string stopped;

  nlohmann::json ToJson() const;
  static CaseTally FromJson(const nlohmann::json& json);
};

/// Correctness, determinism and the re-check.
struct CheckFacts {
  std::optional<double> worst_norm_error;
  std::optional<int64_t> cases;
  std::optional<int64_t> extra_calls;
  std::optional<bool> bitwise_identical;
  std::optional<CaseTally> tally;  // correctness, once a case failed
};

/// Per-request instrumentation of the GPU sessions [ms, running totals].
struct RequestCounters {
  std::map<std::string, double> evaluator_ms;
  std::map<std::string, double> worker_phase_ms;
  std::optional<int64_t> unpinned_arenas;
  /// cuda: checked calls whose inputs the worker drew on the device and found as drawn after the
  /// call (only their guards and outputs came back to be judged).
  std::optional<int64_t> inputs_drawn_on_device;
};

/// One side of a GPU timing: the nvbench method's cold and warm samples.
struct SideTiming {
  double cold_us = 0;
  double warm_us = 0;
  int64_t warm_batch = 1;
  int64_t samples = 0;
  int64_t throttled_samples = 0;
  double sm_clock_mhz = 0;
  double reuse_us = 0;  // median on inputs that barely changed since the call before; 0: not measured

  nlohmann::json ToJson() const;
  static SideTiming FromJson(const nlohmann::json& json);
};

/// The timing stage. Shared keys mean the same on every backend; the rest are optional and say
/// how that backend measured.
struct TimingFacts {
  int64_t rounds = 0;  // rounds of the timing loop
  std::string shape;   // the bench shape
  std::optional<double> budget_s;  // the loop's budget: it may stop sooner, never later (min rounds aside)
  /// Why the loop stopped: "decided" (the speedup's interval clear of 1 or inside the tie band),
  /// "interval" (both sides' noise, or the speedup's interval, under the target), "budget"
  /// (spent), "rounds" (the most it takes) or "mismatch" (a wrong output).
  std::optional<std::string> stopped_by;
  std::optional<std::string> mismatch;  // a timed output that differed: "round N: ..."
  // cpu: the evaluator's outside clock over rotating input sets.
  std::optional<int64_t> attempts, sets, set_bytes;
  std::optional<std::vector<double>> other_load_cores, steal_cores;
  std::optional<double> request_overhead_us, setup_s, loop_s, candidate_inner_median_us;
  std::optional<int64_t> reuse_pairs;  // back-to-back pairs taken to confirm a suspicion of skipped work
  /// [s] how long the timing waited for the cores alone (other evaluations' builds and checks
  /// finishing); set where it shared the machine with other evaluations.
  std::optional<double> waited_s;
  // cuda: the nvbench method.
  std::optional<SideTiming> candidate, baseline;
  std::optional<bool> blocking_kernel;
  std::optional<int64_t> l2_flush_bytes;
  std::optional<double> final_check_s;
};

struct PhysicalLimitFacts {
  double floor_us = 0;
  std::string bound_by;  // "memory" or "compute"
  double bandwidth_gbps = 0;
  double fp32_gflops = 0;
};

struct ProfileFacts {
  std::vector<std::string> facts;  // heaviest kernel first
  nlohmann::json kernels = nlohmann::json::array();  // ncu's metrics per launch, as ncu names them
};

struct StageDetails {
  std::string summary;  // one line for people
  std::string note;     // a warning about the measurement
  bool cancelled = false;
  std::optional<Failure> failure;
  std::string candidate_output;  // the tail of what the candidate's worker printed
  std::string log;               // a failing build's trimmed log, as the compiler wrote it
  std::string expected_signature;  // the declaration a rejected candidate must define
  std::vector<Diagnostic> diagnostics;  // a rejected build's errors, in the log's order
  std::vector<AuditFinding> findings;
  std::vector<std::string> violations;  // GPU work the candidate was not allowed
  std::optional<Protections> protections;
  std::optional<double> cpu_ms_while_idle;
  std::optional<BuildFacts> build;
  std::optional<CheckFacts> check;
  std::optional<RequestCounters> counters;
  std::optional<TimingFacts> timing;
  std::optional<PhysicalLimitFacts> limit;
  std::optional<ProfileFacts> profile;
  nlohmann::json unknown = nlohmann::json::object();  // keys read that this version does not know

  /// The flat `details` object (docs/verdict.md).
  nlohmann::json ToJson() const;
  /// Reads any version's `details`, old key names included; never fails.
  static StageDetails FromJson(const nlohmann::json& json);

  Failure& MutableFailure(FailureKind kind);
  CheckFacts& MutableCheck();
  RequestCounters& MutableCounters();
  TimingFacts& MutableTiming();
  /// The failure's case label, or "".
  std::string FailedCaseLabel() const;
};

}  // namespace ksmith
