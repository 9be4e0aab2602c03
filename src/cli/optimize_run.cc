// One `ksmith optimize` run: settings from defaults, ksmith.toml and flags; a provider (or
// none: tune); a strategy; the store; the loop, whose candidates are jobs of the evaluation
// service; then the best kernel, a Markdown report and a summary.
#include "cli/optimize_run.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "agent/optimize_loop.h"
#include "agent/run_report.h"
#include "cli/app.h"
#include "cli/candidate_evaluators.h"
#include "cli/commands.h"
#include "cli/optimize_settings.h"
#include "cli/optimize_summary.h"
#include "cli/terminal_review.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "formats/format_registry.h"
#include "knowledge/builtin_notes.h"
#include "knowledge/harvest.h"
#include "knowledge/retrieval.h"
#include "store/knowledge_store.h"
#include "llm/http_provider.h"
#include "service/service_setup.h"
#include "store/stored_json.h"
#include "task/registry.h"

namespace ksmith {
namespace {

// The most tokens of knowledge notes shown with the task (half that for each later lookup).
constexpr int64_t kKnowledgeTokens = 1500;

std::atomic<bool> g_stop_requested{false};

extern "C" void RequestStop(int) { g_stop_requested.store(true); }

// Ctrl-C or SIGTERM ends the run between steps, resumable; restored when the run ends.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = RequestStop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

void ApplyFlags(const OptimizeFlags& flags, OptimizeSettings& settings) {
  auto set = [](const auto& flag, auto& field) {
    if (flag) field = *flag;
  };
  set(flags.task, settings.task);
  set(flags.backend, settings.backend);
  set(flags.provider, settings.provider);
  set(flags.base_url, settings.base_url);
  set(flags.model, settings.model);
  set(flags.strategy, settings.strategy);
  set(flags.kernel, settings.kernel);
  set(flags.format, settings.format);
  set(flags.arch, settings.arch);
  set(flags.max_candidates, settings.max_candidates);
  set(flags.parallel, settings.parallel);
  set(flags.islands, settings.islands);
  set(flags.profile_every, settings.profile_every);
  // A person reviews one proposal at a time and sees each verdict before the next; stored with the
  // run, so that a resume breeds as the run began.
  if (flags.no_overlap || flags.interactive) settings.overlap = false;
  if (flags.no_knowledge) settings.knowledge = false;
  set(flags.seeds, settings.seeds);
  set(flags.temperature, settings.temperature);
  set(flags.timing_budget_s, settings.timing_budget_s);
  set(flags.build_memory_gib, settings.build_memory_gib);
  set(flags.build_cpu_s, settings.build_cpu_s);
  if (flags.budget_tokens) settings.budget_tokens = flags.budget_tokens;
  if (flags.budget_dollars) settings.budget_dollars = flags.budget_dollars;
  if (flags.budget_wall_s) settings.budget_wall_s = flags.budget_wall_s;
  if (!flags.replay_run.empty()) settings.replay_run = flags.replay_run;
  if (flags.cache) settings.response_cache = true;
}

// A failure with the exit code it deserves.
struct Failure {
  int exit_code;
  std::string message;
};

Failure Usage(std::string message) { return {kExitUsage, std::move(message)}; }
Failure Infra(std::string message) { return {kExitInfra, std::move(message)}; }
// The run store's errors exit alike in every command (cli/app.h).
Failure StoreFailure(const Error& error) { return {StoreExitCode(error), error.message}; }

class OptimizeRun {
 public:
  OptimizeRun(OptimizeFlags flags, const OptimizeEnvironment& environment)
      : flags_(std::move(flags)), environment_(environment) {}

  OptimizeOutcome Main() {
    if (auto failure = Prepare()) return {failure->exit_code, failure->message, {}, {}};
    return Execute();
  }
  OptimizeOutcome Check() {
    if (auto failure = Prepare()) return {failure->exit_code, failure->message, {}, {}};
    return {};
  }

