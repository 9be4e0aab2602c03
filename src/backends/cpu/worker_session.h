// The stages that need the candidate running: correctness, determinism, timing, re-check and
// the physical-limit check, all against one sandboxed worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/machine.h"
#include "binary/shared_library.h"
#include "core/files.h"
#include "eval/case_buffers.h"
#include "eval/cases.h"
#include "eval/eval_options.h"
#include "eval/failed_case.h"
#include "eval/gpu_gate.h"
#include "eval/physical_limit.h"
#include "eval/stage_driver.h"
#include "eval/verdict.h"
#include "sandbox/layout.h"
#include "sandbox/shared_arena.h"
#include "sandbox/shared_memory.h"
#include "sandbox/supervisor.h"

namespace ksmith {

/// Guard zone on each side of every tensor of a case [bytes].
inline constexpr size_t kCaseGuardBytes = 256;

/// Which worker the session drives: every worker that speaks backends/cpu/worker/cpu_worker.h's protocol (the
/// CPU's, OpenCL's) gets the same stages.
struct WorkerKind {
  std::string backend = "cpu";  // whose baseline the task's [baseline.<backend>] is
  nlohmann::json setup = nlohmann::json::object();  // added to the setup request (an OpenCL device)
  /// Timing samples are the worker's clock (a GPU's own events: the evaluator's clock would also
  /// count launches and transfers); the evaluator's clock is then the cross-check. Only where the
  /// candidate's code cannot reach that clock: never for kernels run in the worker's process.
  bool worker_clock = false;
  /// The kernels run on this machine's cores: its measured peaks are the physical limit.
  bool host_peaks = true;
};

/// Runs its stages in order; timing_stage.cc holds the timing ones.
class WorkerSession : private StageRunner {
 public:
  /// `remeasure` measures this machine's peaks again, now (the physical limit's second look);
  /// empty: the cached peaks decide alone.
  WorkerSession(const Task& task, const EvalOptions& options, const MachineFacts& machine,
                Verdict& verdict, uint64_t secret_seed, std::function<MeasuredPeaks()> remeasure = {},
                WorkerKind kind = {})
      : task_(task), options_(options), machine_(machine), verdict_(verdict),
        secret_seed_(secret_seed), remeasure_(std::move(remeasure)), kind_(std::move(kind)) {}

  /// Runs every stage; sets the verdict's status (passed when all stages pass).
  bool Run(const std::filesystem::path& candidate, const std::filesystem::path& baseline,
           KernelEntry reference);

 private:
  bool RunStages(const std::filesystem::path& candidate, const std::filesystem::path& baseline);
  /// This backend's stages, in order (eval/stage_driver.h runs them).
  StagePlan Plan() const;
  bool RunStage(StageId stage) override;
  StageRecord& Stage(StageId id) { return recorder_.Stage(id); }
  bool Finish(StageRecord& stage, VerdictStatus status, std::string reason,
              FailureKind kind = FailureKind::kUnspecified) {
    return recorder_.Finish(stage, status, std::move(reason), kind);
  }
  /// Turns a failed request into the verdict: timeout, crash, exit or protocol breach. `running`:
  /// the case the request ran.
  bool WorkerFailed(StageRecord& stage, const CaseSpec* running = nullptr);
  bool Start(const std::filesystem::path& candidate, const std::filesystem::path& baseline);
  /// The shared arena for `layout`, created and handed to the worker on first use.
  GuardedArena* ArenaFor(StageRecord& stage, const CaseLayout& layout);
  /// Runs one case on the candidate; fails the stage on any problem. `after_timing` marks the
  /// re-check, where a wrong answer means the kernel changed its behaviour.
  bool RunCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared, bool after_timing,
               std::string* snapshot_out = nullptr);
  bool Correctness();
  bool Determinism();
  bool IdleCheck();
  bool TimeAgainstBaseline();
  bool Recheck();
  bool PhysicalLimit();
  /// Whether the candidate left the process-wide settings the baseline runs under as it found
  /// them (the worker checks between calls and undoes any change).
  bool ProcessStateCheck();
  /// A KernelBench candidate's hidden shapes, as a property (verdict.extensions.generalization); never
  /// fails the verdict. Returns whether the worker is still running to be closed.
  bool HiddenShapes();
  bool CloseWorker();
  int64_t LargestElements(const DimValues& shape) const;
  /// The cores, where other evaluations run beside this one (options_.gpu_gate): correctness work
  /// shares them with theirs and with builds; timing and measuring the machine take them alone.
  void ShareCores();
  void TakeCoresAlone();

