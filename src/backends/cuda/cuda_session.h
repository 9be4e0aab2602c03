// The stages of a CUDA evaluation that need the GPU: correctness against the GPU reference,
// stream and idle checks, timing by the nvbench method, the re-check and the physical limit.
// Two workers take part: the candidate's (which also holds the trusted baseline) and a
// reference worker that never loads untrusted code, so nothing a candidate does inside its
// process can touch the answers it is judged against.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/gpu_facts.h"
#include "core/files.h"
#include "eval/backend.h"
#include "eval/case_feed.h"
#include "eval/cases.h"
#include "eval/eval_options.h"
#include "eval/failed_case.h"
#include "eval/pipeline_steps.h"
#include "eval/stage_driver.h"
#include "eval/verdict.h"
#include "sandbox/layout.h"
#include "sandbox/shared_arena.h"
#include "sandbox/shared_memory.h"
#include "sandbox/supervisor.h"

namespace ksmith {

/// Guard zone on each side of every tensor of a CUDA case [bytes].
inline constexpr size_t kCudaGuardBytes = 256;
/// A worker that ran a call without drawing the inputs it was sent a draw for ran it on stale
/// memory: the evaluator's fault (a mismatched worker), never the candidate's.
inline constexpr const char* kWorkerDidNotDraw =
    "the CUDA worker did not draw the case's inputs it was asked to draw (a ksmith-cuda-worker older than "
    "this ksmith? rebuild both)";
/// Context creation, module loading, sharing a case's memory.
inline constexpr std::chrono::milliseconds kCudaSetupTimeout{60'000};

/// Both workers, started before the build so that their CUDA contexts (0.3 s each) are created
/// while nvcc runs.
struct CudaWorkers {
  std::unique_ptr<ScopedTempDir> scratch;
  std::unique_ptr<WorkerProcess> candidate;
  std::unique_ptr<WorkerProcess> reference;
  std::string start_error;  // set when they could not be started
  /// How long before the verification took them they were started (a spare); 0 when started
  /// for it.
  double started_ahead_s = 0;

  static CudaWorkers Start(const EvalOptions& options);
};

class CudaSession : private StageRunner {
 public:
  /// `task` is the CUDA view of a task: its eval and bench shapes are the GPU-sized ones.
  /// `gpu` may still be measuring (the first run on a GPU): timing waits for it, so that the
  /// probe never runs while kernels are timed.
  CudaSession(const Task& task, const EvalOptions& options, std::shared_future<std::optional<GpuFacts>> gpu,
              Verdict& verdict, uint64_t secret_seed, CudaWorkers workers)
      : task_(task), options_(options), gpu_future_(std::move(gpu)), verdict_(verdict),
        secret_seed_(secret_seed), workers_(std::move(workers)) {}

  /// Starts preparing the correctness cases: inputs, and the answers of the reference (the
  /// built reference.cu) on the reference worker. Nothing of it depends on the candidate, so it
  /// runs while the candidate compiles. Run starts it if this was not called.
  void StartCases(const std::filesystem::path& reference);
  /// Where EvalOptions::warm_baseline: has the candidate's worker load the baseline and call its
  /// warm entry (kKernelWarmSymbol: a KernelBench baseline's shim starts Python and imports
  /// torch), before the walls go up and while the candidate compiles. Its failure is Setup's to
  /// report.
  void WarmCandidateWorker(const std::filesystem::path& baseline);

  /// Runs every stage; sets the verdict's status (passed when all pass). cuda_timing_stage.cc
  /// holds the timing stages.
  bool Run(const std::filesystem::path& candidate, const std::filesystem::path& baseline,
           const std::filesystem::path& reference);
  /// A second baseline to time the candidate against once it passed (torch.compile beside a
  /// KernelBench problem's eager), or why there is none; before Run.
  void SetSecondBaseline(const TrustedBuild& trusted) { second_ = trusted.second; }

 private:
  using ArenaMap = std::map<std::string, SharedArena>;

  bool RunStages(const std::filesystem::path& candidate, const std::filesystem::path& baseline);
  /// This backend's stages, in order (eval/stage_driver.h runs them).
  StagePlan Plan() const;
  bool RunStage(StageId stage) override;

  StageRecord& Stage(StageId id) { return recorder_.Stage(id); }
  bool Finish(StageRecord& stage, VerdictStatus status, std::string reason,
              FailureKind kind = FailureKind::kUnspecified) {
    return recorder_.Finish(stage, status, std::move(reason), kind);
  }
  /// `running`: the case the failed request ran.
  bool WorkerFailed(StageRecord& stage, WorkerProcess& worker, bool trusted, const CaseSpec* running = nullptr);
  bool Setup(const std::filesystem::path& candidate, const std::filesystem::path& baseline);
  /// The candidate worker's arena for `layout`, shared with it on first use.
  GuardedArena* ArenaFor(StageRecord& stage, const CaseLayout& layout);
  /// Loads the reference into its worker. Errors here and below are the evaluator's.
  Status SetupReference(const std::filesystem::path& reference);
  /// What the candidate's worker may read: both builds, the baseline's runtime, the pipeline's additions.
  std::vector<std::string> CandidateReadable(const std::filesystem::path& candidate,
                                             const std::filesystem::path& baseline) const;
  /// Fills prepared.expected (and .magnitude) from the reference worker. Used by the feed's
  /// thread during correctness and by the stages after it, never by both at once.
  Status ComputeExpected(PreparedCase& prepared);
  /// The case feed's answer: draws `prepared`'s inputs (laid out by LayOutCase) and fills
  /// expected and magnitude, the reference drawing the same inputs on the GPU meanwhile.
  Status DrawAndAnswer(PreparedCase& prepared);
  /// Fills prepared.magnitude where the task wants it (the reference on the inputs' variants).
  Status AnswerMagnitude(PreparedCase& prepared);
  /// The reference on `inputs`, or on `draw` made on the GPU (then `inputs` is not read).
  Status RunReference(const CaseLayout& layout, const std::string& inputs, std::vector<std::vector<double>>& outputs,
                      const std::optional<CaseDraw>& draw = std::nullopt);
  /// Runs the candidate on one case (`repeat` extra calls first) and copies the case's memory
  /// into `snapshot` for judging; `launch` gets what a failed launch said; `part` what the
  /// snapshot holds (the inputs' bytes too, unless the worker drew them and found them as drawn).
  /// `settle` records the judgement of the case before, and is called before anything of this
  /// case is recorded.
  bool CallCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared, int repeat,
                std::string& snapshot, std::string& launch, ArenaPart& part, const std::function<bool()>& settle);
  /// Records a case's judgement; false (the stage finished) when it went wrong.
  bool RecordCheck(StageRecord& stage, const CaseSpec& spec, const CaseCheck& check, bool after_timing,
                   const std::string& launch);
  /// Runs the candidate on one case and judges it at once. `repeat` extra calls come first.
  bool RunCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared, bool after_timing,
               int repeat = 0);
  /// Fails the stage for a CUDA error, a worker error, or GPU work the candidate was not allowed.
  bool JudgeReply(StageRecord& stage, const Message& reply, const CaseRef& at);
  bool Correctness();
  bool IdleCheck();
  bool Time();
  /// The candidate against the second baseline, after every verdict-deciding stage: its outcome
  /// is reported (verdict.extensions.second_timing or a note) and never changes the status.
  void TimeAgainstSecondBaseline();
  /// The worker's timing request at the bench shape; `salt` picks its rounds' inputs.
  Message TimingRequest(const CaseLayout& layout, uint64_t salt) const;
  std::chrono::milliseconds TimingTimeout() const;
  bool Recheck();
  bool PhysicalLimit();
  bool Close();
  /// A KernelBench candidate's hidden shapes, as a property (verdict.extensions.generalization); never
  /// fails the verdict. Returns whether the candidate's worker is fit to be closed.
  bool HiddenShapes();
  /// A KernelBench candidate's Python changes of process state (each undone before the baseline
  /// ran): an integrity violation, as on the CPU. Only for a shim the pipeline generated.
  bool PythonState();
  /// What the CUDA worker attributes launches to: a KernelBench candidate's build folder.
  std::vector<std::string> OwnCode() const;