 private:
  std::optional<Failure> Prepare();
  std::optional<Failure> ResolveSettings();
  std::optional<Failure> PrepareProvider(std::vector<RecordedCall> replayed);
  /// An HTTP provider for `name` (openai, anthropic) at `base_url` with `model`; `source` names
  /// where they were set, for the errors ("--provider", "[roles.judge] provider").
  std::optional<Failure> MakeProvider(const std::string& name, const std::string& base_url, const std::string& model,
                                      const std::string& source, std::unique_ptr<ChatProvider>& provider);
  /// The roles with a model of their own ([roles.NAME]): their providers and requests.
  std::optional<Failure> PrepareRoles();
  /// The knowledge base in the store's file: the shipped notes synced, the notes for this task
  /// and target put in `context`, and the source refine and team look notes up in.
  std::optional<Failure> PrepareKnowledge(StrategyContext& context);
  std::optional<Failure> PrepareEvaluator(nlohmann::json& device_facts);
  /// How candidates are written (settings_.format): kernelbench needs an imported KernelBench task
  /// and a model.
  std::optional<Failure> CheckFormat();
  OptimizeOutcome Execute();
  /// The evaluation service's client: the environment's, else the one this run started.
  EvalClient& client() { return environment_.client ? *environment_.client : *own_client_; }
  void Note(const std::string& line) const {
    if (!flags_.quiet) std::fprintf(stderr, "ksmith: %s\n", line.c_str());
  }