  const Task& task_;
  const EvalOptions& options_;
  const MachineFacts& machine_;
  Verdict& verdict_;
  VerdictRecorder recorder_{verdict_};
  uint64_t secret_seed_;
  std::filesystem::path candidate_, baseline_;  // the built candidate and baseline, for the sandbox stage
  FailedCaseKeeper failed_case_{options_.failed_case_sink, options_.seeds};  // for --dump-failure
  std::function<MeasuredPeaks()> remeasure_;
  WorkerKind kind_;
  bool timing_disturbed_ = false;  // other work ran while the chosen timing attempt ran
  std::optional<GpuGate::Shared> cores_shared_;    // one of the two at most: the gate's hold
  std::optional<GpuGate::Exclusive> cores_alone_;
  KernelEntry reference_ = nullptr;
  uint64_t guard_key_ = 0;  // keys the guard zones' bytes (GuardPattern); secret, as the inputs' seeds are
  /// Cases whose inputs and answers are made ahead, while the worker runs the current one.
  static constexpr size_t kCasesPreparedAhead = 2;
  /// Judged cases' memory for the next cases' inputs and answers; before the futures that use it.
  CaseBuffers case_buffers_{kCasesPreparedAhead + 1};
  /// Set once the reference wrote to a case's inputs: it then runs on copies (ComputeExpected).
  std::atomic<bool> reference_writes_inputs_{false};
  /// A case's inputs drawn and the reference run, into kept memory where case_buffers_ has some.
  PreparedCase PrepareAndAnswer(const CaseSpec& spec);
  std::unique_ptr<WorkerProcess> worker_;
  std::unique_ptr<ScopedTempDir> scratch_;
  /// Case memory shared with the worker, one per layout: the same shape always gets the same
  /// addresses, so a kernel that caches results by pointer sees fresh values behind old pointers.
  std::map<std::string, SharedArena> arenas_;
  std::vector<CaseSpec> cases_;
  /// The timing inputs, generated in the background while correctness runs.
  struct TimingPlan {
    CaseLayout layout;
    size_t sets = 1;
    size_t set_bytes = 0;
    uint64_t seed = 0;
  };
  TimingPlan timing_plan_;
  std::future<Result<std::unique_ptr<SharedMemory>>> timing_inputs_;
  void StartTimingInputs();
  /// The re-check's cases, prepared while the idle check waits.
  std::vector<CaseSpec> recheck_cases_;
  std::vector<std::future<PreparedCase>> recheck_prepared_;
  void StartRecheckCases();
  size_t determinism_case_ = 0;
  std::string determinism_snapshot_;
  std::string snapshot_;  // the latest case's judged copy; its memory serves every case
};

/// A verification whose reference is trusted code built by g++ and run in this process (the CPU's
/// and OpenCL's): opens the reference's library and runs a WorkerSession's stages with it. A
/// reference that does not load is the evaluator's error (the "sandbox" stage says why).
void RunWithHostReference(const Task& task, const EvalOptions& options, const MachineFacts& machine, Verdict& verdict,
                          uint64_t secret_seed, const std::filesystem::path& candidate,
                          const std::filesystem::path& reference, const std::filesystem::path& baseline,
                          std::function<MeasuredPeaks()> remeasure, WorkerKind kind);

}  // namespace ksmith
