#include "eval/stage_id.h"

namespace ksmith {

// A switch without a default: a stage added to the enum and not named here is a compiler warning.
std::string_view StageName(StageId stage) {
  switch (stage) {
    case StageId::kAudit: return "audit";
    case StageId::kBuild: return "build";
    case StageId::kTrustedBuild: return "trusted_build";
    case StageId::kBinaryAudit: return "binary_audit";
    case StageId::kRelease: return "release";
    case StageId::kVerify: return "verify";
    case StageId::kInternal: return "internal";
    case StageId::kSandbox: return "sandbox";
    case StageId::kCorrectness: return "correctness";
    case StageId::kDeterminism: return "determinism";
    case StageId::kIdleCheck: return "idle_check";
    case StageId::kTiming: return "timing";
    case StageId::kRecheck: return "recheck";
    case StageId::kPhysicalLimit: return "physical_limit";
    case StageId::kProcessState: return "process_state";
    case StageId::kHiddenShapes: return "hidden_shapes";
    case StageId::kSecondTiming: return "second_timing";
    case StageId::kClose: return "close";
    case StageId::kProfile: return "profile";
  }
  return "unknown";  // unreachable for a valid StageId
}

std::optional<StageId> StageFromName(std::string_view name) {
  for (int value = 0; value <= static_cast<int>(StageId::kProfile); ++value) {
    if (StageName(static_cast<StageId>(value)) == name) return static_cast<StageId>(value);
  }
  return std::nullopt;
}

}  // namespace ksmith
