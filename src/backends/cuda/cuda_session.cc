#include "backends/cuda/cuda_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <stdexcept>

#include "backends/cuda/gpu_reference.h"
#include "backends/cuda/nvrtc_form.h"
#include "core/clock.h"
#include "core/parallel.h"
#include "eval/case_counter.h"
#include "eval/gpu_gate.h"
#include "eval/pipeline_steps.h"
#include "eval/shared_stages.h"
#include "eval/statistics.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;
using std::chrono::milliseconds;

constexpr auto kReplySlack = milliseconds(5000);      // copies of large cases, beyond the call
constexpr auto kTrustedCallTimeout = milliseconds(120'000);  // the GPU reference's, at least
constexpr uint64_t kRecheckSalt = 0xec4ec5;
constexpr uint64_t kFinalCallSalt = 0xf17a1;
constexpr uint64_t kExtraCallsSalt = 0xca11'0001;
constexpr int kMinExtraCalls = 64;
constexpr int kExtraCallsRange = 448;
// Cases prepared ahead of the candidate: every case of most tasks fits, so the reference has
// answered them all while nvcc runs.
constexpr size_t kCasesAheadBytes = size_t{1} << 30;

std::vector<std::string> WorkerEnvironment(const EvalOptions& options) {
  // The device's own settings (which GPU) come first and win over what this process inherited.
  std::vector<std::string> environment = options.worker_environment;
  const auto set_by_device = [&options](const std::string& name) {
    return std::any_of(options.worker_environment.begin(), options.worker_environment.end(),
                       [&name](const std::string& entry) { return entry.rfind(name + "=", 0) == 0; });
  };
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    if (const char* value = std::getenv(name); value && *value && !set_by_device(name)) {
      environment.push_back(std::string(name) + "=" + value);
    }
  }
  // Kernels are built for the GPU found (SASS), so nothing needs the PTX JIT or its disk cache.
  environment.push_back("CUDA_CACHE_DISABLE=1");
  return environment;
}

// What both workers' setup asks of the sandbox.
nlohmann::json WorkerLimits() { return {{"cpu_seconds", 600}, {"file_bytes", uint64_t{64} << 20}}; }

// Adds `ms` to the running total `totals[key]`.
void AddMilliseconds(std::map<std::string, double>& totals, const std::string& key, double ms) {
  totals[key] += ms;
}

}  // namespace

CudaWorkers CudaWorkers::Start(const EvalOptions& options) {
  CudaWorkers workers;
  // Marked: a later run removes it should this process be killed (RemoveStaleBuildFolders).
  workers.scratch = std::make_unique<ScopedTempDir>("cuda-worker", options.scratch_parent, OwnerMark::kMark);
  if (!workers.scratch->ok()) {
    workers.start_error = "the worker's scratch folder: " + workers.scratch->error();
    return workers;
  }
  WorkerOptions worker_options{options.worker_executable, workers.scratch->path(), 1, WorkerEnvironment(options),
                               options.cancel};
  auto candidate = WorkerProcess::Start(worker_options);
  auto reference = candidate.ok() ? WorkerProcess::Start(worker_options) : candidate.error();
  if (!candidate.ok() || !reference.ok()) {
    workers.start_error = (candidate.ok() ? reference.error() : candidate.error()).message;
    return workers;
  }
  workers.candidate = std::move(candidate.value());
  workers.reference = std::move(reference.value());
  return workers;
}

bool CudaSession::WorkerFailed(StageRecord& stage, WorkerProcess& worker, bool trusted, const CaseSpec* running) {
  const auto& failure = *worker.failure();
  if (trusted) {
    return Finish(stage, VerdictStatus::kInfraError, "the reference worker failed: " + failure.description,
                  FailureKind::kInfrastructure);
  }
  return FinishWorkerFailure(recorder_, stage, worker,
                             running ? std::optional(CaseRefFor(task_, *running)) : std::nullopt);
}