  OptimizeFlags flags_;
  OptimizeEnvironment environment_;
  OptimizeSettings settings_;
  std::unique_ptr<RunStore> store_;
  std::filesystem::path db_path_;
  RunRecord run_;
  bool resuming_ = false;
  std::optional<Task> task_;
  // Destroyed in reverse: the evaluator, then the client, then the service.
  std::unique_ptr<LocalEvalService> own_service_;
  std::unique_ptr<EvalClient> own_client_;
  std::unique_ptr<CandidateEvaluator> evaluator_;
  std::unique_ptr<ChatProvider> provider_;
  std::map<std::string, std::unique_ptr<ChatProvider>> role_providers_;  // roles with another provider or model
  std::map<std::string, RoleRoute> role_routes_;
  std::unique_ptr<KnowledgeStore> knowledge_store_;
  std::unique_ptr<StoreKnowledgeSource> knowledge_source_;
  std::string hardware_words_;  // the target, as knowledge notes name hardware
  std::string note_hardware_;   // where this run's harvested notes apply ("cuda hopper sm_90")
  std::unique_ptr<Strategy> strategy_;
  const ModelFormat* format_ = &NativeModelFormat();
  std::string task_toml_;
};

std::optional<Failure> OptimizeRun::ResolveSettings() {
  const std::filesystem::path config = ConfigFilePath(flags_.config);
  if (!config.empty()) {
    if (auto status = ApplyConfigFile(config, settings_); !status.ok()) return Usage(status.error().message);
  }
  ApplyFlags(flags_, settings_);
  return std::nullopt;
}

std::optional<Failure> OptimizeRun::Prepare() {
  auto db_path = StorePathFromFlag(flags_.db);
  if (!db_path.ok()) return StoreFailure(db_path.error());
  db_path_ = *db_path;
  auto store = RunStore::Open(db_path_);
  if (!store.ok()) return StoreFailure(store.error());
  if (Status writable = (*store)->CheckWritable(); !writable.ok()) return StoreFailure(writable.error());
  store_ = std::move(store.value());

  std::vector<RecordedCall> replayed;
  if (!flags_.resume.empty()) {
    // A resumed run keeps the settings it started with; only its limits may be raised.
    auto run = store_->GetRun(flags_.resume);
    if (!run.ok()) return StoreFailure(run.error());
    run_ = std::move(run.value());
    resuming_ = true;
    auto settings = OptimizeSettings::FromJson(run_.config);
    if (!settings.ok()) {
      return StoreFailure(DamagedStoreError(db_path_, fmt::format("run {}: its settings (runs.config)", run_.id),
                                            settings.error().message));
    }
    settings_ = std::move(settings).value();
    // What the run is may not change under it: a flag that says otherwise is refused, not ignored.
    const std::pair<const char*, std::pair<const std::optional<std::string>*, const std::string*>> fixed[] = {
        {"--task", {&flags_.task, &settings_.task}},           {"--backend", {&flags_.backend, &settings_.backend}},
        {"--strategy", {&flags_.strategy, &settings_.strategy}}, {"--provider", {&flags_.provider, &settings_.provider}},
        {"--model", {&flags_.model, &settings_.model}},         {"--format", {&flags_.format, &settings_.format}},
        {"--kernel", {&flags_.kernel, &settings_.kernel}}};
    for (const auto& [flag, values] : fixed) {
      const auto& [given, kept] = values;
      if (given->has_value() && **given != *kept) {
        return Usage(fmt::format("--resume {} continues the run as it started ({} {}); {} {} differs: drop {}, or "
                                 "start a new run without --resume",
                                 run_.id, flag, kept->empty() ? "not set" : *kept, flag, **given, flag));
      }
    }
    const bool changes_search = flags_.no_overlap || flags_.no_knowledge || flags_.islands || flags_.parallel ||
                                flags_.profile_every;
    if (changes_search) {
      return Usage(fmt::format("--resume {} continues the search as it started; --islands, --parallel, --no-overlap, "
                               "--no-knowledge and --profile-every would change it: drop them, or start a new run",
                               run_.id));
    }
    OptimizeFlags limits;
    limits.max_candidates = flags_.max_candidates;
    limits.budget_tokens = flags_.budget_tokens;
    limits.budget_dollars = flags_.budget_dollars;
    limits.budget_wall_s = flags_.budget_wall_s;
    ApplyFlags(limits, settings_);
  } else if (auto failure = ResolveSettings()) {
    return failure;
  }
  if (settings_.provider == "replay" || !settings_.replay_run.empty()) {
    if (settings_.replay_run.empty()) return Usage("--provider replay needs --replay-run <run_id>: the run whose answers are replayed");
    auto original = store_->GetRun(settings_.replay_run);
    if (!original.ok()) return StoreFailure(original.error());
    settings_.provider = "replay";
    if (settings_.task.empty()) settings_.task = original->task;
    if (!flags_.backend && !resuming_) settings_.backend = original->backend;
    if (settings_.strategy.empty()) settings_.strategy = original->strategy;
    if (settings_.model.empty()) settings_.model = original->model;
    // The recorded answers are written in the original run's format.
    if (!flags_.format && !resuming_) {
      auto recorded = OptimizeSettings::FromJson(original->config);
      if (!recorded.ok()) {
        return StoreFailure(DamagedStoreError(db_path_, fmt::format("run {}: its settings (runs.config)", original->id),
                                              recorded.error().message));
      }
      settings_.format = recorded->format;
    }
    auto calls = store_->LlmCalls(settings_.replay_run);
    if (!calls.ok()) return StoreFailure(calls.error());
    for (const auto& record : *calls) {
      replayed.push_back(
          {record.call.provider, record.call.http_status, record.call.response_body, record.call.error, record.call.request});
    }
  }
  if (settings_.task.empty()) return Usage("no task: give --task <name> (see `ksmith tasks`) or [optimize] task in ksmith.toml");
  if (auto traits = BackendRegistry::Global().Traits(settings_.backend); !traits.ok()) {
    return Usage(traits.error().message);
  }
  if (!settings_.provider.empty() && settings_.provider != "openai" && settings_.provider != "anthropic" &&
      settings_.provider != "replay") {
    return Usage(fmt::format("unknown provider '{}': choose openai (any OpenAI-compatible server), anthropic or replay",
                             settings_.provider));
  }
  bool announce_tune = false;
  if (settings_.provider.empty()) {
    if (!settings_.strategy.empty() && settings_.strategy != "tune" && settings_.strategy != "evolve") {
      return Usage(fmt::format("the {} strategy needs a model: give --provider openai|anthropic (and --model), or use "
                               "--strategy tune or evolve (which search the kernel's @tune knobs without one)",
                               settings_.strategy));
    }
    announce_tune = settings_.strategy.empty();
    if (settings_.strategy.empty()) settings_.strategy = "tune";
  } else if (settings_.strategy.empty()) {
    settings_.strategy = "refine";
  }

  TaskRegistry registry = TaskRegistry::Default();
  auto task = registry.Find(settings_.task);
  if (!task.ok()) return task.error().kind == ErrorKind::kParse ? Infra(task.error().message) : Usage(task.error().message);
  task_ = std::move(task.value());
  if (auto failure = CheckFormat()) return failure;
  // Said once the task is known to exist, so that a mistyped task gets its error alone.
  if (announce_tune) {
    Note("no model provider configured (--provider or [llm] provider in ksmith.toml): running the tune strategy "
         "over the seed kernel's @tune knobs");
  }
  auto toml = ReadFile(task_->toml_path, size_t{1} << 20);
  if (!toml.ok()) return Infra(toml.error().message);
  task_toml_ = std::move(toml.value());

  // Where the kernel and report.md go is checked now, not when they are written at the run's end.
  const std::filesystem::path output = flags_.output_dir.empty() ? std::filesystem::path("ksmith-runs")
                                                                 : std::filesystem::path(flags_.output_dir);
  if (Status writable = CheckWritableFolder(output); !writable.ok()) {
    return Usage(fmt::format("{} {}: cannot write there ({}); {}", flags_.output_dir.empty() ? "the output folder" :
                             "--output-dir", output.string(), writable.error().message,
                             flags_.output_dir.empty() ? "give --output-dir with a folder you can write"
                                                       : "name a folder you can write"));
  }

  nlohmann::json device_facts;
  if (auto failure = PrepareEvaluator(device_facts)) return failure;

  // The kernel to start from: the user's, else the task's seed for this backend.
  std::string starting_point;
  std::filesystem::path kernel_path = settings_.kernel;
  if (kernel_path.empty()) {
    // A task's seeds are kernels in ksmith's contract, no starting point for another format.
    const auto seed = task_->seeds.find(settings_.backend);
    if (format_->UsesTaskSeeds() && seed != task_->seeds.end()) kernel_path = seed->second;
  }
  if (!kernel_path.empty()) {
    auto text = ReadFile(kernel_path, kMaxCandidateBytes);
    if (!text.ok()) return Usage("--kernel: " + text.error().message);
    starting_point = std::move(text.value());
  }
  // evolve without a model searches the knobs as tune does.
  const bool searches_knobs = settings_.strategy == "tune" || (settings_.strategy == "evolve" && settings_.provider.empty());
  if (searches_knobs && starting_point.empty()) {
    return Usage(fmt::format("task '{}' has no seed kernel for {} to {}: give one with --kernel FILE (a kernel with "
                             "`// @tune` knobs)", task_->name, settings_.backend, settings_.strategy));
  }
  StrategyContext context{*task_, settings_.backend, device_facts, format_};
  context.starting_point = starting_point;
  context.tune_source = starting_point;
  context.conversation = {settings_.context_tokens, settings_.max_output_tokens};
  context.max_attempts = static_cast<size_t>(settings_.max_candidates);
  context.parallel = static_cast<size_t>(std::max(1, settings_.parallel));
  context.islands = static_cast<size_t>(std::max(1, settings_.islands));
  context.overlap = settings_.overlap;
  context.proposer = settings_.provider.empty() ? "knobs" : "model";
  if (settings_.knowledge && !settings_.provider.empty()) {
    if (auto failure = PrepareKnowledge(context)) return failure;
  }
  auto strategy = MakeStrategy(settings_.strategy, context);
  if (!strategy.ok()) return Usage(strategy.error().message);
  strategy_ = std::move(strategy.value());
  if (strategy_->needs_model()) {
    if (auto failure = PrepareProvider(std::move(replayed))) return failure;
  }
  return std::nullopt;
}

std::optional<Failure> OptimizeRun::CheckFormat() {
  auto format = FormatRegistry::Global().Find(settings_.format);
  if (!format.ok()) return Usage(format.error().message);
  format_ = *format;
  const std::string& name = format_->format().name();
  const bool searches_knobs = settings_.strategy == "tune" || (settings_.strategy == "evolve" && settings_.provider.empty());
  if (!format_->UsesTaskSeeds() && searches_knobs) {
    return Usage(fmt::format("--format {} needs a model (--provider and --model, for the refine or sample strategy): "
                             "the tune strategy searches the `// @tune` knobs of a C or CUDA kernel", name));
  }
  if (const Status usable = format_->CheckTask(*task_); !usable.ok()) {
    return Usage(fmt::format("--format {}: {}", name, usable.error().message));
  }
  return std::nullopt;
}

std::optional<Failure> OptimizeRun::PrepareEvaluator(nlohmann::json& device_facts) {
  EvalOptions options;
  options.seeds = settings_.seeds;
  options.call_timeout = std::chrono::milliseconds(settings_.eval_timeout_ms);
  options.timing_budget_s = settings_.timing_budget_s;
  if (environment_.client == nullptr) {
    auto service = StartLocalService({.backend = settings_.backend,
                                      .arch = settings_.arch,
                                      .devices = flags_.devices,
                                      .build_limits = BuildLimitsFrom(settings_.build_memory_gib, settings_.build_cpu_s),
                                      .spare_workers = true});
    if (!service.ok()) {
      return service.error().kind == ErrorKind::kInvalidArgument ? Usage(service.error().message)
                                                                 : Infra(service.error().message);
    }
    own_service_ = std::move(service.value());
    own_client_ = std::make_unique<EvalClient>(*own_service_);
  }
  EvalService& service = client().service();
  auto shared_task = std::make_shared<const Task>(*task_);
  // A task with no version for this backend is the user's mistake, said before the run starts.
  if (auto runs = service.CanRun(*shared_task, settings_.backend); !runs.ok()) return Usage(runs.error().message);
  if (auto facts = service.DeviceFacts(settings_.backend); facts.ok()) device_facts = std::move(facts.value());
  evaluator_ = MakeServiceCandidateEvaluator(client(), shared_task, settings_.backend, options);
  return std::nullopt;
}

std::optional<Failure> OptimizeRun::PrepareProvider(std::vector<RecordedCall> replayed) {
  if (settings_.provider == "replay") {
    // A replay answers every role's calls in the order they were recorded.
    provider_ = MakeReplayProvider(std::move(replayed));
    return PrepareRoles();
  }
  if (auto failure = MakeProvider(settings_.provider, settings_.base_url, settings_.model, "--provider", provider_)) {
    return failure;
  }
  return PrepareRoles();
}

std::optional<Failure> OptimizeRun::MakeProvider(const std::string& name, const std::string& base_url,
                                                 const std::string& model, const std::string& source,
                                                 std::unique_ptr<ChatProvider>& made) {
  if (name != "openai" && name != "anthropic") {
    return Usage(fmt::format("{} {}: choose openai (any OpenAI-compatible server) or anthropic", source, name));
  }
  const std::string variable = ApiKeyVariable(ProtocolOf(name));
  const char* key = std::getenv(variable.c_str());
  // A local server (vLLM, llama.cpp, Ollama) needs no key; the public endpoints do.
  if ((key == nullptr || *key == '\0') && base_url.empty()) {
    // A local server speaks the OpenAI protocol, so that is the way out only for --provider openai.
    const std::string instead =
        ProtocolOf(name) == ChatProtocol::kAnthropic
            ? "export your Anthropic key, or use --provider openai --base-url URL for a local OpenAI-compatible "
              "server (vLLM, llama.cpp, Ollama), or leave out --provider to tune the seed kernel without a model"
            : "export your key, or point --base-url at a local OpenAI-compatible server (vLLM, llama.cpp, Ollama), "
              "or leave out --provider to tune the seed kernel without a model";
    return Usage(fmt::format("{} is not set, for {} {}; {}", variable, source, name, instead));
  }
  if (model.empty()) {
    return Usage(fmt::format("{} {} needs --model NAME (or [llm] model in ksmith.toml)", source, name));
  }
  ProviderSettings provider;
  provider.provider = name;
  provider.base_url = base_url;
  provider.model = model;
  provider.api_key = key != nullptr ? key : "";
  provider.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(settings_.request_timeout_s * 1000));
  provider.max_concurrency = std::max(1, settings_.parallel);
  provider.retry.max_attempts = std::max(1, settings_.request_attempts);
  provider.price = {settings_.price_input_per_million, settings_.price_output_per_million};
  if (settings_.response_cache) {
    auto cache = CacheDirectory();
    if (!cache.ok()) return Infra(cache.error().message);
    provider.cache_directory = *cache / "llm-responses";
  }
  if (!flags_.quiet) provider.progress = [](const std::string& line) { std::fprintf(stderr, "  ... %s\n", line.c_str()); };
  made = MakeHttpProvider(std::move(provider));
  return std::nullopt;
}

std::optional<Failure> OptimizeRun::PrepareKnowledge(StrategyContext& context) {
  auto store = KnowledgeStore::Open(db_path_);
  if (!store.ok()) return StoreFailure(store.error());
  knowledge_store_ = std::move(store.value());
  if (auto synced = SyncBuiltinNotes(*knowledge_store_, DefaultKnowledgeDir()); !synced.ok()) {
    // The knowledge base is advice: without ksmith's notes (or with one malformed) a run still
    // runs, and says so.
    Note(synced.error().message + ": the prompts get only the notes already in the store");
  }
  knowledge_source_ = std::make_unique<StoreKnowledgeSource>(*knowledge_store_);
  hardware_words_ = HardwareWords(settings_.backend, context.device_facts);
  note_hardware_ = NoteHardware(settings_.backend, SmArchOf(context.device_facts));
  context.knowledge_query = {task_->category, task_->name, settings_.backend, hardware_words_, "", "", {}};
  // A small share of the context window: the task, the kernels and the feedback come first.
  const int64_t initial_tokens = std::min<int64_t>(kKnowledgeTokens, settings_.context_tokens / 32);
  context.knowledge = knowledge_source_->Retrieve(context.knowledge_query,
                                                  "Notes from ksmith's knowledge base for this task and target:",
                                                  initial_tokens);
  context.knowledge_source = knowledge_source_.get();
  context.knowledge_tokens = std::min<int64_t>(kKnowledgeTokens / 2, settings_.context_tokens / 64);
  return std::nullopt;
}

std::optional<Failure> OptimizeRun::PrepareRoles() {
  for (const auto& [role, model] : settings_.roles) {
    RoleRoute route;
    route.request.model = model.model.empty() ? settings_.model : model.model;
    route.request.max_output_tokens = static_cast<int>(settings_.max_output_tokens);
    route.request.temperature = model.temperature.value_or(settings_.temperature);
    const std::string name = model.provider.empty() ? settings_.provider : model.provider;
    // Another server (or protocol) needs a provider of its own; a model or a temperature alone
    // is a request setting, answered by the run's provider.
    const bool own_provider = settings_.provider != "replay" && (name != settings_.provider || !model.base_url.empty());
    if (own_provider) {
      const std::string base_url = model.base_url.empty() && name == settings_.provider ? settings_.base_url : model.base_url;
      if (auto failure = MakeProvider(name, base_url, route.request.model, fmt::format("[roles.{}] provider", role),
                                      role_providers_[role])) {
        return failure;
      }
      route.provider = role_providers_[role].get();
    } else {
      route.provider = provider_.get();
    }
    role_routes_[role] = route;
  }
  return std::nullopt;
}

OptimizeOutcome OptimizeRun::Execute() {
  if (resuming_) {
    if (auto status = store_->ReopenRun(run_.id); !status.ok()) {
      // Another process owns it: the user's to sort out, not a failure of ksmith's.
      return {StoreExitCode(status.error()), status.error().message, {}, {}};
    }
    Note(fmt::format("resuming run {} ({} on {}, {})", run_.id, run_.task, run_.backend, run_.strategy));
  } else {
    run_.id = RunStore::NewRunId();
    run_.task = task_->name;
    run_.backend = settings_.backend;
    run_.strategy = strategy_->name();
    run_.provider = strategy_->needs_model() ? settings_.provider : "";
    run_.model = strategy_->needs_model() ? settings_.model : "";
    run_.config = settings_.ToJson();
    if (auto status = store_->CreateRun(run_, task_toml_); !status.ok()) {
      return {StoreExitCode(status.error()), status.error().message, {}, {}};
    }
    Note(fmt::format("run {}: {} on {}, strategy {}, up to {} candidates; store {}", run_.id, run_.task, run_.backend,
                     run_.strategy, settings_.max_candidates, db_path_.string()));
  }
  BudgetLimits limits;
  limits.candidates = settings_.max_candidates;
  limits.tokens = settings_.budget_tokens;
  limits.dollars = settings_.budget_dollars;
  if (settings_.budget_wall_s) limits.wall = std::chrono::seconds(static_cast<int64_t>(*settings_.budget_wall_s));
  Budget budget(limits, {settings_.price_input_per_million, settings_.price_output_per_million},
                std::chrono::steady_clock::now());
  if (resuming_) {
    // What the interrupted session spent still counts against the run's limits.
    auto calls = store_->LlmCalls(run_.id);
    auto candidates = store_->Candidates(run_.id);
    if (!calls.ok() || !candidates.ok()) {
      const Error& error = !calls.ok() ? calls.error() : candidates.error();
      return {StoreExitCode(error), error.message, {}, {}};
    }
    for (const auto& record : *calls) {
      if (!record.call.cached) budget.ChargeCall(record.call.input_tokens, record.call.output_tokens);
    }
    for (size_t i = 0; i < candidates->size(); ++i) budget.ChargeCandidate();
  }
  LoopSettings loop_settings;
  loop_settings.request.model = settings_.model;
  loop_settings.request.max_output_tokens = static_cast<int>(settings_.max_output_tokens);
  loop_settings.request.temperature = settings_.temperature;
  loop_settings.roles = role_routes_;
  // Profiler facts are for a model to read: a knob search does not read its feedback.
  if (strategy_->needs_model()) loop_settings.profile_every = static_cast<size_t>(std::max(0, settings_.profile_every));
  loop_settings.stop_requested = &g_stop_requested;
  loop_settings.format = format_;
  loop_settings.backend = settings_.backend;
  std::optional<TerminalReviewer> reviewer;
  if (flags_.interactive) {
    if (::isatty(STDIN_FILENO) == 0) {
      Note("--interactive reads decisions from stdin, which is not a terminal: one per line (a, e, c TEXT, r N, v, s); "
           "the end of the input stops the run");
    }
    reviewer.emplace(std::cin, stderr, EditorFromEnvironment());
    loop_settings.reviewer = &*reviewer;
  }
  // A strategy that can make fewer candidates than allowed says so now, not when it runs out.
  int64_t limit = settings_.max_candidates;
  if (const auto capacity = strategy_->Capacity(); capacity && static_cast<int64_t>(*capacity) < limit) {
    Note(fmt::format("the {} strategy has {} settings to try: the run ends after {} candidates, before "
                     "--max-candidates {}",
                     strategy_->name(), *capacity, *capacity, limit));
    limit = static_cast<int64_t>(*capacity);
  }
  if (!flags_.quiet) {
    loop_settings.progress = [limit](const LoopProgress& progress) {
      std::string best = progress.best_speedup ? fmt::format("{:.2f}x", *progress.best_speedup) : "-";
      if (progress.candidate == 0) {  // where the search stands (a strategy's batch summary)
        std::fprintf(stderr, "  %s\n", progress.last.c_str());
        return;
      }
      // Each line is about one candidate and carries its number: the count never repeats or
      // jumps, whatever order a batch's verdicts come in.
      std::fprintf(stderr, "[%lld/%lld] %s | %zu of %zu decided, %zu passed | best %s | %lld tokens, $%.4f\n",
                   static_cast<long long>(progress.candidate), static_cast<long long>(limit), progress.last.c_str(),
                   progress.decided, progress.attempts, progress.passed, best.c_str(),
                   static_cast<long long>(progress.tokens), progress.cost_dollars);
    };
  }
  // A bench runs several at once and handles the signals once for all of them.
  if (environment_.handle_signals) g_stop_requested = false;
  Result<LoopOutcome> outcome = [&] {
    std::optional<StopSignals> signals;
    if (environment_.handle_signals) signals.emplace();
    OptimizeLoop loop(*store_, run_.id, *task_, *strategy_, provider_.get(), *evaluator_, budget, loop_settings);
    return loop.Run();
  }();
  if (!outcome.ok()) {
    // A store found damaged mid-run exits as it would have at the start; any other failure is ours.
    return {outcome.error().kind == ErrorKind::kDamaged ? kExitUsage : kExitInfra,
            fmt::format("run {}: {} (what finished is kept; `ksmith optimize --resume {}` continues)", run_.id,
                        outcome.error().message, run_.id),
            {},
            {}};
  }
  auto run = store_->GetRun(run_.id);
  if (!run.ok()) return {StoreExitCode(run.error()), run.error().message, {}, {}};
  const std::filesystem::path directory =
      flags_.output_dir.empty() ? std::filesystem::path("ksmith-runs") / run->id : std::filesystem::path(flags_.output_dir);
  auto calls = store_->LlmCalls(run->id);
  if (!calls.ok()) return {StoreExitCode(calls.error()), calls.error().message, {}, {}};
  auto outputs = WriteRunOutputs(directory, *run, outcome->state, *calls);
  if (!outputs.ok()) {
    return {kExitInfra, outputs.error().message, {}, {}};
  }
  OptimizeOutcome result;
  result.summary = RunSummaryJson(*run, outcome->state, *outputs, db_path_);
  if (knowledge_store_) {
    // What this run learned (its best kernel, its failures of each kind) for later runs' prompts.
    auto harvested = HarvestInto(*knowledge_store_, *run, outcome->state, task_->category, note_hardware_);
    if (harvested.ok()) {
      result.summary["knowledge_harvested"] = *harvested;
      if (*harvested > 0) Note(fmt::format("{} notes of this run's experience went into the knowledge base", *harvested));
    } else {
      Note("the run's experience could not be added to the knowledge base: " + harvested.error().message);
    }
  }
  result.rendered = RenderRunSummary(*run, outcome->state, *outputs);
  result.exit_code = outcome->status == "stopped" ? kExitInterrupted : outcome->status == "failed" ? kExitInfra : kExitOk;
  return result;
}

}  // namespace

OptimizeOutcome RunOptimize(const OptimizeFlags& flags, const OptimizeEnvironment& environment) {
  return OptimizeRun(flags, environment).Main();
}

OptimizeOutcome CheckOptimize(const OptimizeFlags& flags, const OptimizeEnvironment& environment) {
  if (environment.client == nullptr) return {kExitInfra, "CheckOptimize needs the caller's evaluation service", {}, {}};
  return OptimizeRun(flags, environment).Check();
}

}  // namespace ksmith
