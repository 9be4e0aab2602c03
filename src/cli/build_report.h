// What `ksmith build` prints: the build stage of a build-only run (EvalOptions::build_only), per
// kernel: registers, static shared memory, local memory (stack frame and spills), constant memory
// (ptxas's report) and the SASS summary (cuobjdump), or why the candidate did not build.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eval/verdict.h"

namespace ksmith {

/// Whether the build-only run built the candidate: no stage failed and a build stage is there.
bool Built(const Verdict& verdict);

/// The report as one object: task, backend, candidate, `built`, `status` ("built", or the
/// verdict's status: compile_error, integrity_violation, infra_error), `reason`, the target,
/// the build's facts, `kernels` (each kernel's resources with its SASS counts, matched by mangled
/// name), `sass_total`, `sass_error` where there is no SASS, and `stages` (the run's stage
/// records, with a failure's diagnostics and log).
nlohmann::json BuildReportJson(const Verdict& verdict);

/// The same for a person: one line for the build, then a few lines per kernel. Only for a run
/// that built; a failed one is printed as its verdict is.
std::string RenderBuildReport(const Verdict& verdict);

}  // namespace ksmith