void CudaSession::StartCases(const std::filesystem::path& reference) {
  guard_key_ = GuardKey(secret_seed_);
  cases_ = options_.hidden_shapes_decide
               ? PlanCases(task_, secret_seed_, options_.seeds, options_.large_elements)
               : PlanBenchShapeCases(task_, secret_seed_, options_.seeds, options_.large_elements);
  // After the correctness cases, the inputs of the last timed call: its answer is ready when
  // timing ends.
  final_case_ = cases_.back();
  final_case_.seed = DeriveSeed(secret_seed_, kFinalCallSalt);
  final_case_.label = "the bench shape, last timed call";
  std::vector<CaseSpec> specs = cases_;
  specs.push_back(final_case_);
  feed_ = std::make_unique<CaseFeed>(
      std::move(specs),
      [this, reference] {
        if (!workers_.start_error.empty()) return Status(MakeError(ErrorKind::kInternal, "{}", workers_.start_error));
        return SetupReference(reference);
      },
      [this](const CaseSpec& spec, PreparedCase spare) {
        // Its inputs are drawn by the answer below.
        PreparedCase prepared = LayOutCase(task_, spec, kCudaGuardBytes);
        prepared.inputs = std::move(spare.inputs);
        // Stale until the answer below overwrites every element in place (RunReference).
        prepared.expected = std::move(spare.expected);
        return prepared;
      },
      [this](PreparedCase& prepared) { return DrawAndAnswer(prepared); },
      kCasesAheadBytes);
}

void CudaSession::WarmCandidateWorker(const std::filesystem::path& baseline) {
  if (!options_.warm_baseline || !workers_.start_error.empty() || !workers_.candidate) return;
  Message warm;
  warm.header = {{"type", "warm"}, {"library", baseline.string()}};
  const auto start = Clock::now();
  auto reply = workers_.candidate->Request(warm, "warmed", kCudaSetupTimeout, "warming the baseline");
  if (!reply && workers_.candidate->failure()) {
    // Nothing of the candidate's had run: the trusted baseline took the worker down.
    warm_failure_ = workers_.candidate->failure()->description;
  } else if (reply && reply->header.value("cuda_error", false)) {
    warm_failure_ = "a CUDA error after its warm-up: " + reply->header.value("message", std::string("?"));
  } else if (reply && reply->header.value("warmed", false)) {
    warm_s_ = SecondsSince(start);
  } else if (reply) {
    warm_note_ = reply->header.value("message", std::string("the baseline has no warm entry"));
  }
}

bool CudaSession::Run(const std::filesystem::path& candidate, const std::filesystem::path& baseline,
                      const std::filesystem::path& reference) {
  if (!feed_) StartCases(reference);
  const bool passed = RunStages(candidate, baseline);
  failed_case_.Deliver(verdict_, secret_seed_);
  return passed;
}

StagePlan CudaSession::Plan() const {
  StagePlan plan = {StageId::kSandbox, StageId::kCorrectness, StageId::kIdleCheck,
                    StageId::kTiming,  StageId::kRecheck,     StageId::kPhysicalLimit};
  if (options_.candidate_finish) plan.push_back(StageId::kProcessState);  // the candidate's own Python
  // Last, once everything about the candidate is judged: what torch.compile does to the process
  // (the second baseline) is not the candidate's doing, and should it end the worker, only the
  // second speedup is lost (its stage says why) and the close is not run.
  plan.insert(plan.end(), {StageId::kHiddenShapes, StageId::kSecondTiming, StageId::kClose});
  return plan;
}

bool CudaSession::RunStages(const std::filesystem::path& candidate, const std::filesystem::path& baseline) {
  candidate_ = candidate;
  baseline_ = baseline;
  if (!DriveStages(Plan(), *this, options_.time)) return false;
  MarkPassed(verdict_, cases_.size());
  return true;
}

bool CudaSession::RunStage(StageId stage) {
  switch (stage) {
    case StageId::kSandbox: return Setup(candidate_, baseline_);
    case StageId::kCorrectness: return Correctness();
    case StageId::kIdleCheck: {
      const bool idle = IdleCheck();
      if (!options_.time) feed_.reset();  // the last timed call's case is not needed
      return idle;
    }
    case StageId::kTiming: return Time();
    case StageId::kRecheck: return Recheck();
    case StageId::kPhysicalLimit: return PhysicalLimit();
    case StageId::kProcessState: return PythonState();
    // A crash at a hidden shape ends only that property: the candidate's worker is then gone.
    case StageId::kHiddenShapes: return HiddenShapes();
    case StageId::kSecondTiming:
      TimeAgainstSecondBaseline();
      return !workers_.candidate->failure();
    case StageId::kClose: return Close();
    default: throw std::logic_error(fmt::format("the CUDA session has no stage {}", StageName(stage)));
  }
}

namespace {

// `folders` and what the task's CUDA baseline declares it reads (an imported task's torch, which
// its GPU reference runs too).
std::vector<std::string> WithBaselineFolders(const Task& task, std::vector<std::string> folders) {
  if (const auto found = task.baselines.find("cuda"); found != task.baselines.end()) {
    for (const auto& folder : found->second.readable) folders.push_back(folder.string());
  }
  return folders;
}

}  // namespace

