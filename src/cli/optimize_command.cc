// `ksmith optimize`: its flags; the run itself is cli/optimize_run.h.
#include <cstdio>
#include <memory>

#include "agent/strategy.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/setting_ranges.h"
#include "cli/optimize_run.h"
#include "eval/backend_registry.h"

namespace ksmith {

CommandHandler AddOptimizeCommand(CLI::App& app) {
  auto flags = std::make_shared<OptimizeFlags>();
  app.add_option("--task,-t", flags->task, "Task name (see `ksmith tasks`) or task folder");
  app.add_option("--backend,-b", flags->backend, "Where the kernel runs (default cpu; `ksmith doctor` shows what this machine has)")
      ->check(CLI::IsMember(BackendRegistry::Global().Names()));
  app.add_option("--provider", flags->provider,
                 "openai (any OpenAI-compatible server: OpenAI, vLLM, SGLang, llama.cpp, Ollama, DeepSeek), anthropic, "
                 "or replay; none: the tune strategy")
      ->check(CLI::IsMember({"openai", "anthropic", "replay"}));
  app.add_option("--base-url", flags->base_url, "The server's API root, e.g. http://localhost:8000/v1");
  app.add_option("--model", flags->model, "Model name as the server knows it");
  app.add_option("--strategy", flags->strategy, "refine (feedback loop, the default with a model), sample (best-of-n), "
                 "tune (search the kernel's @tune knobs, the default without one), evolve (islands and an archive of "
                 "the best kernel of each kind; without a model it mutates and crosses @tune knob settings), team (planner, "
                 "coder, debugger and judge with a ledger of the ideas tried; [roles.NAME] in ksmith.toml gives a role "
                 "its own model)")
      ->check(CLI::IsMember(StrategyNames()));
  app.add_option("--islands", flags->islands, "evolve: populations that evolve apart and exchange their best (default 4)")
      ->check(RangeCheck("islands"));
  app.add_flag("--no-overlap", flags->no_overlap,
               "sample, evolve: wait for a batch's verdicts before writing the next (by default the next batch is "
               "written while the last is judged, so that the evaluator is not idle while models write; evolve then "
               "breeds each generation from the one before the last)");
  app.add_option("--profile-every", flags->profile_every,
                 "With a model on cuda: profile the best kernel with ncu once this many candidates were judged since "
                 "the last profile, and show its bottleneck facts in the next prompts (default 5; 0: never)")
      ->check(RangeCheck("profile_every"));
  app.add_flag("--no-knowledge", flags->no_knowledge,
               "Leave the knowledge base out: no notes in the prompts (by default the notes for the task, its "
               "failures and its bottleneck are shown) and no harvest of this run's experience into it");
  app.add_flag("--interactive", flags->interactive,
               "Review each proposal before it is judged: see its rationale and its diff against its parent, then "
               "approve it, edit it in $EDITOR, add a constraint that joins every later prompt, roll back to an earlier "
               "kernel (refine), or stop; each verdict is shown as it comes and everything you do is recorded");
  app.add_option("--max-candidates,-n", flags->max_candidates, "Attempts before the run stops (default 20)")
      ->check(RangeCheck("max_candidates"));
  app.add_option("--kernel", flags->kernel, "A kernel to start from (and for tune, the one whose knobs are searched; "
                 "default: the task's seed kernel)");
  app.add_option("--format", flags->format,
                 "How the model writes candidates: native (ksmith's function contract, the default) or kernelbench "
                 "(a Python file defining ModelNew, on a task imported with `ksmith import kernelbench`)")
      ->check(CLI::IsMember({"native", "kernelbench"}));
  app.add_option("--parallel", flags->parallel, "Model calls in flight at once, and evolve's candidates per generation (default 4)")->check(RangeCheck("max_concurrency"));
  app.add_option("--temperature", flags->temperature, "Sampling temperature (default 0.7)")->check(RangeCheck("temperature"));
  app.add_option("--max-tokens", flags->budget_tokens, "Token budget (input + output) for the run")
      ->check(RangeCheck("tokens"));
  app.add_option("--max-dollars", flags->budget_dollars, "Cost budget in dollars (needs prices in ksmith.toml)")
      ->check(RangeCheck("dollars"));
  app.add_option("--time-budget", flags->budget_wall_s, "Wall-clock budget for the run [s]")->check(RangeCheck("wall_s"));
  app.add_option("--timing-budget", flags->timing_budget_s, "Seconds each candidate's timing may take (default 1)")
      ->check(RangeCheck("timing_budget_s"));
  app.add_option("--seeds", flags->seeds, "Input seeds per eval shape and distribution (default 3)")->check(RangeCheck("seeds"));
  AddBuildLimitOptions(app, flags->build_memory_gib, flags->build_cpu_s);
  app.add_option("--arch", flags->arch, "cuda: GPU architecture to build for (default: the GPU found)");
  app.add_option("--devices", flags->devices,
                 "GPU backends: devices to evaluate on (CUDA_VISIBLE_DEVICES indices, e.g. --devices 0,1; default: the "
                 "first)")
      ->delimiter(',');
  app.add_flag("--cache", flags->cache, "Answer repeated identical requests from the on-disk response cache");
  app.add_option("--replay-run", flags->replay_run, "replay: the stored run whose recorded answers are replayed");
  app.add_option("--resume", flags->resume, "Continue a stopped or killed run from the store");
  app.add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  app.add_option("--output-dir,-o", flags->output_dir, "Where the best kernel and report.md go (default ksmith-runs/<run_id>)");
  app.add_option("--config", flags->config, "Settings file (default ./ksmith.toml when present)")->check(CLI::ExistingFile);
  app.add_flag("--json", flags->json, "Print one JSON summary on stdout");
  app.add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  return [flags] {
    const OptimizeOutcome outcome = RunOptimize(*flags, {});
    if (!outcome.error.empty()) PrintError(outcome.error);
    if (!outcome.summary.is_null()) {
      if (flags->json) {
        std::printf("%s\n", outcome.summary.dump(2).c_str());
      } else {
        std::fputs(outcome.rendered.c_str(), stdout);
      }
    }
    return outcome.exit_code;
  };
}

}  // namespace ksmith
