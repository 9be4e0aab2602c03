#include "eval/pipeline_steps.h"

#include <regex>

#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "binary/disassembly.h"
#include "compile/diagnostics.h"
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
  stage.details.findings = findings;
  stage.details.summary = fmt::format("{} breaks the candidate contract: {}", what, findings.front().message);
  return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                         fmt::format("{} ({} finding{})", findings.front().message, findings.size(),
                                     findings.size() == 1 ? "" : "s"),
                         FailureKind::kContractFinding);
}

bool AuditCandidateSource(VerdictRecorder& recorder, const CandidateSource& candidate,
                          const std::function<std::vector<AuditFinding>()>& audit) {
  const auto start = SteadyClock::now();
  if (const std::string reason = UnusableSourceReason(candidate); !reason.empty()) {
    auto& build = recorder.Stage(StageId::kBuild);
    build.details.summary = reason;
    return recorder.Finish(build, VerdictStatus::kCompileError, reason, FailureKind::kUnusableSource);
  }
  auto& stage = recorder.Stage(StageId::kAudit);
  const auto findings = audit();
  stage.seconds = SecondsSince(start);
  if (!findings.empty()) return FinishAuditFailure(recorder, stage, findings, "source");
  stage.details.summary = "source follows the candidate contract";
  return true;
}

bool FinishCompileFailure(VerdictRecorder& recorder, StageRecord& stage, const std::string& log,
                          const Task& task, const std::string& expected_declaration,
                          const std::string& compiler_name) {
  if (const auto findings = AuditBuildLog(log, task); !findings.empty()) {
    stage.details.log = TrimLog(log, kMaxLogLines, kMaxLogBytes);
    return FinishAuditFailure(recorder, stage, findings, "build");
  }
  stage.details.log = TrimLog(log, kMaxLogLines, kMaxLogBytes);
  stage.details.expected_signature = expected_declaration;
  stage.details.diagnostics = ParseDiagnostics(log);
  stage.details.summary = "the compiler rejected the candidate";
  const bool missing = log.find("undefined reference to `" + task.signature.function) != std::string::npos;
  return recorder.Finish(stage, VerdictStatus::kCompileError,
                         missing ? fmt::format("the candidate does not define {}", expected_declaration)
                                 : fmt::format("{} rejected the candidate (see the build log)", compiler_name));
}

std::string ProcessStateReason(const std::vector<std::string>& changes) {
  return fmt::format("the candidate changed process-wide settings the baseline runs under: {} (the worker undid "
                     "each change before the baseline ran)", fmt::join(changes, "; "));
}

std::string CustomCodeLabel(const nlohmann::json& custom_code) {
  if (!custom_code.is_object()) return "";
  const int64_t calls = custom_code.value("calls", int64_t{0});
  const int64_t without = custom_code.value("calls_without_custom_code", int64_t{0});
  if (calls <= 0 || without <= 0) return "";
  if (without >= calls) return fmt::format("no custom kernel (none of its {} calls ran code of its own: torch only)", calls);
  return fmt::format("custom kernel in some calls only ({} of {} calls ran none of its own code: a fallback)", without,
                     calls);
}

void LaunchedKernels::Add(const nlohmann::json& run_reply) {
  const auto own = run_reply.find("own_kernels");
  const auto libraries = run_reply.find("launched_by");
  if (own == run_reply.end() || !own->is_number_integer() || libraries == run_reply.end() || !libraries->is_object()) {
    return;
  }
  ++runs;
  if (own->get<int64_t>() == 0) ++runs_without_own_kernel;
  device_ns += run_reply.value("device_ns", int64_t{0});
  own_device_ns += run_reply.value("own_device_ns", int64_t{0});
  for (const auto& [library, count] : libraries->items()) {
    if (count.is_number_integer()) by_library[library] += count.get<int64_t>();
  }
}

std::optional<KernelTimeShare> LaunchedKernels::TimeShare() const {
  if (runs <= 0 || device_ns <= 0) return std::nullopt;
  KernelTimeShare share;
  share.own_ns = own_device_ns;
  share.total_ns = device_ns;
  share.runs = runs;
  return share;
}