std::vector<std::string> CudaSession::OwnCode() const {
  std::vector<std::string> folders;
  if (!options_.candidate_finish) return folders;  // ksmith's own contract: the candidate is its kernel
  for (const auto& folder : options_.candidate_readable) {
    std::error_code error;
    const auto real = std::filesystem::weakly_canonical(folder, error);
    folders.push_back(error ? folder.string() : real.string());
  }
  return folders;
}

std::vector<std::string> CudaSession::CandidateReadable(const std::filesystem::path& candidate,
                                                       const std::filesystem::path& baseline) const {
  std::vector<std::string> folders = WithBaselineFolders(task_, {candidate.parent_path().string(), baseline.parent_path().string()});
  for (const auto& folder : options_.candidate_readable) folders.push_back(folder.string());
  return folders;
}

Status CudaSession::SetupReference(const std::filesystem::path& reference) {
  Message trusted;
  trusted.header = {{"type", "setup"}, {"reference", reference.string()}, {"sandbox", options_.sandbox},
                    {"scratch", workers_.scratch->path().string()},
                    {"readable", WithBaselineFolders(task_, {reference.parent_path().string()})},
                    {"limits", WorkerLimits()}};
  auto reply = workers_.reference->Request(trusted, "ready", kCudaSetupTimeout, "starting the reference worker");
  if (!reply) return MakeError(ErrorKind::kInternal, "the reference worker failed: {}", workers_.reference->failure()->description);
  if (reply->type() != "ready") {
    return MakeError(ErrorKind::kInternal, "the GPU reference could not be loaded: {}",
                     reply->header.value("message", std::string("?")));
  }
  return {};
}

bool CudaSession::Setup(const std::filesystem::path& candidate, const std::filesystem::path& baseline) {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kSandbox);
  if (!workers_.start_error.empty()) return Finish(stage, VerdictStatus::kInfraError, workers_.start_error);
  if (!warm_failure_.empty()) {
    return Finish(stage, VerdictStatus::kInfraError, "the baseline failed before the candidate was loaded: " + warm_failure_,
                  FailureKind::kInfrastructure);
  }
  Message setup;
  std::vector<std::string> readable = CandidateReadable(candidate, baseline);
  if (!second_.library.empty()) {
    readable.push_back(second_.library.parent_path().string());
    for (const auto& folder : second_.readable) readable.push_back(folder.string());
  }
  setup.header = {{"type", "setup"}, {"candidate", candidate.string()}, {"baseline", baseline.string()},
                  {"second_baseline", second_.library.string()},
                  {"sandbox", options_.sandbox}, {"scratch", workers_.scratch->path().string()},
                  {"candidate_finish", options_.candidate_finish},
                  {"default_stream_ordered", options_.default_stream_ordered},
                  {"readable", readable},
                  // A KernelBench candidate's own code is what its build made: the kernels its
                  // checked runs launch are attributed to it or to torch, cuBLAS, ...
                  {"own_code", OwnCode()},
                  {"limits", WorkerLimits()}};
  // An NVRTC-form candidate's cubin, which the worker loads and launches for it (nvrtc_module.h).
  if (const auto cubin = NvrtcDeviceCodeOf(candidate, options_.scratch_parent.parent_path()); !cubin.empty()) {
    setup.header["candidate_device_code"] = cubin.string();
  }
  auto reply = workers_.candidate->Request(setup, "ready", kCudaSetupTimeout, "loading the candidate");
  stage.seconds = SecondsSince(start);
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (reply->header.contains("protections")) {
    stage.details.protections = Protections::FromJson(reply->header["protections"]);
    verdict_.provenance["protections"] = reply->header["protections"];
  }
  if (reply->type() == "load_error" && !reply->header.contains("protections")) {
    // Before anything of the candidate's ran: the GPU itself is not usable.
    return Finish(stage, VerdictStatus::kInfraError, "the CUDA worker could not start: " +
                                                         reply->header.value("message", std::string("?")));
  }
  if (reply->type() != "ready") {
    return Finish(stage, VerdictStatus::kRuntimeError,
                  "the candidate could not be loaded: " + reply->header.value("message", std::string("?")),
                  FailureKind::kNotLoadable);
  }
  const auto device = reply->header.value("device", nlohmann::json::object());
  l2_bytes_ = device.value("l2_bytes", size_t{0});
  verdict_.provenance["gpu"] = device;
  const auto protections = Protections::FromJson(reply->header["protections"]);
  stage.details.summary = device.value("name", std::string("GPU")) + ": " + protections.Summary();
  if (warm_s_ >= 0) {
    stage.details.summary += fmt::format("; the baseline's Python started while the candidate built ({:.2f} s)", warm_s_);
  } else if (!warm_note_.empty()) {
    stage.details.summary += "; the baseline was not warmed: " + warm_note_;
  }
  return true;
}

