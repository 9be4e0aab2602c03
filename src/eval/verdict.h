// The result of one evaluation: a status, what each stage found, and where it came from.
#pragma once

#include <chrono>

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "eval/stage_details.h"
#include "eval/stage_id.h"
#include "eval/statistics.h"

namespace ksmith {

enum class VerdictStatus {
  kPassed,
  kCompileError,
  kRuntimeError,
  kTimeout,
  kWrongOutput,
  kIntegrityViolation,
  kInfraError,  // the evaluator's own fault, never the candidate's
};

const char* VerdictStatusName(VerdictStatus status);
/// The status called `name` ("wrong_output"); kParse for any other text.
Result<VerdictStatus> ParseVerdictStatus(std::string_view name);

/// The version of the verdict's JSON form. 2: `schema_version` written, one physical_limit detail
/// schema for every backend. 3: typed stage details; what failed is recorded as fields (`failure`,
/// `diagnostics`). Verdicts without the field were written by version 1.
inline constexpr int kVerdictSchemaVersion = 3;

struct StageRecord {
  std::string name;     // StageName(id): a verdict's JSON keeps the name
  std::string outcome;  // "ok" or "failed"
  double seconds = 0;   // [s]
  StageDetails details;
  double started_s = 0;  // [s] since the evaluation began: gaps between stages show too

  bool Is(StageId id) const { return name == StageName(id); }
};

struct Timing {
  Estimate candidate_us;  // [microseconds]
  Estimate baseline_us;   // [microseconds]
  Estimate speedup;       // baseline / candidate, paired by round
  std::string comparison; // "faster", "slower" or "tie" (interval contains 1)
  double roofline_fraction = 0;  // physical floor / candidate median; 0 when no floor was set, above 1
                                 // only within the physical-limit check's slack
  double floor_us = 0;           // [microseconds] the machine's physical limit at the bench shape
  std::string bound_by;          // "memory" or "compute"
  std::string baseline;          // what the candidate was timed against: the task's baseline description
  /// The timing held the device alone: no other work ran on it meanwhile (cpu: other processes,
  /// or the hypervisor, took more than 0.3 cores' worth). A speedup timed beside other work is
  /// not comparable: `ksmith bench` leaves it out. True in verdicts written before it was recorded.
  bool alone = true;
};

/// Timing from paired samples (by round) of both sides, against `baseline` (its description).
Timing MakeTiming(const std::vector<double>& candidate_us, const std::vector<double>& baseline_us,
                  std::string baseline);

/// Where a candidate whose hidden shapes do not decide (EvalOptions::hidden_shapes_decide: a
/// KernelBench-format candidate, whose problems are fixed-shape) was judged, and whether it also
/// works at the task's hidden shapes: a property of the kernel, never its verdict.
struct Generalization {
  std::string decided_at;     // the bench shape, formatted ("batch_size=64, in_features=256")
  /// The problem's own sizes where the bench shape is smaller (halved to fit the backend's
  /// limits); empty when the bench shape is the problem's own.
  std::string problem_sizes;
  std::optional<bool> generalizes;  // unset while the hidden shapes have not run
  int64_t hidden_cases = 0;         // hidden-shape cases run, the failing one included
  std::string reason;               // where and how it failed at a hidden shape

  nlohmann::json ToJson() const;
  static Generalization FromJson(const nlohmann::json& json);
  /// "generalizes: yes (12 cases at the hidden shapes)", "generalizes: no: ...".
  std::string Summary() const;
};

/// How much of the GPU time of a candidate's checked runs went to kernels its own code launched
/// (CUPTI attributes each launch to the library that made it; eval/pipeline_steps.h's
/// LaunchedKernels): a KernelBench candidate that launches one trivial kernel of its own and
/// leaves the real work to torch has a small share. The reward service pays for it (Dr.Kernel's
/// "time coverage"); it never changes the status.
struct KernelTimeShare {
  int64_t own_ns = 0;    // [ns] in the candidate's own kernels
  int64_t total_ns = 0;  // [ns] in every kernel on its stream
  int64_t runs = 0;      // checked runs counted
  double share() const { return total_ns > 0 ? static_cast<double>(own_ns) / static_cast<double>(total_ns) : 0.0; }