std::string LaunchedKernelsLabel(const LaunchedKernels& launched) {
  if (launched.runs <= 0 || launched.runs_without_own_kernel <= 0) return "";
  std::vector<std::string> libraries;
  for (const auto& [library, count] : launched.by_library) libraries.push_back(fmt::format("{} {}", library, count));
  const std::string from = libraries.empty() ? "no kernel ran" : "kernels by launching library: " + fmt::format("{}", fmt::join(libraries, ", "));
  if (launched.runs_without_own_kernel >= launched.runs) {
    return fmt::format("no custom kernel (CUPTI: none of its {} checked runs launched a kernel from its own code; {})",
                       launched.runs, from);
  }
  return fmt::format("custom kernel in some calls only (CUPTI: {} of {} checked runs launched no kernel from its own "
                     "code: a fallback; {})", launched.runs_without_own_kernel, launched.runs, from);
}

std::vector<std::string> StateReportLabels(const nlohmann::json& state_reply) {
  std::vector<std::string> labels;
  if (std::string label = CustomCodeLabel(state_reply.value("custom_code", nlohmann::json())); !label.empty()) {
    labels.push_back(std::move(label));
  }
  if (const auto restored = state_reply.value("restored", std::vector<std::string>{}); !restored.empty()) {
    labels.push_back(fmt::format("changed process state only its own calls read (restored, not failed): {}",
                                 fmt::join(restored, "; ")));
  }
  return labels;
}

std::string RaisedPythonException(std::string_view output) {
  // Without ksmith's own module: the package a shim embeds (ksmith_kb_<hash>.candidate.), or the
  // runner module of a shim generated before the package (ksmith_kb_runner_<hash>.).
  static const std::regex kException(
      R"(^(?:ksmith_kb_[0-9a-f]+\.[a-z_]+\.|ksmith_kb_runner_[0-9a-f]+\.)?((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit)(?::.*)?)$)");
  std::string found;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    const std::string line(output.substr(start, end - start));
    std::smatch match;
    if (std::regex_match(line, match, kException)) found = match[1].str();
    start = end + 1;
  }
  return found;
}

bool FinishWorkerFailure(VerdictRecorder& recorder, StageRecord& stage, const WorkerProcess& worker,
                         std::optional<CaseRef> running) {
  const auto& failure = *worker.failure();
  if (running) stage.details.MutableFailure(FailureKind::kUnspecified).at = std::move(running);
  const std::string output = worker.OutputTail(2000);
  if (!output.empty()) stage.details.candidate_output = output;
  switch (failure.kind) {
    case WorkerFailureKind::kTimedOut:
      return recorder.Finish(stage, VerdictStatus::kTimeout, failure.description, FailureKind::kWorkerTimedOut);
    case WorkerFailureKind::kCrashed: {
      stage.details.MutableFailure(FailureKind::kWorkerCrashed).signal = failure.signal;
      const std::string raised = RaisedPythonException(output);
      return recorder.Finish(stage, VerdictStatus::kRuntimeError,
                             raised.empty() ? failure.description : failure.description + ": " + raised);
    }
    case WorkerFailureKind::kExited:
      return recorder.Finish(stage, VerdictStatus::kRuntimeError, failure.description, FailureKind::kWorkerExited);
    case WorkerFailureKind::kProtocol:
      return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                             failure.description + " (forged or corrupted reply)", FailureKind::kForgedReply);
    case WorkerFailureKind::kInfrastructure:
      return recorder.Finish(stage, VerdictStatus::kInfraError, failure.description, FailureKind::kInfrastructure);
    case WorkerFailureKind::kForbiddenCall:
      return recorder.Finish(stage, VerdictStatus::kIntegrityViolation, failure.description, FailureKind::kForbiddenCall);
  }
  return false;
}

bool FinishCandidateRaised(VerdictRecorder& recorder, StageRecord& stage, const nlohmann::json& raised,
                           std::optional<CaseRef> at, const std::string& output) {
  const std::string message = raised.value("message", std::string("its Python raised an exception"));
  if (!output.empty()) stage.details.candidate_output = output;
  const std::string where = at ? " (at " + at->label + ")" : "";
  if (at) stage.details.MutableFailure(FailureKind::kUnspecified).at = std::move(at);
  if (raised.value("at", std::string()) == "build") {
    return recorder.Finish(stage, VerdictStatus::kCompileError, "the candidate could not be built: " + message + where);
  }
  return recorder.Finish(stage, VerdictStatus::kRuntimeError, message + where);
}