GuardedArena* CudaSession::ArenaFor(StageRecord& stage, const CaseLayout& layout) {
  SharedArena& shared = candidate_arenas_[layout.Key()];
  if (shared.arena) return shared.arena.get();
  auto created = ShareArena(*workers_.candidate, layout, kCudaSetupTimeout);
  if (!created.ok()) {
    if (workers_.candidate->failure()) {
      WorkerFailed(stage, *workers_.candidate, false);
    } else {
      Finish(stage, VerdictStatus::kInfraError, created.error().message);
    }
    return nullptr;
  }
  if (!created->pinned) {
    auto& unpinned = stage.details.MutableCounters().unpinned_arenas;
    unpinned = unpinned.value_or(0) + 1;
  }
  shared = std::move(created.value());
  return shared.arena.get();
}

Status CudaSession::DrawAndAnswer(PreparedCase& prepared) {
  if (!DrawableOnDevice(prepared.layout)) {
    DrawCaseInputs(prepared, std::move(prepared.inputs));
    GpuGate::Shared gpu_shared(options_.gpu_gate);
    return ComputeExpected(prepared);
  }
  // The reference worker draws the inputs on the GPU and answers them while this thread draws
  // the same values on the host (for the check's scale, a failing case's report and the
  // magnitude's variants).
  std::future<Status> answered = std::async(std::launch::async, [this, &prepared] {
    // The reference shares the GPU like any verification; another candidate's timing waits.
    GpuGate::Shared gpu_shared(options_.gpu_gate);
    const std::string no_inputs;  // the worker draws them
    return RunReference(ReferenceLayout(prepared.layout), no_inputs, prepared.expected, prepared.draw);
  });
  std::string inputs = std::move(prepared.inputs);
  DrawCaseInputs(prepared, std::move(inputs));
  if (Status ran = answered.get(); !ran.ok()) return ran;
  GpuGate::Shared gpu_shared(options_.gpu_gate);
  return AnswerMagnitude(prepared);
}

Status CudaSession::AnswerMagnitude(PreparedCase& prepared) {
  prepared.magnitude.clear();
  if (!WantsMagnitude(task_, prepared)) return {};
  const CaseLayout layout = ReferenceLayout(prepared.layout);
  // The variants are made from the host's inputs, so they travel to the reference.
  return ComputeMagnitude(prepared, [&](const std::string& inputs, std::vector<std::vector<double>>& answer) {
    return RunReference(layout, inputs, answer);
  });
}

Status CudaSession::RunReference(const CaseLayout& layout, const std::string& inputs,
                                 std::vector<std::vector<double>>& outputs, const std::optional<CaseDraw>& draw) {
  WorkerProcess& worker = *workers_.reference;
  auto worker_failed = [&worker] {
    return MakeError(ErrorKind::kInternal, "the reference worker failed: {}", worker.failure()->description);
  };
  SharedArena& shared = reference_arenas_[layout.Key()];
  if (!shared.arena) {
    auto created = ShareArena(worker, layout, kCudaSetupTimeout);
    if (!created.ok()) return worker.failure() ? worker_failed() : created.error();
    if (!created->pinned) ++reference_unpinned_;
    shared = std::move(created.value());
  }
  GuardedArena* arena = shared.arena.get();
  if (draw) {
    arena->PrepareGuards(guard_key_);
  } else if (auto status = arena->Prepare(inputs, guard_key_); !status.ok()) {
    return status.error();
  }
  Message request;
  request.header = layout.ToJson();
  request.header["type"] = "run";
  request.header["target"] = "reference";
  if (draw) request.header["draw"] = draw->ToJson();
  // Trusted code: its first call may load Python and torch (a KernelBench task's reference), which
  // took over 15 s on an H200 host whose cores were building fourteen extensions.
  const auto timeout = std::max<std::chrono::milliseconds>(options_.call_timeout, kTrustedCallTimeout);
  auto reply = worker.Request(request, "result", timeout + kReplySlack, "running the GPU reference");
  if (!reply) return worker_failed();
  if (reply->type() != "result") {
    return MakeError(ErrorKind::kInternal, "the GPU reference failed: {}", reply->header.value("message", std::string("?")));
  }
  if (draw && !reply->header.value("drew", false)) return MakeError(ErrorKind::kInternal, "{}", kWorkerDidNotDraw);
  // Into `outputs`' own memory where it has the size (a judged case's answer, handed back):
  // at a problem's own sizes an answer is gigabytes, and fresh pages cost more than the copy.
  size_t output = 0;
  for (const auto& slot : layout.tensors) {
    if (!slot.output) continue;
    const auto* values = static_cast<const double*>(arena->pointers()[slot.parameter]);
    const size_t count = slot.bytes / sizeof(double);
    if (output == outputs.size()) outputs.emplace_back();
    std::vector<double>& answer = outputs[output++];
    ResizeFaultedIn(answer, count);
    ParallelCopy(answer.data(), values, slot.bytes);
  }
  outputs.resize(output);
  return {};
}

