#include "eval/verdict_upgrade.h"

#include <cstdlib>
#include <regex>
#include <string>

#include "compile/diagnostics.h"
#include "core/strings.h"

namespace ksmith {
namespace {

// std::regex recurses per character: only bounded text goes through it.
constexpr size_t kMaxParsedChars = 2000;

bool Has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

std::string Match(const std::string& text, const std::regex& pattern, int group = 1) {
  std::smatch match;
  return std::regex_search(text, match, pattern) ? match[group].str() : std::string();
}

int64_t ToInt(const std::string& digits) { return std::strtoll(digits.c_str(), nullptr, 10); }

// The kind from the words versions 1 and 2 wrote (the statuses and reasons of pipeline_steps.cc,
// the sessions and the physical-limit check at those versions).
FailureKind KindFromWords(VerdictStatus status, const StageRecord& stage, const std::string& reason) {
  if (!stage.details.findings.empty()) return FailureKind::kContractFinding;
  switch (status) {
    case VerdictStatus::kPassed:
      return FailureKind::kUnspecified;
    case VerdictStatus::kCompileError:
      return stage.details.log.empty() ? FailureKind::kUnusableSource : FailureKind::kCompilerRejected;
    case VerdictStatus::kTimeout:
      return FailureKind::kWorkerTimedOut;
    case VerdictStatus::kWrongOutput:
      return FailureKind::kWrongOutput;
    case VerdictStatus::kInfraError:
      return stage.details.cancelled || Has(reason, "cancelled") ? FailureKind::kCancelled : FailureKind::kInfrastructure;
    case VerdictStatus::kRuntimeError:
      if (Has(reason, "could not be loaded")) return FailureKind::kNotLoadable;
      if (Has(reason, "CUDA error")) return FailureKind::kCudaError;
      if (Has(reason, "the worker ended (killed by")) return FailureKind::kWorkerCrashed;
      if (Has(reason, "the worker ended (") || Has(reason, "did not exit cleanly")) return FailureKind::kWorkerExited;
      return FailureKind::kUnspecified;
    case VerdictStatus::kIntegrityViolation:
      if (stage.Is(StageId::kPhysicalLimit) || Has(reason, "not real")) return FailureKind::kTimeNotReal;
      if (Has(reason, "correct before timing but wrong after")) return FailureKind::kWrongAfterTiming;
      if (Has(reason, "modified its input")) return FailureKind::kInputModified;
      if (Has(reason, "out of bounds")) return FailureKind::kOutOfBounds;
      if (Has(reason, "bytes, expected")) return FailureKind::kMalformedReply;
      if (Has(reason, "outside the given stream")) return FailureKind::kOtherStream;
      if (Has(reason, "still being written")) return FailureKind::kLateWrite;
      if (Has(reason, "background") || Has(reason, "launched after")) return FailureKind::kWorkAfterReturn;
      if (Has(reason, "differently when timed") || Has(reason, "skips, caches") || Has(reason, "last timed inputs")) {
        return FailureKind::kTimedOutputDiffers;
      }
      if (Has(reason, "forged")) return FailureKind::kForgedReply;
      return FailureKind::kUnspecified;
  }
  return FailureKind::kUnspecified;
}

// Comparison::Describe()'s numbers, after "output 'c': ".
OutputMismatch MismatchFromWords(const std::string& reason) {
  OutputMismatch mismatch;
  mismatch.output = Match(reason, std::regex(R"(output '([^']+)':)"));
  std::smatch match;
  if (std::regex_search(reason, match, std::regex(R"((\d+) of (\d+) output elements were never written)"))) {
    mismatch.unwritten = ToInt(match[1]);
    mismatch.count = ToInt(match[2]);
  }
  if (std::regex_search(reason, match, std::regex(R"((\d+) elements are NaN or Inf)"))) {
    mismatch.nonfinite = ToInt(match[1]);
  }
  if (std::regex_search(reason, match, std::regex(R"((\d+) of (\d+) elements exceed)"))) {
    mismatch.over_bound = ToInt(match[1]);
    mismatch.count = ToInt(match[2]);
  }
  if (std::regex_search(reason, match, std::regex(R"(norm-wise relative error (\S+) \(bound (\S+)\))"))) {
    mismatch.norm_error = std::atof(match[1].str().c_str());
    mismatch.norm_bound = std::atof(match[2].str().c_str());
  }
  if (std::regex_search(reason, match,
                        std::regex(R"(worst element \[(\d+)\]: got (\S+), expected (\S+) \(\|error\| ([^)]+)\))"))) {
    mismatch.worst_index = ToInt(match[1]);
    mismatch.worst_got = std::atof(match[2].str().c_str());
    mismatch.worst_ref = std::atof(match[3].str().c_str());
    mismatch.worst_abs_error = std::atof(match[4].str().c_str());
  }
  return mismatch;
}

void UpgradeFailedStage(Verdict& verdict, StageRecord& stage) {
  const std::string reason = FirstLine(verdict.reason, kMaxParsedChars);
  Failure& failure = stage.details.MutableFailure(stage.details.failure ? stage.details.failure->kind
                                                                         : FailureKind::kUnspecified);
  if (failure.kind == FailureKind::kUnspecified) failure.kind = KindFromWords(verdict.status, stage, reason);
  // A worker that died named its case only in the reason: "... while running case <label>".
  if (!failure.at) {
    if (const std::string label = Match(reason, std::regex(R"(while running case (.+)$)")); !label.empty()) {
      failure.at = CaseRef::FromLabel(label);
    }
  }
  if (failure.kind == FailureKind::kWorkerCrashed && failure.signal == 0) {
    failure.signal = static_cast<int>(ToInt(Match(reason, std::regex(R"(\(signal (\d+)\))"))));
  }
  if (failure.kind == FailureKind::kCudaError && failure.cuda_error_name.empty()) {
    failure.cuda_error_name = Match(reason, std::regex(R"(\((cudaError\w+)\))"));
  }
  const bool compared = failure.kind == FailureKind::kWrongOutput || failure.kind == FailureKind::kWrongAfterTiming;
  if (compared && !failure.mismatch && Has(reason, "norm-wise relative error")) {
    failure.mismatch = MismatchFromWords(reason);
  }
}

}  // namespace

void UpgradeOldVerdict(Verdict& verdict) {
  for (auto& stage : verdict.stages) {
    if (stage.Is(StageId::kBuild) && stage.outcome == "failed" && stage.details.diagnostics.empty() &&
        !stage.details.log.empty()) {
      stage.details.diagnostics = ParseDiagnostics(stage.details.log);
    }
  }
  if (verdict.status == VerdictStatus::kPassed) return;
  for (auto it = verdict.stages.rbegin(); it != verdict.stages.rend(); ++it) {
    if (it->outcome == "failed") {
      UpgradeFailedStage(verdict, *it);
      return;
    }
  }
}

}  // namespace ksmith
