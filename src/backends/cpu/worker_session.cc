#include "backends/cpu/worker_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <stdexcept>
#include <thread>

#include "core/clock.h"
#include "core/cpu_usage.h"
#include "core/files.h"
#include "eval/case_counter.h"
#include "eval/pipeline_steps.h"
#include "eval/shared_stages.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;
using std::chrono::milliseconds;

constexpr auto kSetupTimeout = milliseconds(30'000);
constexpr auto kReplySlack = milliseconds(2000);  // beyond the call itself
constexpr auto kIdleWindow = milliseconds(100);
constexpr uint64_t kIdleTicksAllowed = 3;          // [clock ticks] in the idle window
constexpr uint64_t kRecheckSalt = 0xec4ec4;
constexpr uint64_t kExtraCallsSalt = 0xca11'0000;
constexpr size_t kMinExtraCalls = 64;
constexpr size_t kExtraCallsRange = 448;


}  // namespace


void WorkerSession::ShareCores() {
  cores_alone_.reset();
  if (!cores_shared_) cores_shared_.emplace(options_.gpu_gate);
}

void WorkerSession::TakeCoresAlone() {
  cores_shared_.reset();
  if (!cores_alone_) cores_alone_.emplace(options_.gpu_gate);
}

bool WorkerSession::WorkerFailed(StageRecord& stage, const CaseSpec* running) {
  return FinishWorkerFailure(recorder_, stage, *worker_,
                             running ? std::optional(CaseRefFor(task_, *running)) : std::nullopt);
}

bool WorkerSession::Run(const std::filesystem::path& candidate,
                        const std::filesystem::path& baseline, KernelEntry reference) {
  reference_ = reference;
  guard_key_ = GuardKey(secret_seed_);
  const bool passed = RunStages(candidate, baseline);
  failed_case_.Deliver(verdict_, secret_seed_);
  return passed;
}

StagePlan WorkerSession::Plan() const {
  return {StageId::kSandbox,       StageId::kCorrectness,  StageId::kDeterminism, StageId::kIdleCheck,
          StageId::kTiming,        StageId::kRecheck,      StageId::kPhysicalLimit, StageId::kProcessState,
          StageId::kHiddenShapes,  StageId::kClose};
}

bool WorkerSession::RunStages(const std::filesystem::path& candidate, const std::filesystem::path& baseline) {
  candidate_ = candidate;
  baseline_ = baseline;
  ShareCores();
  if (!DriveStages(Plan(), *this, options_.time)) return false;
  MarkPassed(verdict_, cases_.size());
  return true;
}

bool WorkerSession::RunStage(StageId stage) {
  switch (stage) {
    case StageId::kSandbox: return Start(candidate_, baseline_);
    case StageId::kCorrectness: return Correctness();
    case StageId::kDeterminism: return Determinism();
    case StageId::kIdleCheck: return IdleCheck();
    case StageId::kTiming: {
      const bool timed = TimeAgainstBaseline();  // with the cores alone
      ShareCores();
      return timed;
    }
    case StageId::kRecheck: return Recheck();
    case StageId::kPhysicalLimit: return PhysicalLimit();
    case StageId::kProcessState: return ProcessStateCheck();
    // A crash at a hidden shape ends only that property: the worker is then not there to close.
    case StageId::kHiddenShapes: return HiddenShapes();
    case StageId::kClose: return CloseWorker();
    default: throw std::logic_error(fmt::format("the CPU session has no stage {}", StageName(stage)));
  }
}

namespace {

// The folders the worker reads besides the system's: the candidate's and the baseline's builds,
// what the task's baseline declares (an imported task's torch), and what the pipeline adds
// (a KernelBench candidate's build sandbox output).
std::vector<std::string> Readable(const Task& task, const EvalOptions& options, const std::filesystem::path& candidate,
                                  const std::filesystem::path& baseline, const std::string& backend) {
  std::vector<std::string> readable = {candidate.parent_path().string(), baseline.parent_path().string()};
  for (const auto& folder : options.candidate_readable) readable.push_back(folder.string());
  if (const auto found = task.baselines.find(backend); found != task.baselines.end()) {
    for (const auto& folder : found->second.readable) readable.push_back(folder.string());
  }
  return readable;
}

}  // namespace