Status CudaSession::ComputeExpected(PreparedCase& prepared) {
  const CaseLayout layout = ReferenceLayout(prepared.layout);
  // Drawn inputs are drawn again on the GPU rather than copied there.
  const std::optional<CaseDraw> draw = DrawableOnDevice(prepared.layout) ? prepared.draw : std::nullopt;
  if (Status ran = RunReference(layout, prepared.inputs, prepared.expected, draw); !ran.ok()) return ran;
  return AnswerMagnitude(prepared);
}

bool CudaSession::JudgeReply(StageRecord& stage, const Message& reply, const CaseRef& at) {
  if (reply.type() == "cuda_error") {
    Failure& failure = stage.details.MutableFailure(FailureKind::kCudaError);
    failure.at = at;
    failure.cuda_error = reply.header.value("message", std::string("?"));
    failure.cuda_error_name = reply.header.value("error_name", std::string());
    return Finish(stage, VerdictStatus::kRuntimeError, fmt::format("CUDA error at {}: {}", at.label, failure.cuda_error));
  }
  if (reply.type() != "result" && reply.type() != "timed") {
    return Finish(stage, VerdictStatus::kInfraError, "worker error: " + reply.header.value("message", std::string("?")),
                  FailureKind::kInfrastructure);
  }
  if (const auto raised = reply.header.find("candidate_raised"); raised != reply.header.end()) {
    return FinishCandidateRaised(recorder_, stage, *raised, at, workers_.candidate->OutputTail(2000));
  }
  const auto violations = reply.header.value("violations", std::vector<std::string>{});
  if (!violations.empty()) {
    stage.details.violations = violations;
    stage.details.MutableFailure(FailureKind::kOtherStream).at = at;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("work outside the given stream at {}: {}", at.label, violations.front()));
  }
  if (reply.header.value("late_write", false)) {
    stage.details.MutableFailure(FailureKind::kLateWrite).at = at;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("at {}: memory was still being written after the given stream completed "
                              "(work left running on another stream)", at.label));
  }
  return true;
}

