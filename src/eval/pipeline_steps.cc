#include "eval/pipeline_steps.h"

#include <random>

#include <fmt/format.h>

#include "binary/disassembly.h"
#include "core/clock.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/strings.h"

namespace ksmith {
namespace {

constexpr size_t kMaxLogLines = 40;
constexpr size_t kMaxLogBytes = 4000;

}  // namespace

uint64_t EvaluationSeed(const EvalOptions& options) {
  if (options.fixed_seed) return *options.fixed_seed;
  std::random_device device;  // getrandom(2)
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

nlohmann::json CommonProvenance(const EvalOptions& options, uint64_t secret_seed, const Task& task,
                                const CandidateSource& candidate) {
  return {{"ksmith_version", KSMITH_VERSION},
          {"secret_seed_sha256", Sha256Hex(std::to_string(secret_seed)).substr(0, 16)},
          {"seed_fixed_by_user", options.fixed_seed.has_value()},
          {"task_file", task.toml_path.string()},
          {"candidate_sha256", Sha256Hex(candidate.text)}};
}

bool FinishAuditFailure(VerdictRecorder& recorder, StageRecord& stage,
                        const std::vector<AuditFinding>& findings, const std::string& what) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& finding : findings) list.push_back(finding.ToJson());
  stage.details["findings"] = list;
  stage.details["summary"] = fmt::format("{} breaks the candidate contract: {}", what, findings.front().message);
  return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                         fmt::format("{} ({} finding{})", findings.front().message, findings.size(),
                                     findings.size() == 1 ? "" : "s"));
}

bool AuditCandidateSource(VerdictRecorder& recorder, const CandidateSource& candidate,
                          const std::function<std::vector<AuditFinding>()>& audit) {
  const auto start = SteadyClock::now();
  if (const std::string reason = UnusableSourceReason(candidate); !reason.empty()) {
    auto& build = recorder.Stage("build");
    build.details["summary"] = reason;
    return recorder.Finish(build, VerdictStatus::kCompileError, reason);
  }
  auto& stage = recorder.Stage("audit");
  const auto findings = audit();
  stage.seconds = SecondsSince(start);
  if (!findings.empty()) return FinishAuditFailure(recorder, stage, findings, "source");
  stage.details["summary"] = "source follows the candidate contract";
  return true;
}

bool FinishCompileFailure(VerdictRecorder& recorder, StageRecord& stage, const std::string& log,
                          const Task& task, const std::string& expected_declaration,
                          const std::string& compiler_name) {
  if (const auto findings = AuditBuildLog(log, task); !findings.empty()) {
    stage.details["log"] = TrimLog(log, kMaxLogLines, kMaxLogBytes);
    return FinishAuditFailure(recorder, stage, findings, "build");
  }
  stage.details["log"] = TrimLog(log, kMaxLogLines, kMaxLogBytes) +
                         "\nThe candidate must define, with C linkage:\n  " + expected_declaration + "\n";
  stage.details["expected_signature"] = expected_declaration;
  stage.details["summary"] = "the compiler rejected the candidate";
  const bool missing = log.find("undefined reference to `" + task.signature.function) != std::string::npos;
  return recorder.Finish(stage, VerdictStatus::kCompileError,
                         missing ? fmt::format("the candidate does not define {}", expected_declaration)
                                 : fmt::format("{} rejected the candidate (see the build log)", compiler_name));
}

bool FinishWorkerFailure(VerdictRecorder& recorder, StageRecord& stage, const WorkerProcess& worker) {
  const auto& failure = *worker.failure();
  const std::string output = worker.OutputTail(2000);
  if (!output.empty()) stage.details["candidate_output"] = output;
  switch (failure.kind) {
    case WorkerFailureKind::kTimedOut:
      return recorder.Finish(stage, VerdictStatus::kTimeout, failure.description);
    case WorkerFailureKind::kCrashed:
    case WorkerFailureKind::kExited:
      return recorder.Finish(stage, VerdictStatus::kRuntimeError, failure.description);
    case WorkerFailureKind::kProtocol:
      return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                             failure.description + " (forged or corrupted reply)");
    case WorkerFailureKind::kInfrastructure:
      return recorder.Finish(stage, VerdictStatus::kInfraError, failure.description);
  }
  return false;
}

Result<std::pair<BuildRequest, BuildRequest>> ReadTrustedSources(const Task& task, const BackendTraits& traits,
                                                                 const std::filesystem::path& reference_source) {
  const auto baseline = task.baselines.find(traits.name);
  if (baseline == task.baselines.end()) {
    return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no [baseline.{}]", task.name, traits.name);
  }
  auto reference_text = ReadFile(reference_source);
  if (!reference_text.ok()) return reference_text.error();
  auto baseline_text = ReadFile(baseline->second.source);
  if (!baseline_text.ok()) return baseline_text.error();
  return std::pair{
      BuildRequest{*reference_text, "reference" + traits.source_extension, KernelRole::kReference, {}},
      BuildRequest{*baseline_text, "baseline_" + traits.name + traits.source_extension, KernelRole::kBaseline,
                   baseline->second.libraries}};
}

void MarkPassed(Verdict& verdict, size_t cases) {
  verdict.status = VerdictStatus::kPassed;
  verdict.reason = fmt::format("correct on all {} cases", cases);
  if (verdict.timing) {
    verdict.reason += fmt::format("; speedup {:.2f}x ({})", verdict.timing->speedup.median, verdict.timing->comparison);
  }
}

Result<std::vector<AuditFinding>> AuditBuiltObject(
    const std::filesystem::path& shared_object,
    const std::function<std::vector<AuditFinding>(const DynamicSymbols&)>& audit_symbols) {
  auto symbols = ReadDynamicSymbols(shared_object);
  if (!symbols.ok()) return symbols.error();
  auto findings = audit_symbols(*symbols);
  auto instructions = FindInstructions(shared_object, ForbiddenInstructions());
  if (!instructions.ok()) return instructions.error();
  for (auto& finding : AuditInstructions(*instructions)) findings.push_back(std::move(finding));
  return findings;
}

}  // namespace ksmith