bool WorkerSession::Start(const std::filesystem::path& candidate,
                          const std::filesystem::path& baseline) {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kSandbox);
  // Marked with this process: a worker killed with its evaluation leaves the folder, which a later
  // run removes (RemoveStaleBuildFolders).
  scratch_ = std::make_unique<ScopedTempDir>("worker", options_.scratch_parent, OwnerMark::kMark);
  if (!scratch_->ok()) {
    return Finish(stage, VerdictStatus::kInfraError, "the worker's scratch folder: " + scratch_->error(),
                  FailureKind::kInfrastructure);
  }
  auto worker = WorkerProcess::Start({options_.worker_executable, scratch_->path(), options_.threads, {}, options_.cancel});
  if (!worker.ok()) return Finish(stage, VerdictStatus::kInfraError, worker.error().message, FailureKind::kInfrastructure);
  worker_ = std::move(worker.value());
  Message setup;
  setup.header = {{"type", "setup"},
                  {"candidate", candidate.string()},
                  {"baseline", baseline.string()},
                  {"sandbox", options_.sandbox},
                  {"candidate_finish", options_.candidate_finish},
                  {"scratch", scratch_->path().string()},
                  {"readable", Readable(task_, options_, candidate, baseline, kind_.backend)},
                  {"limits", {{"cpu_seconds", 600}, {"memory_bytes", uint64_t{16} << 30},
                              {"file_bytes", uint64_t{64} << 20}}}};
  setup.header.update(kind_.setup);
  auto reply = worker_->Request(setup, "ready", kSetupTimeout, "loading the candidate");
  stage.seconds = SecondsSince(start);
  if (!reply) return WorkerFailed(stage);
  if (reply->header.contains("protections")) {
    stage.details.protections = Protections::FromJson(reply->header["protections"]);
    verdict_.provenance["protections"] = reply->header["protections"];
  }
  if (reply->type() == "setup_error") {
    return Finish(stage, VerdictStatus::kInfraError, "the worker could not start: " + reply->header.value("message", std::string("?")),
                  FailureKind::kInfrastructure);
  }
  if (reply->type() != "ready") {
    return Finish(stage, VerdictStatus::kRuntimeError,
                  "the candidate could not be loaded: " + reply->header.value("message", std::string("?")),
                  FailureKind::kNotLoadable);
  }
  const auto protections = Protections::FromJson(reply->header["protections"]);
  stage.details.summary = protections.Summary();
  return true;
}

GuardedArena* WorkerSession::ArenaFor(StageRecord& stage, const CaseLayout& layout) {
  SharedArena& shared = arenas_[layout.Key()];
  if (shared.arena) return shared.arena.get();
  auto created = ShareArena(*worker_, layout, kSetupTimeout);
  if (!created.ok()) {
    if (worker_->failure()) {
      WorkerFailed(stage);
    } else {
      Finish(stage, VerdictStatus::kInfraError, created.error().message);
    }
    return nullptr;
  }
  shared = std::move(created.value());
  return shared.arena.get();
}

