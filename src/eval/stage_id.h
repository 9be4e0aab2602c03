// The stages of an evaluation, by name: one enum, so that no stage is spelled twice as a string.
// A verdict's JSON keeps the name (`StageName`), which is what older verdicts in a store hold.
#pragma once

#include <optional>
#include <string_view>

namespace ksmith {

enum class StageId {
  // The pipeline's, before any candidate code runs.
  kAudit,
  kBuild,
  kTrustedBuild,
  kBinaryAudit,
  kRelease,
  kVerify,    // where a cancelled evaluation stopped before its session began
  kInternal,  // a bug caught by the pipeline
  // A verification session's (eval/stage_driver.h runs them in the order the backend declares).
  kSandbox,
  kCorrectness,
  kDeterminism,
  kIdleCheck,
  kTiming,
  kRecheck,
  kPhysicalLimit,
  kProcessState,
  kHiddenShapes,
  kSecondTiming,
  kClose,
  // After a verdict, on request. Last of all: StageFromName reads the stages up to it.
  kProfile,
};

/// "correctness": the name in a verdict's JSON and in its rendering.
std::string_view StageName(StageId stage);
/// The stage called `name`, or none for a name this version does not know.
std::optional<StageId> StageFromName(std::string_view name);

}  // namespace ksmith