  const Task& task_;
  const EvalOptions& options_;
  std::shared_future<std::optional<GpuFacts>> gpu_future_;
  std::optional<GpuFacts> gpu_;
  Verdict& verdict_;
  VerdictRecorder recorder_{verdict_};
  uint64_t secret_seed_;
  std::filesystem::path candidate_, baseline_;  // the built candidate and baseline, for the sandbox stage
  /// For --dump-failure. Correctness judges on a thread of its own, one case at a time and in
  /// order, so Keep is never called from two threads at once.
  FailedCaseKeeper failed_case_{options_.failed_case_sink, options_.seeds};
  CudaWorkers workers_;
  LaunchedKernels launched_;  // the checked runs' kernels, by launching library
  SecondBaseline second_;     // the format's (torch.compile), where asked for
  double warm_s_ = -1;       // how long the baseline's warm entry took, where it ran
  std::string warm_failure_;  // how the worker ended while the baseline warmed, where it did
  std::string warm_note_;     // why the baseline was not warmed, where the worker said
  uint64_t guard_key_ = 0;  // keys the guard zones' bytes (GuardPattern); secret, as the inputs' seeds are
  std::string snapshot_;  // the latest case's judged copy; its memory serves every case
  size_t l2_bytes_ = 0;
  ArenaMap candidate_arenas_;
  ArenaMap reference_arenas_;
  std::vector<CaseSpec> cases_;
  CaseSpec final_case_;  // the inputs of the last timed call, drawn in the worker from its seed
  int reference_unpinned_ = 0;  // the reference's arenas that could not be page-locked
  // Last: it stops (and stops using the reference worker and its arenas) before they go. It
  // lives until timing took the last timed call's case from it; the stages after use the
  // reference worker directly.
  std::unique_ptr<CaseFeed> feed_;
};

}  // namespace ksmith