bool WorkerSession::RunCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared,
                            bool after_timing, std::string* snapshot_out) {
  // Where a case's time goes, as running totals in the stage's evaluator_ms.
  auto& spent_ms = stage.details.MutableCounters().evaluator_ms;
  auto lap = Clock::now();
  auto count = [&spent_ms, &lap](const char* phase) {
    const auto now = Clock::now();
    spent_ms[phase] += std::chrono::duration<double, std::milli>(now - lap).count();
    lap = now;
  };
  GuardedArena* arena = ArenaFor(stage, prepared.layout);
  if (arena == nullptr) return false;
  if (auto status = arena->Prepare(prepared.inputs, guard_key_); !status.ok()) {
    return Finish(stage, VerdictStatus::kInfraError, status.error().message);
  }
  count("arena_prepare");
  // Unless it was computed ahead, the reference runs here while the worker runs the candidate.
  std::future<void> expected;
  if (prepared.expected.empty()) {
    expected = std::async(std::launch::async, [&] { ComputeExpected(task_, reference_, prepared); });
  }
  Message request;
  request.header = prepared.layout.ToJson();
  request.header["type"] = "run";
  request.header["target"] = "candidate";
  auto reply = worker_->Request(request, "result", options_.call_timeout + kReplySlack,
                                "running case " + spec.label);
  count("candidate_request");
  if (expected.valid()) expected.wait();
  count("reference_wait");
  if (!reply) return WorkerFailed(stage, &spec);
  if (reply->type() != "result") {
    return Finish(stage, VerdictStatus::kInfraError,
                  "worker error: " + reply->header.value("message", std::string("?")));
  }
  if (const auto raised = reply->header.find("candidate_raised"); raised != reply->header.end()) {
    return FinishCandidateRaised(recorder_, stage, *raised, CaseRefFor(task_, spec), worker_->OutputTail(2000));
  }
  // Judge a private copy: the shared pages stay writable from the worker's side.
  arena->SnapshotInto(snapshot_);
  count("snapshot");
  const CaseCheck check = CheckSnapshot(task_, prepared, snapshot_, guard_key_);
  count("check");
  auto& worst = stage.details.MutableCheck().worst_norm_error;
  worst = std::max(worst.value_or(0.0), check.worst_norm_error);
  if (check.problem != CaseProblem::kNone) {
    if (!after_timing) failed_case_.Keep(task_, spec, prepared, snapshot_, check);
    return FinishCaseProblem(recorder_, stage, task_, spec, check, after_timing);
  }
  if (snapshot_out != nullptr) *snapshot_out = snapshot_;
  return true;
}

PreparedCase WorkerSession::PrepareAndAnswer(const CaseSpec& spec) {
  const CaseLayout layout = MakeLayout(task_, spec.shape, kCaseGuardBytes);
  PreparedCase prepared = PrepareCase(task_, spec, kCaseGuardBytes, case_buffers_.TakeInputs(InputBytes(layout)));
  prepared.expected = case_buffers_.TakeOutputs(OutputElements(layout));
  if (!reference_writes_inputs_ && ComputeExpectedInPlace(task_, reference_, prepared)) return prepared;
  // The reference changed its inputs (an imported model's in-place operation): the case is drawn
  // again, and from now on the reference runs on a copy.
  reference_writes_inputs_ = true;
  prepared = PrepareCase(task_, spec, kCaseGuardBytes, std::move(prepared.inputs));
  ComputeExpected(task_, reference_, prepared);
  return prepared;
}

