#include "eval/evaluator.h"

#include <chrono>
#include <cstring>
#include <future>

#include "backend/cpu/disassembly.h"
#include "backend/cpu/elf_symbols.h"
#include "backend/cpu/shared_library.h"
#include "core/clock.h"
#include "core/files.h"
#include "core/strings.h"
#include "eval/audit.h"
#include "eval/cases.h"
#include "eval/pipeline_steps.h"
#include "eval/worker_session.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;

constexpr size_t kMaxLogLines = 40;
constexpr size_t kMaxLogBytes = 4000;



class EvaluationRun {
 public:
  EvaluationRun(const CpuCompiler& compiler, const MachineFacts& machine, const EvalOptions& options,
                const Task& task, const CandidateSource& candidate)
      : compiler_(compiler), machine_(machine), options_(options), task_(task),
        candidate_(candidate) {
    verdict_.task = task.name;
    verdict_.backend = "cpu";
    verdict_.candidate = candidate.path;
  }

  Verdict Run() {
    const auto start = Clock::now();
    secret_seed_ = EvaluationSeed(options_);
    FillProvenance();
    if (Audit() && Build() && BuildTrusted()) Verify();
    verdict_.total_s = SecondsSince(start);
    return std::move(verdict_);
  }

 private:
  void Progress(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }

  StageRecord& Stage(const std::string& name) { return recorder_.Stage(name); }
  bool Finish(StageRecord& stage, VerdictStatus status, std::string reason) {
    return recorder_.Finish(stage, status, std::move(reason));
  }

  void FillProvenance() {
    verdict_.provenance = CommonProvenance(options_, secret_seed_, task_, candidate_);
    verdict_.provenance["machine"] = {{"hostname", machine_.hostname}, {"cpu", machine_.cpu_model},
                                      {"cores", machine_.cores}, {"llc_bytes", machine_.llc_bytes}};
    verdict_.provenance["compiler"] = compiler_.info().version;
    verdict_.provenance["flags"] = compiler_.info().flags;
  }

  bool Audit() {
    return AuditCandidateSource(recorder_, candidate_, [this] { return AuditSource(candidate_.text, task_); });
  }

  bool AuditFailure(StageRecord& stage, const std::vector<AuditFinding>& findings, const std::string& what) {
    return FinishAuditFailure(recorder_, stage, findings, what);
  }

  bool Build() {
    const auto start = Clock::now();
    auto& stage = Stage("build");
    Progress("building the candidate");
    const std::string display =
        std::filesystem::path(candidate_.path).filename().string().empty()
            ? "candidate.cpp"
            : std::filesystem::path(candidate_.path).filename().string();
    auto build = compiler_.Build(task_, {candidate_.text, display, KernelRole::kCandidate, {}});
    stage.seconds = SecondsSince(start);
    if (!build.ok()) {
      stage.details["summary"] = build.error().message;
      return Finish(stage, VerdictStatus::kInfraError, build.error().message);
    }
    stage.details["cache_hit"] = build->cache_hit;
    stage.details["compile_s"] = build->compile_s;
    stage.details["compiler_sandboxed"] = build->sandboxed;
    stage.details["command"] = build->command;
    if (!build->compiled) {
      return FinishCompileFailure(recorder_, stage, build->log, task_, task_.signature.Declaration(), "the compiler");
    }
    candidate_object_ = build->shared_object;
    auto symbols = ReadDynamicSymbols(candidate_object_);
    if (!symbols.ok()) return Finish(stage, VerdictStatus::kInfraError, symbols.error().message);
    auto findings = AuditBinary(*symbols, task_);
    auto instructions = FindInstructions(candidate_object_, ForbiddenInstructions());
    if (!instructions.ok()) return Finish(stage, VerdictStatus::kInfraError, instructions.error().message);
    for (auto& finding : AuditInstructions(*instructions)) findings.push_back(std::move(finding));
    stage.details["summary"] = build->cache_hit ? "cached" : fmt::format("compiled in {:.2f} s", build->compile_s);
    if (!findings.empty()) return AuditFailure(Stage("binary_audit"), findings, "binary");
    return true;
  }

