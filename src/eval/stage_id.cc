#include "eval/stage_id.h"

#include <array>
#include <utility>

namespace ksmith {
namespace {

constexpr std::array<std::pair<StageId, std::string_view>, 19> kNames = {{
    {StageId::kAudit, "audit"},
    {StageId::kBuild, "build"},
    {StageId::kTrustedBuild, "trusted_build"},
    {StageId::kBinaryAudit, "binary_audit"},
    {StageId::kRelease, "release"},
    {StageId::kVerify, "verify"},
    {StageId::kInternal, "internal"},
    {StageId::kSandbox, "sandbox"},
    {StageId::kCorrectness, "correctness"},
    {StageId::kDeterminism, "determinism"},
    {StageId::kIdleCheck, "idle_check"},
    {StageId::kTiming, "timing"},
    {StageId::kRecheck, "recheck"},
    {StageId::kPhysicalLimit, "physical_limit"},
    {StageId::kProcessState, "process_state"},
    {StageId::kHiddenShapes, "hidden_shapes"},
    {StageId::kSecondTiming, "second_timing"},
    {StageId::kClose, "close"},
    {StageId::kProfile, "profile"},
}};

}  // namespace

std::string_view StageName(StageId stage) {
  for (const auto& [id, name] : kNames) {
    if (id == stage) return name;
  }
  return "unknown";  // unreachable: every enumerator is in the table (stage_id_test.cc)
}

std::optional<StageId> StageFromName(std::string_view name) {
  for (const auto& [id, known] : kNames) {
    if (known == name) return id;
  }
  return std::nullopt;
}

}  // namespace ksmith