bool CudaSession::CallCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared, int repeat,
                           std::string& snapshot, std::string& launch, ArenaPart& part,
                           const std::function<bool()>& settle) {
  const auto preparing = Clock::now();
  // A new layout's arena may fail in the worker: the case before is judged first, so that a
  // verdict always names the first case that went wrong.
  if (!candidate_arenas_.count(prepared.layout.Key()) && !settle()) return false;
  GuardedArena* arena = ArenaFor(stage, prepared.layout);
  if (arena == nullptr) return false;
  // Inputs the device can draw are drawn there (the host's draw, bit for bit): no copy into the
  // arena, no upload, and after the call only the guards and outputs come back.
  const bool drawn_on_device = prepared.draw && DrawableOnDevice(prepared.layout);
  if (drawn_on_device) {
    arena->PrepareGuards(guard_key_);
  } else if (auto status = arena->Prepare(prepared.inputs, guard_key_); !status.ok()) {
    return settle() && Finish(stage, VerdictStatus::kInfraError, status.error().message);
  }
  AddMilliseconds(stage.details.MutableCounters().evaluator_ms, "arena_prepare", 1000 * SecondsSince(preparing));
  std::optional<GpuGate::Shared> gpu_shared(std::in_place, options_.gpu_gate);
  // The reference worker computes the answer while the candidate's worker runs the candidate.
  std::future<Status> expected;
  if (prepared.expected.empty()) {
    expected = std::async(std::launch::async, [&] { return ComputeExpected(prepared); });
  }
  Message request;
  request.header = prepared.layout.ToJson();
  request.header["type"] = "run";
  request.header["target"] = "candidate";
  request.header["repeat"] = repeat;
  if (drawn_on_device) request.header["draw"] = prepared.draw->ToJson();
  const auto timeout = options_.call_timeout * (1 + repeat / 16) + kReplySlack;
  const auto sent = Clock::now();
  auto reply = workers_.candidate->Request(request, "result", timeout, "running case " + spec.label);
  const auto answered = Clock::now();
  const Status reference = expected.valid() ? expected.get() : Status();
  RequestCounters& counters = stage.details.MutableCounters();
  AddMilliseconds(counters.evaluator_ms, "candidate_request", 1000 * std::chrono::duration<double>(answered - sent).count());
  AddMilliseconds(counters.evaluator_ms, "reference_wait", 1000 * SecondsSince(answered));
  gpu_shared.reset();  // the rest happens on the host
  const auto settling = Clock::now();
  if (!settle()) return false;
  AddMilliseconds(counters.evaluator_ms, "check_wait", 1000 * SecondsSince(settling));
  if (!reference.ok()) return Finish(stage, VerdictStatus::kInfraError, reference.error().message, FailureKind::kInfrastructure);
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false, &spec);
  if (!JudgeReply(stage, *reply, CaseRefFor(task_, spec))) return false;
  if (drawn_on_device && !reply->header.value("drew", false)) {
    return Finish(stage, VerdictStatus::kInfraError, kWorkerDidNotDraw, FailureKind::kInfrastructure);
  }
  launched_.Add(reply->header);
  const nlohmann::json phases = reply->header.value("phase_us", nlohmann::json::object());
  for (const auto& [phase, value] : phases.items()) {
    if (value.is_number()) AddMilliseconds(counters.worker_phase_ms, phase, value.get<double>() / 1000);
  }
  const auto judging = Clock::now();
  part = drawn_on_device && reply->header.value("inputs_as_drawn", false) ? ArenaPart::kGuardsAndOutputs
                                                                           : ArenaPart::kAll;
  if (part == ArenaPart::kGuardsAndOutputs) {
    counters.inputs_drawn_on_device = counters.inputs_drawn_on_device.value_or(0) + 1;
  }
  arena->SnapshotInto(snapshot, part);
  AddMilliseconds(counters.evaluator_ms, "snapshot", 1000 * SecondsSince(judging));
  launch = reply->header.contains("launch_error")
               ? " (the launch failed: " + reply->header["launch_error"].get<std::string>() + ")"
               : "";
  return true;
}

bool CudaSession::RecordCheck(StageRecord& stage, const CaseSpec& spec, const CaseCheck& check, bool after_timing,
                              const std::string& launch) {
  auto& worst = stage.details.MutableCheck().worst_norm_error;
  worst = std::max(worst.value_or(0.0), check.worst_norm_error);
  if (check.problem == CaseProblem::kNone) return true;
  return FinishCaseProblem(recorder_, stage, task_, spec, check, after_timing, launch);
}

bool CudaSession::RunCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared, bool after_timing,
                          int repeat) {
  std::string launch;
  ArenaPart part = ArenaPart::kAll;
  if (!CallCase(stage, spec, prepared, repeat, snapshot_, launch, part, [] { return true; })) return false;
  const auto checking = Clock::now();
  const CaseCheck check = CheckSnapshot(task_, prepared, snapshot_, guard_key_, part);
  AddMilliseconds(stage.details.MutableCounters().evaluator_ms, "check", 1000 * SecondsSince(checking));
  if (!after_timing) failed_case_.Keep(task_, spec, prepared, snapshot_, check);
  return RecordCheck(stage, spec, check, after_timing, launch);
}