  bool BuildTrusted() {
    const auto start = Clock::now();
    auto& stage = Stage("trusted_build");
    auto reference_text = ReadFile(task_.reference_source);
    const auto baseline_found = task_.baselines.find("cpu");
    if (!reference_text.ok() || baseline_found == task_.baselines.end()) {
      return Finish(stage, VerdictStatus::kInfraError,
                    reference_text.ok() ? "the task has no [baseline.cpu]" : reference_text.error().message);
    }
    auto baseline_text = ReadFile(baseline_found->second.source);
    if (!baseline_text.ok()) return Finish(stage, VerdictStatus::kInfraError, baseline_text.error().message);
    auto reference = compiler_.Build(task_, {*reference_text, "reference.cc", KernelRole::kReference, {}});
    auto baseline = compiler_.Build(task_, {*baseline_text, "baseline_cpu.cc", KernelRole::kBaseline,
                                            baseline_found->second.libraries});
    stage.seconds = SecondsSince(start);
    for (auto* build : {&reference, &baseline}) {
      if (!build->ok()) return Finish(stage, VerdictStatus::kInfraError, build->error().message);
      if (!(*build)->compiled) {
        stage.details["log"] = TrimLog((*build)->log, kMaxLogLines, kMaxLogBytes);
        return Finish(stage, VerdictStatus::kInfraError, "the task's own reference or baseline does not compile");
      }
    }
    auto library = SharedLibrary::Open(reference->shared_object);
    if (!library.ok()) return Finish(stage, VerdictStatus::kInfraError, library.error().message);
    reference_library_ = std::move(library.value());
    auto entry = reference_library_->Entry();
    if (!entry.ok()) return Finish(stage, VerdictStatus::kInfraError, entry.error().message);
    reference_ = *entry;
    baseline_object_ = baseline->shared_object;
    stage.details["summary"] = "reference and baseline ready";
    return true;
  }

  bool Verify() {
    WorkerSession session(task_, options_, machine_, verdict_, secret_seed_);
    return session.Run(candidate_object_, baseline_object_, reference_);
  }

  const CpuCompiler& compiler_;
  const MachineFacts& machine_;
  const EvalOptions& options_;
  const Task& task_;
  const CandidateSource& candidate_;
  Verdict verdict_;
  VerdictRecorder recorder_{verdict_};
  uint64_t secret_seed_ = 0;
  std::filesystem::path candidate_object_;
  std::filesystem::path baseline_object_;
  std::unique_ptr<SharedLibrary> reference_library_;
  KernelEntry reference_ = nullptr;
};

}  // namespace

std::string UnusableSourceReason(const CandidateSource& candidate) {
  const std::string& text = candidate.text;
  const size_t bytes = std::max(text.size(), candidate.file_bytes);
  if (bytes > kMaxCandidateBytes) {
    return fmt::format("the candidate is {} bytes; sources over {} bytes are refused", bytes,
                       kMaxCandidateBytes);
  }
  if (Trim(text).empty()) return "the candidate file is empty";
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    return fmt::format("the candidate is not text: it holds a NUL byte at offset {}", nul);
  }
  return {};
}

Verdict Evaluator::Evaluate(const Task& task, const CandidateSource& candidate) const {
  try {
    return EvaluationRun(compiler_, machine_, options_, task, candidate).Run();
  } catch (const std::exception& error) {
    Verdict verdict;
    verdict.task = task.name;
    verdict.backend = "cpu";
    verdict.candidate = candidate.path;
    verdict.status = VerdictStatus::kInfraError;
    verdict.reason = fmt::format("internal error in the evaluator: {}", error.what());
    return verdict;
  }
}

}  // namespace ksmith