  nlohmann::json ToJson() const;
  static KernelTimeShare FromJson(const nlohmann::json& json);
};

/// What the candidate's format reports beside the status, through the seams of
/// eval/candidate_format.h; each part is a top-level key of the verdict's JSON, absent when unset.
/// Never changes the status.
struct VerdictExtensions {
  /// The candidate timed against its format's second baseline in the same worker (torch.compile
  /// beside a KernelBench problem's eager; TrustedBuild::second). JSON: `second_timing`, `second_speedup`.
  std::optional<Timing> second_timing;
  /// Where a fixed-shape candidate was judged, whether it generalizes. JSON: `generalization`.
  std::optional<Generalization> generalization;
  /// Where launches were attributed (KernelBench candidates on the GPU). JSON: `kernel_time_share`.
  std::optional<KernelTimeShare> kernel_time_share;

  /// Adds the parts that are set to `verdict` (Verdict::ToJson's object).
  void AddToJson(nlohmann::json& verdict) const;
  /// The parts a verdict's JSON holds; a part whose key is missing or not an object stays unset.
  static VerdictExtensions FromJson(const nlohmann::json& verdict);
  /// Lines for Verdict::Render: where the candidate was judged (after the status), and the
  /// second timing (after the first).
  std::string RenderJudged() const;
  std::string RenderTimings() const;
};

struct Verdict {
  int schema_version = kVerdictSchemaVersion;
  VerdictStatus status = VerdictStatus::kInfraError;
  std::string reason;  // one line: why this status
  std::string task;
  std::string backend;
  std::string candidate;
  std::deque<StageRecord> stages;  // a deque: references to earlier stages stay valid
  std::optional<Timing> timing;
  /// What a benchmark of kernel generation must be able to count, beside the status: "no custom
  /// kernel" (a KernelBench candidate whose calls ran none of its own compiled code), "custom
  /// kernel in some calls only" (a fallback). Never changes the status.
  std::vector<std::string> labels;
  VerdictExtensions extensions;  // what the candidate's format reports beside the status
  nlohmann::json provenance = nlohmann::json::object();
  double total_s = 0;  // [s]
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();

  /// The static findings a KernelBench candidate's build sandbox reported ([{check, line, detail}]);
  /// an empty array for any other candidate.
  nlohmann::json StaticFindings() const;
  /// The first stage `id`, or null.
  const StageRecord* FindStage(StageId id) const;
  /// The stage that ended the evaluation (the last one marked failed), or null.
  const StageRecord* FailedStage() const;

  nlohmann::json ToJson() const;
  /// A verdict as ToJson wrote it, by this version or an older one (the store keeps both):
  /// every field but `status` may be missing. kParse when it is not a verdict at all.
  static Result<Verdict> FromJson(const nlohmann::json& json);
  /// A few lines for a person at a terminal.
  std::string Render() const;
};

/// Appends stages to a verdict and ends it with a status: the one way every step of an
/// evaluation records what it found.
class VerdictRecorder {
 public:
  explicit VerdictRecorder(Verdict& verdict) : verdict_(verdict) {}

  /// A new stage, "ok" until Finish says otherwise. The reference stays valid.
  StageRecord& Stage(StageId id);
  /// Marks `stage` failed and sets the verdict's status and reason (also the stage's summary,
  /// unless it has one) and, unless unspecified, what failed. Returns false, so that a failing
  /// step can `return Finish(...)`.
  bool Finish(StageRecord& stage, VerdictStatus status, std::string reason,
              FailureKind kind = FailureKind::kUnspecified);

  Verdict& verdict() { return verdict_; }

 private:
  Verdict& verdict_;
};

}  // namespace ksmith
