// The seam between the evaluation pipeline and a way of writing candidates. ksmith's own
// contract (a C/C++/CUDA source that defines the task's function, eval/native_format.h) and
// KernelBench's (a Python file that defines ModelNew, kernelbench/kernelbench_format.h) are two
// implementations. The pipeline asks the candidate's format for every step that differs (the
// source audit, the build, what the worker may read, which shapes decide, what a failed build
// says) and never tests which format it holds. How a model is asked to write a format is its
// other face (agent/model_format.h); formats/format_registry.h registers both faces together,
// and is the one place that names the formats.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/build.h"
#include "core/result.h"
#include "eval/audit.h"
#include "eval/backend.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

class CompilePool;

/// A second baseline that a format times the candidate against beside the task's own (for
/// KernelBench, torch.compile of the problem's Model): queued with the trusted builds, finished
/// into the trusted build once they are ready (TrustedBuild::second); the session records the
/// timing in VerdictExtensions::second_timing. Reported only, never part of the status.
class SecondBaselineBuild {
 public:
  virtual ~SecondBaselineBuild() = default;
  /// Waits for its build and fills `second`, or its note saying why there is none; may add to
  /// the trusted_build stage's `summary`. `progress` may be empty.
  virtual void Finish(SecondBaseline& second, std::string& summary,
                      const std::function<void(const std::string&)>& progress) = 0;
};

/// One candidate's build, as its format planned it: what runs in the compile pool, and what the
/// evaluation of what it built must be told. Immutable once planned: Run is thread-safe.
class CandidateBuildJob {
 public:
  virtual ~CandidateBuildJob() = default;
  /// Compile-pool slots the build holds while it runs (CompilePool::Submit).
  virtual size_t slots() const { return kMemorySlotsPerBuild; }
  /// Builds the candidate, on a compile-pool thread. A candidate that does not build is a
  /// BuildOutput with compiled == false; an Error means the build could not run at all.
  virtual Result<BuildOutput> Run(const EvalBackend& backend, const Task& view) const = 0;
  /// (optional) What only the pipeline may decide about running what this build made: the
  /// finish call, the default stream, folders the worker may read, whether the hidden shapes
  /// decide. `options` holds ksmith's own contract's settings when called. Default: those.
  virtual void SetRunOptions(EvalOptions& options) const { (void)options; }
  /// (optional) Records in `verdict`'s extensions, before any stage runs, what the format reports
  /// beside the status (where a fixed-shape candidate is judged). Default: nothing.
  virtual void OpenVerdict(Verdict& verdict, const Task& view) const { (void)verdict, (void)view; }
  /// (optional) Completes the verdict once the verification session ran (the reason of a passed
  /// fixed-shape candidate says whether it generalizes). Default: nothing.
  virtual void CloseVerdict(Verdict& verdict) const { (void)verdict; }
  /// The build stage's summary of what `build` (compiled) made. Default: "cached" or "compiled
  /// in N s".
  virtual std::string BuildSummary(const BuildOutput& build) const;
  /// (optional) Queues a second baseline's build beside the task's trusted builds where
  /// `options.format_options` ask for one; null where none was asked for. Default: where one was
  /// asked for, a note that this candidate has none.
  virtual std::unique_ptr<SecondBaselineBuild> StartSecondBaseline(CompilePool& pool, const EvalBackend& backend,
                                                                   const Task& view, const EvalOptions& options) const;
};

/// Why a build that did not compile failed, as a format words it where the compiler's own
/// diagnostics are not the answer.
struct BuildFailureWords {
  std::string summary;  // the build stage's summary
  std::string reason;   // the verdict's reason
};

/// How candidates of one format are judged. Implementations are stateless singletons: they
/// outlive every evaluation, and a CandidateSource points at one.
class CandidateFormat {
 public:
  virtual ~CandidateFormat() = default;

  /// "native", "kernelbench": `optimize --format` and a run's stored settings spell it so.
  virtual const std::string& name() const = 0;
  /// One line for a person choosing a format ("a Python file defining ModelNew, ...").
  virtual const std::string& description() const = 0;
  /// Whether a candidate file at `path` is written in this format (kernelbench: `.py`). The
  /// registry gives a path no format claims to the native format.
  virtual bool ClaimsPath(std::string_view path) const = 0;
  /// The file a candidate of this format is written to (".py"), or empty: the backend's
  /// source extension.
  virtual std::string FileExtension() const = 0;

  /// The source audit's findings; empty: the audit passed.
  virtual std::vector<AuditFinding> AuditSource(const EvalBackend& backend, const std::string& text,
                                                const Task& view) const = 0;
  /// (optional) The audit stage's summary when it passed; empty: the pipeline's own words.
  virtual std::string AuditPassedSummary() const { return {}; }

  /// Plans the candidate's build. kInvalidArgument where this candidate cannot be built for
  /// `view` on `backend` (the verdict is then a compile_error that says why).
  virtual Result<std::shared_ptr<const CandidateBuildJob>> PlanBuild(const CandidateSource& candidate,
                                                                     const Task& view,
                                                                     const EvalBackend& backend) const = 0;
  /// The declaration a candidate must define, quoted after a failed build; empty: none.
  virtual std::string ExpectedDeclaration(const EvalBackend& backend, const Task& view) const = 0;
  /// The words for a build that did not compile (and hit no limit); nullopt: the compiler's
  /// diagnostics and the expected declaration say it (FinishCompileFailure).
  virtual std::optional<BuildFailureWords> BuildFailure(const std::string& log) const = 0;
  /// The binary audit's findings on what the build made; an Error where it could not run.
  virtual Result<std::vector<AuditFinding>> AuditBinary(const EvalBackend& backend, const BuildOutput& build,
                                                        const Task& view) const = 0;
};

/// The format `candidate` is written in: its own, or the native format where it names none.
const CandidateFormat& FormatOf(const CandidateSource& candidate);

}  // namespace ksmith