bool WorkerSession::Correctness() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kCorrectness);
  if (options_.time) StartTimingInputs();
  cases_ = options_.hidden_shapes_decide
               ? PlanCases(task_, secret_seed_, options_.seeds, options_.large_elements)
               : PlanBenchShapeCases(task_, secret_seed_, options_.seeds, options_.large_elements);
  // Determinism re-runs a mid-sized case: big enough for threads, small enough to be quick.
  int64_t best_elements = 0;
  for (size_t i = 0; i < cases_.size(); ++i) {
    const auto layout = MakeLayout(task_, cases_[i].shape, kCaseGuardBytes);
    int64_t elements = 0;
    for (const auto& slot : layout.tensors) elements += static_cast<int64_t>(slot.bytes / 4);
    if (elements <= (int64_t{1} << 18) && elements > best_elements) {
      best_elements = elements;
      determinism_case_ = i;
    }
  }
  // Inputs and references are made a few cases ahead, while the worker runs the current one.
  std::deque<std::future<PreparedCase>> ahead;
  size_t next_to_prepare = 0;
  auto prepare_ahead = [&] {
    while (next_to_prepare < cases_.size() && ahead.size() < kCasesPreparedAhead) {
      const CaseSpec& spec = cases_[next_to_prepare++];
      ahead.push_back(std::async(std::launch::async, [this, &spec] { return PrepareAndAnswer(spec); }));
    }
  };
  // After a wrong output the rest of the cases run too, counted (eval/case_counter.h).
  CaseCounter counter(recorder_, stage, cases_.size());
  bool completed = true;
  for (size_t i = 0; i < cases_.size() && completed; ++i) {
    if (options_.progress && (i % 8 == 0 || i + 1 == cases_.size())) {
      options_.progress(fmt::format("correctness {}/{}", i + 1, cases_.size()));
    }
    prepare_ahead();
    const auto waiting = Clock::now();
    PreparedCase prepared = ahead.front().get();
    stage.details.MutableCounters().evaluator_ms["case_wait"] +=
        std::chrono::duration<double, std::milli>(Clock::now() - waiting).count();
    ahead.pop_front();
    prepare_ahead();
    std::string* keep = i == determinism_case_ ? &determinism_snapshot_ : nullptr;
    completed = counter.Record(CaseRefFor(task_, cases_[i]), RunCase(stage, cases_[i], prepared, false, keep));
    case_buffers_.Keep(std::move(prepared));
  }
  const bool passed = counter.Finish(completed);
  stage.seconds = SecondsSince(start);
  if (!passed) return false;
  stage.details.MutableCheck().cases = static_cast<int64_t>(cases_.size());
  const auto random_shapes = std::count_if(cases_.begin(), cases_.end(), [](const CaseSpec& spec) {
    return spec.label.find("random shape") != std::string::npos;
  });
  const double worst = stage.details.MutableCheck().worst_norm_error.value_or(0.0);
  stage.details.summary =
      options_.hidden_shapes_decide
          ? fmt::format("{} cases ({} shapes x {} distributions x up to {} seeds, {} random shapes, the bench "
                        "shape); worst norm-wise error {:.2g}",
                        cases_.size(), task_.eval_shapes.size(), task_.distributions.size(), options_.seeds,
                        random_shapes, worst)
          : fmt::format("{} cases at the bench shape ({} distributions x up to {} seeds; the hidden shapes "
                        "come last, as a property); worst norm-wise error {:.2g}",
                        cases_.size(), task_.distributions.size(), options_.seeds, worst);
  return true;
}

bool WorkerSession::Determinism() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kDeterminism);
  const CaseSpec& spec = cases_[determinism_case_];
  PreparedCase prepared = PrepareCase(task_, spec, kCaseGuardBytes);
  std::string snapshot;
  if (!RunCase(stage, spec, prepared, false, &snapshot)) return false;
  stage.seconds = SecondsSince(start);
  // Bitwise differences are allowed (OpenMP reductions may reorder sums); both runs were checked
  // against the reference, which is what catches kernels that read uninitialised memory.
  const bool identical = snapshot == determinism_snapshot_;
  stage.details.MutableCheck().bitwise_identical = identical;
  stage.details.summary = fmt::format("re-ran {}: correct again{}", spec.label,
                                         identical ? ", bitwise identical" : " (not bitwise identical)");
  return true;
}

void WorkerSession::StartRecheckCases() {
  // Fresh values into buffers the kernel has already seen: the first eval shape and the bench
  // shape, each under a new seed.
  recheck_cases_ = {cases_.front(), cases_.back()};
  for (size_t i = 0; i < recheck_cases_.size(); ++i) {
    recheck_cases_[i].seed = DeriveSeed(secret_seed_, kRecheckSalt + i);
    recheck_cases_[i].label += " (re-check, new values)";
    recheck_prepared_.push_back(
        std::async(std::launch::async, [this, i] { return PrepareAndAnswer(recheck_cases_[i]); }));
  }
}

bool WorkerSession::IdleCheck() {
  auto& stage = Stage(StageId::kIdleCheck);
  // The evaluator's own work during the window is fine: only the worker's CPU time is measured.
  if (options_.time) StartRecheckCases();
  const auto before = worker_->CpuTicks();
  std::this_thread::sleep_for(kIdleWindow);
  const auto after = worker_->CpuTicks();
  stage.seconds = std::chrono::duration<double>(kIdleWindow).count();
  if (!before || !after) {
    stage.details.summary = "skipped: the worker's CPU time is not readable";
    return true;
  }
  const uint64_t used = *after - *before;
  const double used_ms = 1000.0 * static_cast<double>(used) / ClockTicksPerSecond();
  stage.details.cpu_ms_while_idle = used_ms;
  if (used > kIdleTicksAllowed) {
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("the worker used {:.0f} ms of CPU in {} ms after the kernel returned: "
                              "work continues in the background",
                              used_ms, kIdleWindow.count()),
                  FailureKind::kWorkAfterReturn);
  }
  stage.details.summary = fmt::format("{:.0f} ms of CPU while idle", used_ms);
  return true;
}