bool CudaSession::Correctness() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kCorrectness);
  auto& counters = stage.details.MutableCounters();
  // Case i is judged on a thread of its own while case i + 1 runs; its result is recorded
  // before anything of case i + 1 is, so the verdict names the first case that went wrong.
  struct PendingCheck {
    CaseSpec spec;
    PreparedCase prepared;
    std::string snapshot;
    std::string launch;
    ArenaPart part = ArenaPart::kAll;
    std::future<CaseCheck> check;
    double check_ms = 0;  // written by the checking thread, read after check.get()
  };
  std::unique_ptr<PendingCheck> pending;
  std::string spare_snapshot;  // the snapshot buffer not in use by the pending check
  // After a wrong output the rest of the cases run too, counted (eval/case_counter.h).
  CaseCounter counter(recorder_, stage, cases_.size());
  const auto settle = [&]() -> bool {
    if (!pending) return true;
    const CaseCheck check = pending->check.get();
    AddMilliseconds(counters.evaluator_ms, "check", pending->check_ms);
    const bool passed = RecordCheck(stage, pending->spec, check, false, pending->launch);
    const CaseRef at = CaseRefFor(task_, pending->spec);
    spare_snapshot = std::move(pending->snapshot);
    pending.reset();
    return counter.Record(at, passed);
  };
  bool judged = true;
  for (size_t i = 0; i < cases_.size() && judged; ++i) {
    if (options_.progress && (i % 8 == 0 || i + 1 == cases_.size())) {
      options_.progress(fmt::format("correctness {}/{}", i + 1, cases_.size()));
    }
    const auto waiting = Clock::now();
    auto prepared = feed_->Next();
    AddMilliseconds(counters.evaluator_ms, "case_wait", 1000 * SecondsSince(waiting));
    if (!prepared.ok()) {
      judged = settle() && Finish(stage, VerdictStatus::kInfraError, prepared.error().message, FailureKind::kInfrastructure);
      break;
    }
    auto next = std::make_unique<PendingCheck>();
    next->spec = cases_[i];
    next->prepared = std::move(prepared.value());
    next->snapshot = std::move(spare_snapshot);
    judged = CallCase(stage, next->spec, next->prepared, 0, next->snapshot, next->launch, next->part, settle);
    if (!judged) break;
    PendingCheck* judging = next.get();
    next->check = std::async(std::launch::async, [this, judging] {
      const auto checking = Clock::now();
      CaseCheck check = CheckSnapshot(task_, judging->prepared, judging->snapshot, guard_key_, judging->part);
      judging->check_ms = 1000 * SecondsSince(checking);
      failed_case_.Keep(task_, judging->spec, judging->prepared, judging->snapshot, check);
      // Its memory is the next case's: the feed is reset only once no check is pending.
      feed_->Recycle(std::move(judging->prepared));
      return check;
    });
    pending = std::move(next);
  }
  if (judged) judged = settle();
  stage.seconds = SecondsSince(start);
  if (!counter.Finish(judged)) {
    pending.reset();  // waits for a check still running: it hands its case back to the feed
    feed_.reset();
    return false;
  }
  if (reference_unpinned_ > 0) counters.unpinned_arenas = counters.unpinned_arenas.value_or(0) + reference_unpinned_;
  stage.details.MutableCheck().cases = static_cast<int64_t>(cases_.size());
  const double worst = stage.details.MutableCheck().worst_norm_error.value_or(0.0);
  stage.details.summary =
      options_.hidden_shapes_decide
          ? fmt::format("{} cases ({} GPU shapes x {} distributions, random shapes, the bench shape), checked "
                        "against the GPU reference; worst norm-wise error {:.2g}",
                        cases_.size(), task_.eval_shapes.size(), task_.distributions.size(), worst)
          : fmt::format("{} cases at the bench shape ({} distributions; the hidden shapes come last, as a "
                        "property), checked against the GPU reference; worst norm-wise error {:.2g}",
                        cases_.size(), task_.distributions.size(), worst);
  return true;
}

bool CudaSession::IdleCheck() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kIdleCheck);
  GpuGate::Shared gpu_shared(options_.gpu_gate);
  Message request;
  request.header = {{"type", "idle"}, {"wait_ms", 100}};
  auto reply = workers_.candidate->Request(request, "idle_done", kCudaSetupTimeout, "watching the idle GPU");
  stage.seconds = SecondsSince(start);
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (reply->type() == "cuda_error") return JudgeReply(stage, *reply, CaseRef{.label = "the idle check"});
  const auto violations = reply->header.value("violations", std::vector<std::string>{});
  if (!violations.empty()) {
    stage.details.violations = violations;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  "work was launched after the kernel's calls had returned: " + violations.front(),
                  FailureKind::kWorkAfterReturn);
  }
  stage.details.summary = "no GPU work in the 100 ms after the last call";
  return true;
}