CaseRef CaseRefFor(const Task& task, const CaseSpec& spec) {
  CaseRef ref;
  ref.label = spec.label;
  ref.shape = task.FormatShape(spec.shape);
  ref.distribution = DistributionName(spec.distribution);
  for (const auto& [dim, value] : spec.shape) {
    ref.smallest_dim = ref.smallest_dim == 0 ? value : std::min(ref.smallest_dim, value);
  }
  return ref;
}

bool FinishCaseProblem(VerdictRecorder& recorder, StageRecord& stage, const Task& task, const CaseSpec& spec,
                       const CaseCheck& check, bool after_timing, const std::string& wrong_output_suffix) {
  Failure& failure = stage.details.MutableFailure(FailureKind::kUnspecified);
  failure.at = CaseRefFor(task, spec);
  failure.guard = check.guard;
  if (check.problem == CaseProblem::kWrongOutput) {
    // Integer outputs (indices) are compared exactly: the reason says which differ.
    if (const auto& comparison = check.comparison) {
      OutputMismatch& mismatch = failure.mismatch.emplace();
      mismatch.output = check.output;
      mismatch.count = static_cast<int64_t>(comparison->count);
      mismatch.unwritten = static_cast<int64_t>(comparison->unwritten);
      mismatch.nonfinite = static_cast<int64_t>(comparison->nonfinite);
      mismatch.over_bound = static_cast<int64_t>(comparison->over_bound);
      mismatch.norm_error = comparison->norm_error;
      mismatch.norm_bound = comparison->norm_bound;
      mismatch.worst_index = static_cast<int64_t>(comparison->worst_index);
      mismatch.worst_got = comparison->worst_got;
      mismatch.worst_ref = comparison->worst_ref;
      mismatch.worst_abs_error = comparison->worst_abs_error;
    }
    if (after_timing) {
      return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                             fmt::format("correct before timing but wrong after it (it behaves differently "
                                         "after many calls), at {}: {}",
                                         spec.label, check.description),
                             FailureKind::kWrongAfterTiming);
    }
    return recorder.Finish(stage, VerdictStatus::kWrongOutput,
                           fmt::format("wrong output at {}: {}{}", spec.label, check.description, wrong_output_suffix),
                           FailureKind::kWrongOutput);
  }
  const FailureKind kind = check.problem == CaseProblem::kInputModified ? FailureKind::kInputModified
                           : check.problem == CaseProblem::kGuardDamaged ? FailureKind::kOutOfBounds
                                                                         : FailureKind::kMalformedReply;
  return recorder.Finish(stage, VerdictStatus::kIntegrityViolation,
                         fmt::format("at {}: the kernel {}", spec.label, check.description), kind);
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

void CheckHiddenShapes(VerdictRecorder& recorder, StageRecord& stage, const std::vector<CaseSpec>& cases,
                       const std::function<bool(const CaseSpec&)>& run_case) {
  Verdict& verdict = recorder.verdict();
  std::optional<Generalization>& shapes = verdict.extensions.generalization;
  Generalization& report = shapes ? *shapes : shapes.emplace();
  const VerdictStatus status = verdict.status;
  std::string reason = verdict.reason;
  report.generalizes = true;
  report.hidden_cases = 0;
  if (cases.empty()) {  // unknown, not "yes"
    report.generalizes.reset();
    report.reason = "the task has no hidden shapes";
  }
  for (const CaseSpec& spec : cases) {
    ++report.hidden_cases;
    if (run_case(spec)) continue;
    if (verdict.status == VerdictStatus::kInfraError) {
      report.generalizes.reset();
      report.reason = verdict.reason;
    } else {
      report.generalizes = false;
      report.reason = fmt::format("{} ({})", verdict.reason, VerdictStatusName(verdict.status));
    }
    break;
  }
  verdict.status = status;
  verdict.reason = std::move(reason);
  stage.outcome = "ok";
  stage.details.summary = report.Summary();
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