bool WorkerSession::Recheck() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kRecheck);
  if (recheck_prepared_.empty()) StartRecheckCases();
  for (size_t i = 0; i < recheck_cases_.size(); ++i) {
    PreparedCase prepared = recheck_prepared_[i].get();
    if (!RunCase(stage, recheck_cases_[i], prepared, true)) return false;
  }
  // A secret number of further calls on the smallest shape: a kernel that turns dishonest after
  // some count of calls cannot know how many calls the evaluation makes, nor outlast it cheaply.
  const auto smallest = std::min_element(cases_.begin(), cases_.end(), [this](const CaseSpec& a, const CaseSpec& b) {
    return LargestElements(a.shape) < LargestElements(b.shape);
  });
  const size_t extra_calls = kMinExtraCalls + MixCounter(secret_seed_, kExtraCallsSalt, 0) % kExtraCallsRange;
  for (size_t i = 0; i < extra_calls; ++i) {
    CaseSpec spec = *smallest;
    spec.seed = DeriveSeed(secret_seed_, kExtraCallsSalt + 1 + i);
    spec.label += " (re-check, extra call)";
    PreparedCase prepared = PrepareCase(task_, spec, kCaseGuardBytes);
    ComputeExpected(task_, reference_, prepared);
    if (!RunCase(stage, spec, prepared, true)) return false;
  }
  stage.seconds = SecondsSince(start);
  stage.details.MutableCheck().extra_calls = static_cast<int64_t>(extra_calls);
  stage.details.summary = fmt::format(
      "correct after timing, on fresh values in the same buffers, and on {} more calls", extra_calls);
  return true;
}

int64_t WorkerSession::LargestElements(const DimValues& shape) const {
  int64_t largest = 0;
  for (const auto* tensors : {&task_.inputs, &task_.outputs}) {
    for (const auto& tensor : *tensors) largest = std::max(largest, task_.Elements(tensor, shape));
  }
  return largest;
}

bool WorkerSession::ProcessStateCheck() {
  return RunStateReportStage(
      recorder_, *worker_, kSetupTimeout,
      "the OpenMP and OpenBLAS thread counts, floating-point mode and CPU affinity were left as found");
}

bool WorkerSession::HiddenShapes() {
  return RunHiddenShapesStage(
      recorder_, task_, options_, secret_seed_,
      [this](StageRecord& stage, const CaseSpec& spec) {
        PreparedCase prepared = PrepareCase(task_, spec, kCaseGuardBytes);
        return RunCase(stage, spec, prepared, false);
      },
      [this](const StageRecord&) { return !worker_->failure(); });
}

bool WorkerSession::CloseWorker() {
  auto& stage = Stage(StageId::kClose);
  const auto start = Clock::now();
  const bool closed = worker_->Close(kSetupTimeout);
  stage.seconds = SecondsSince(start);
  if (!closed) return WorkerFailed(stage);
  stage.details.summary = "the worker exited cleanly with nothing left unread";
  return true;
}

void RunWithHostReference(const Task& task, const EvalOptions& options, const MachineFacts& machine, Verdict& verdict,
                          uint64_t secret_seed, const std::filesystem::path& candidate,
                          const std::filesystem::path& reference, const std::filesystem::path& baseline,
                          std::function<MeasuredPeaks()> remeasure, WorkerKind kind) {
  VerdictRecorder recorder(verdict);
  auto library = SharedLibrary::Open(reference);
  if (!library.ok()) {
    recorder.Finish(recorder.Stage(StageId::kSandbox), VerdictStatus::kInfraError, library.error().message);
    return;
  }
  auto entry = (*library)->Entry();
  if (!entry.ok()) {
    recorder.Finish(recorder.Stage(StageId::kSandbox), VerdictStatus::kInfraError, entry.error().message);
    return;
  }
  WorkerSession session(task, options, machine, verdict, secret_seed, std::move(remeasure), std::move(kind));
  session.Run(candidate, baseline, *entry);
}

}  // namespace ksmith