bool CudaSession::Recheck() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kRecheck);
  // The first case and the largest eval shape, on new values. The bench shape was just checked
  // on fresh values at the end of timing.
  const auto largest = std::max_element(cases_.begin(), cases_.end() - 1, [this](const CaseSpec& a, const CaseSpec& b) {
    return MakeLayout(task_, a.shape, 0).SnapshotBytes() < MakeLayout(task_, b.shape, 0).SnapshotBytes();
  });
  std::vector<CaseSpec> specs = {cases_.front()};
  // Where every case is the bench shape (a KernelBench candidate's), the largest is the first
  // again: at a problem's own sizes a second full-size case would cost tens of seconds for
  // nothing the first and the call-count case below do not check.
  if (!(largest->shape == cases_.front().shape)) specs.push_back(*largest);
  std::string inputs;  // one buffer for every re-check case's inputs
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].seed = DeriveSeed(secret_seed_, kRecheckSalt + i);
    specs[i].label += " (re-check, new values)";
    PreparedCase prepared = PrepareCase(task_, specs[i], kCudaGuardBytes, std::move(inputs));
    if (!RunCase(stage, specs[i], prepared, true)) return false;
    inputs = std::move(prepared.inputs);
  }
  // A secret number of back-to-back calls, then a checked one with fresh values: a kernel that
  // changes after some count of calls cannot know when the count is reached.
  const auto smallest = std::min_element(cases_.begin(), cases_.end(), [this](const CaseSpec& a, const CaseSpec& b) {
    return MakeLayout(task_, a.shape, 0).SnapshotBytes() < MakeLayout(task_, b.shape, 0).SnapshotBytes();
  });
  const int extra_calls = kMinExtraCalls + static_cast<int>(MixCounter(secret_seed_, kExtraCallsSalt, 0) % kExtraCallsRange);
  CaseSpec spec = *smallest;
  spec.seed = DeriveSeed(secret_seed_, kExtraCallsSalt + 1);
  spec.label += " (re-check, after extra calls)";
  PreparedCase prepared = PrepareCase(task_, spec, kCudaGuardBytes, std::move(inputs));
  if (!RunCase(stage, spec, prepared, true, extra_calls)) return false;
  stage.seconds = SecondsSince(start);
  stage.details.MutableCheck().extra_calls = extra_calls;
  stage.details.summary = fmt::format(
      "correct after timing, on fresh values in the same buffers, and after {} more calls", extra_calls);
  return true;
}

bool CudaSession::PythonState() {
  // What CUPTI saw launched, where it saw anything, says whether a custom kernel ran; Python's
  // count of its own extension and Triton calls stands in only where it saw nothing.
  const bool unchanged = RunStateReportStage(
      recorder_, *workers_.candidate, kCudaSetupTimeout,
      "the candidate's Python left torch, its flags and the environment as found",
      [this](nlohmann::json& report) {
        if (launched_.runs > 0) report.erase("custom_code");
      });
  if (workers_.candidate->failure()) return false;
  if (std::string label = LaunchedKernelsLabel(launched_); !label.empty()) verdict_.labels.push_back(std::move(label));
  verdict_.extensions.kernel_time_share = launched_.TimeShare();
  return unchanged;
}

bool CudaSession::HiddenShapes() {
  return RunHiddenShapesStage(
      recorder_, task_, options_, secret_seed_,
      [this](StageRecord& stage, const CaseSpec& spec) {
        PreparedCase prepared = PrepareCase(task_, spec, kCudaGuardBytes);
        return RunCase(stage, spec, prepared, false);
      },
      // A kernel that faulted at a hidden shape may leave its CUDA context unusable: both workers
      // are then killed as the session ends, not closed.
      [this](const StageRecord& stage) {
        const bool faulted = stage.details.failure && stage.details.failure->kind == FailureKind::kCudaError;
        return !workers_.candidate->failure() && !faulted;
      });
}

bool CudaSession::Close() {
  auto& stage = Stage(StageId::kClose);
  const auto start = Clock::now();
  // Each exit releases a CUDA context: both at once.
  auto reference_closing = std::async(std::launch::async, [this] { return workers_.reference->Close(kCudaSetupTimeout); });
  const bool closed = workers_.candidate->Close(kCudaSetupTimeout);
  const bool reference_closed = reference_closing.get();
  stage.seconds = SecondsSince(start);
  if (!closed) return WorkerFailed(stage, *workers_.candidate, false);
  if (!reference_closed) return WorkerFailed(stage, *workers_.reference, true);
  stage.details.summary = "both workers exited cleanly with nothing left unread";
  return true;
}

}  // namespace ksmith
