// KernelBench problems as ksmith tasks (`ksmith import kernelbench`). The problems in
// tests/kernelbench/ cover each feature (parameters, sizes as dims, two outputs, fixed sizes, an
// integer and a boolean input, a list of sizes and a layer count, a random model, a restricted
// domain) and each way a file can be bad; their integer-input tasks, and five of KernelBench's own
// level-1 problems (tests/data/kernelbench), each judge an honest and a hostile C++ candidate;
// KernelBench-format ModelNew candidates (tests/kernels/kernelbench/modelnew/) get the verdict
// their first line names; levels 1 and 2 import (kernelbench_levels_test.cc, from ../shared: a
// tenth, in full with KSMITH_EXHAUSTIVE=1). Everything skips, saying why, without a python3 with torch.
#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "kernelbench_import.h"
#include "core/files.h"
#include "core/subprocess.h"
#include "task/task_loader.h"

namespace ksmith::it {
namespace {

using nlohmann::json;

Imported TestProblems() { return ImportOnce("test-problems", {(ProblemsDir() / "problems").string()}); }

std::string EnvWithTasks(const Imported& imported) { return "KSMITH_TASKS_PATH=" + imported.out.string(); }

// Eval shapes are hidden from `tasks show`; the test reads the task as the evaluator does.
Task LoadImported(const Imported& imported, const std::string& name) {
  auto task = LoadTask(imported.out / "kernelbench" / name);
  EXPECT_TRUE(task.ok()) << name << ": " << (task.ok() ? "" : task.error().message);
  return task.ok() ? std::move(task.value()) : Task{};
}

TEST(KernelBenchImport, EachTestProblemImportsOrIsRefusedWithItsReason) {
  SKIP_WITHOUT_TORCH();
  const auto results = ByFile(TestProblems().report);
  ASSERT_EQ(results.size(), 8u);
  for (const char* file : {"1_Linear_Scale.py", "2_Sum_And_Max.py", "3_Fixed_Reshape.py", "4_Gather_Rows.py",
                           "6_Log_Of_Positive.py", "7_Masked_Sum.py", "8_Layer_Stack.py"}) {
    EXPECT_EQ(results.at(file).value("status", ""), "imported") << results.at(file).dump();
  }
  EXPECT_EQ(results.at("5_Dropout_Softmax.py").value("status", ""), "skipped");
  EXPECT_NE(results.at("5_Dropout_Softmax.py").value("reason", "").find("random"), std::string::npos);
}

TEST(KernelBenchImport, ParametersBecomeInputsAndSizesBecomeDimsThatTheHiddenShapesVary) {
  SKIP_WITHOUT_TORCH();
  const Imported imported = TestProblems();
  const Task linear = LoadImported(imported, "kb_l0_001_linear_scale");
  EXPECT_EQ(linear.signature.Declaration(),
            "extern \"C\" void kb_l0_001_linear_scale(const float* x, const float* linear_weight, const float* "
            "linear_bias, float* y, int64_t batch_size, int64_t in_features, int64_t out_features)");
  std::set<int64_t> batch_sizes, in_features;
  for (const auto& shape : linear.eval_shapes) {
    batch_sizes.insert(shape.at("batch_size"));
    in_features.insert(shape.at("in_features"));
  }
  EXPECT_GE(batch_sizes.size(), 3u);
  EXPECT_GE(in_features.size(), 3u);
  EXPECT_TRUE(batch_sizes.contains(1)) << "no one-row shape";
  ASSERT_EQ(linear.inputs.size(), 3u);
  EXPECT_TRUE(linear.inputs[0].draw.IsDefault());
  ASSERT_TRUE(linear.inputs[1].draw.own.has_value()) << "a weight keeps its init's distribution";
  EXPECT_EQ(*linear.inputs[1].draw.own, Distribution::kUniform);
  // nn.Linear draws U(-1/sqrt(in_features), 1/sqrt(in_features)): 1/16 at the problem's 256.
  EXPECT_NEAR(linear.inputs[1].draw.scale, 1.0 / 16, 0.005);
  EXPECT_FALSE(linear.random_shapes);
  // Its flops are the reference's matrix product over the dims (reported, never a limit); a model
  // with no product counts none.
  EXPECT_EQ(linear.flops_expression, "2*batch_size*in_features*out_features");
  EXPECT_FALSE(linear.flops_are_minimum);
  EXPECT_EQ(linear.Flops({{"batch_size", 4}, {"in_features", 8}, {"out_features", 16}}), 2 * 4 * 8 * 16);
  EXPECT_EQ(LoadImported(imported, "kb_l0_006_log_of_positive").flops_expression, "0");

  EXPECT_EQ(LoadImported(imported, "kb_l0_002_sum_and_max").outputs.size(), 2u);

  // A list of sizes is one size per element; a layer count, which decides which parameters
  // exist, stays what the problem says.
  const Task stack = LoadImported(imported, "kb_l0_008_layer_stack");
  std::set<std::string> stack_dims(stack.dims.begin(), stack.dims.end());
  EXPECT_TRUE(stack_dims.contains("layer_sizes_0") && stack_dims.contains("layer_sizes_1")) << stack.signature.Declaration();
  EXPECT_FALSE(stack_dims.contains("depth")) << stack.signature.Declaration();
  std::set<int64_t> widths;
  for (const auto& shape : stack.eval_shapes) widths.insert(shape.at("layer_sizes_0"));
  EXPECT_GE(widths.size(), 3u);

  // Sizes that forward() fixes stay what the problem says in every shape.
  for (const auto& shape : LoadImported(imported, "kb_l0_003_fixed_reshape").eval_shapes) {
    EXPECT_EQ(shape.at("x_d0"), 32);
    EXPECT_EQ(shape.at("x_d1"), 32);
  }
  // The log's argument keeps its domain; nothing else is restricted.
  const std::string log_toml = Slurp(imported.out / "kernelbench" / "kb_l0_006_log_of_positive" / "task.toml");
  EXPECT_NE(log_toml.find("nonnegative = true"), std::string::npos);
  const std::string linear_toml = Slurp(imported.out / "kernelbench" / "kb_l0_001_linear_scale" / "task.toml");
  EXPECT_EQ(linear_toml.find("nonnegative"), std::string::npos);
}

TEST(KernelBenchImport, NoSearchPathOrReadableFolderIsTheImportersOwnTemporaryFolder) {
  SKIP_WITHOUT_TORCH();
  // That folder is deleted when the import ends: whoever made it again could put a `torch` there
  // for the reference, which runs in the evaluator, to import.
  const json analysis = json::parse(Slurp(TestProblems().out / "kernelbench" / "kb_l0_001_linear_scale" / "kernelbench.json"));
  const json& python = analysis.at("python");
  ASSERT_FALSE(python.at("sys_path").empty());
  for (const char* key : {"sys_path", "readable"}) {
    for (const auto& path : python.at(key)) {
      EXPECT_EQ(path.get<std::string>().find("kernelbench-import"), std::string::npos) << key << ": " << path;
    }
  }
  for (const auto& folder : python.at("readable")) EXPECT_TRUE(std::filesystem::is_directory(folder.get<std::string>())) << folder;
}

TEST(KernelBenchImport, IntegerAndBooleanInputsBecomeInt32InputsDrawnFromTheirRange) {
  SKIP_WITHOUT_TORCH();
  const Imported imported = TestProblems();
  // torch.randint(0, rows): the labels' bound follows the size it equals, in every hidden shape.
  const Task gather = LoadImported(imported, "kb_l0_004_gather_rows");
  ASSERT_EQ(gather.inputs.size(), 2u);
  EXPECT_EQ(gather.inputs[1].dtype, DType::kInt32);
  EXPECT_EQ(gather.inputs[1].integer_range, (std::vector<std::string>{"0", "rows"}));
  std::set<int64_t> rows;
  for (const auto& shape : gather.eval_shapes) {
    rows.insert(shape.at("rows"));
    auto draw = gather.DrawAt(gather.inputs[1], shape);
    ASSERT_TRUE(draw.ok()) << draw.error().message;
    ASSERT_TRUE(draw->integers.has_value());
    EXPECT_EQ(draw->integers->high, shape.at("rows"));
  }
  EXPECT_GE(rows.size(), 3u);
  // A bool mask: 0 and 1, whatever the sizes.
  const Task masked = LoadImported(imported, "kb_l0_007_masked_sum");
  ASSERT_EQ(masked.inputs.size(), 2u);
  EXPECT_EQ(masked.inputs[1].dtype, DType::kInt32);
  EXPECT_EQ(masked.inputs[1].integer_range, (std::vector<std::string>{"0", "2"}));
  EXPECT_NE(masked.description.find("torch.bool"), std::string::npos) << masked.description;
  EXPECT_NE(masked.baselines.at("cpu").description.find("converting int32 x1 to torch.bool"), std::string::npos)
      << "the baseline says that its timed call converts the mask";
}

TEST(KernelBenchImport, BadFilesAreSkippedEachWithWhatIsWrong) {
  SKIP_WITHOUT_TORCH();
  const Imported imported = ImportOnce("bad-files", {(ProblemsDir() / "bad").string(), "--timeout-s", "20"});
  const auto results = ByFile(imported.report);
  ASSERT_EQ(results.size(), 4u) << imported.report.dump();
  const std::map<std::string, std::string> expected = {{"no_model.py", "defines no Model"},
                                                       {"inputs_raise.py", "get_inputs() raised ValueError"},
                                                       {"not_python.py", "not Python"},
                                                       {"hangs.py", "timed out after 20 s"}};
  for (const auto& [file, reason] : expected) {
    EXPECT_EQ(results.at(file).value("status", ""), "skipped") << file;
    EXPECT_NE(results.at(file).value("reason", "").find(reason), std::string::npos) << results.at(file).dump();
  }
}

TEST(KernelBenchImport, AMissingFolderOrAPythonWithoutTorchIsAClearError) {
  const CliResult missing = RunKsmith({"import", "kernelbench", "/no/such/kernelbench"});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
  EXPECT_NE(missing.err.find("ksmith: error: /no/such/kernelbench does not exist"), std::string::npos) << missing.err;
  const CliResult no_torch = RunKsmith(
      {"import", "kernelbench", (ProblemsDir() / "problems").string(), "--python", "/bin/false", "--out",
       (CacheDir() / "kernelbench-no-torch").string()});
  EXPECT_EQ(no_torch.exit_code, 2) << no_torch.Describe();
  EXPECT_NE(no_torch.err.find("no python3 that imports torch (tried /bin/false"), std::string::npos) << no_torch.err;
}

TEST(KernelBenchCandidate, APythonCandidateForABuiltInTaskOrTheGpuIsRefusedSayingWhy) {
  const fs::path candidate = CandidatesDir() / "modelnew" / "honest_torch_ops_kb_l0_001_linear_scale.py";
  // A usage error found before anything is built, as `optimize --format kernelbench` calls it (it
  // was a compile_error verdict with exit 0).
  const CliResult built_in = RunKsmith({"eval", "--task", "vector_add", candidate.string(), "--json", "--quiet"});
  EXPECT_EQ(built_in.exit_code, 2) << built_in.Describe();
  EXPECT_NE(built_in.err.find("ksmith: error: candidate " + candidate.string()), std::string::npos) << built_in.err;
  EXPECT_NE(built_in.err.find("needs a task imported from KernelBench"), std::string::npos) << built_in.err;
}

TEST(KernelBenchRun, AFolderNamedTheKernelBenchWayGetsItsResultFormatBesideKsmithsVerdicts) {
  // Given KernelBench's run layout: two samples of problem 1 (honest torch ops, a cached output),
  // one of a problem with no imported task and a file of another name, when `kernelbench run`
  // judges the folder, then eval_results.json holds KernelBench's fields for both samples of
  // problem 1, the verdicts file one line each, and the missing problem is named with its fix.
  SKIP_WITHOUT_TORCH();
  const Imported imported = TestProblems();
  ScopedTempDir run("kb-run");
  ASSERT_TRUE(run.ok());
  const fs::path modelnew = CandidatesDir() / "modelnew";
  fs::copy_file(modelnew / "honest_torch_ops_kb_l0_001_linear_scale.py", run.path() / "level_0_problem_1_sample_0_kernel.py");
  fs::copy_file(modelnew / "hostile_cached_output_kb_l0_001_linear_scale.py", run.path() / "level_0_problem_1_sample_1_kernel.py");
  fs::copy_file(modelnew / "honest_torch_ops_kb_l0_001_linear_scale.py", run.path() / "level_0_problem_99_sample_0_kernel.py");
  WriteFileAtomic(run.path() / "notes.py", "x = 1\n");
  const CliResult result = RunKsmith({"kernelbench", "run", run.path().string(), "--json", "--timing-budget", "0.3"},
                                     {EnvWithTasks(imported)});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  // A line a sample on stderr, though it is not a terminal here (a log's reader saw nothing).
  EXPECT_NE(result.err.find("[1/2] level_0_problem_1_sample_0_kernel.py: passed"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("[2/2] level_0_problem_1_sample_1_kernel.py: wrong_output"), std::string::npos) << result.err;
  const json summary = result.Json();
  ASSERT_TRUE(summary.is_object()) << result.Describe();
  EXPECT_EQ(summary.value("samples", 0), 3);
  EXPECT_EQ(summary.value("judged", 0), 2);
  EXPECT_EQ(summary.value("correct", 0), 1);
  EXPECT_EQ(summary.value("no_custom_kernel", 0), 1);
  EXPECT_EQ(summary.value("generalize", -1), 1);  // the passing sample also works at the hidden shapes
  EXPECT_DOUBLE_EQ(summary.value("pass_at_1", 0.0), 0.5);  // one problem: one of its two samples passed
  EXPECT_DOUBLE_EQ(summary.at("fast_p").value("0", -1.0), 1.0);  // it has a correct kernel
  // The same figures as `ksmith bench`, with where and how long: it had "machine": {} and
  // "wall_s": 0.0.
  const json bench = json::parse(Slurp(run.path() / "ksmith_bench.json"), nullptr, false);
  ASSERT_TRUE(bench.is_object()) << Slurp(run.path() / "ksmith_bench.json");
  const json& machine = bench.at("settings").at("machine");
  EXPECT_FALSE(machine.value("cpu", std::string()).empty()) << machine.dump();
  EXPECT_GT(machine.value("cores", 0), 0) << machine.dump();
  EXPECT_GT(bench.at("summary").value("wall_s", 0.0), 0.0) << bench.at("summary").dump();
  EXPECT_GT(bench.at("summary").value("elapsed_s", 0.0), 0.0) << bench.at("summary").dump();
  EXPECT_EQ(summary.at("ignored_files"), json::array({"notes.py"}));
  EXPECT_EQ(summary.at("missing_tasks").at(0).value("problem_id", 0), 99);
  EXPECT_NE(result.err.find("ksmith import kernelbench <KernelBench>/level0 --problems 99"), std::string::npos) << result.err;

  const json results = json::parse(Slurp(run.path() / "eval_results.json"), nullptr, false);
  ASSERT_TRUE(results.is_object()) << Slurp(run.path() / "eval_results.json");
  ASSERT_EQ(results.size(), 1u);
  const json& samples = results.at("1");
  ASSERT_EQ(samples.size(), 2u);
  for (const char* field : {"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats",
                            "ref_runtime", "speedup"}) {
    EXPECT_TRUE(samples.at(0).contains(field)) << field;
  }
  EXPECT_TRUE(samples.at(0).at("correctness").get<bool>()) << samples.at(0).dump();
  EXPECT_GT(samples.at(0).at("runtime").get<double>(), 0.0);
  EXPECT_GT(samples.at(0).at("ref_runtime").get<double>(), 0.0);
  EXPECT_EQ(samples.at(1).at("sample_id"), 1);
  EXPECT_TRUE(samples.at(1).at("compiled").get<bool>());
  EXPECT_FALSE(samples.at(1).at("correctness").get<bool>());
  EXPECT_EQ(samples.at(1).at("metadata").at("ksmith_status"), "wrong_output");
  EXPECT_EQ(samples.at(1).at("runtime").get<double>(), -1.0);
  std::istringstream lines(Slurp(run.path() / "ksmith_verdicts.jsonl"));
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_EQ(json::parse(line).at("kernelbench").value("problem_id", 0), 1);
  }
  EXPECT_EQ(count, 2);

  // KernelBench's runtime_stats fields, and its baseline timing file under the problem's file name.
  const json& stats = samples.at(0).at("runtime_stats");
  for (const char* field : {"mean", "std", "min", "max", "num_trials", "hardware", "device"}) {
    EXPECT_TRUE(stats.contains(field)) << field << " in " << stats.dump();
  }
  EXPECT_GT(stats.value("mean", 0.0), 0.0) << stats.dump();
  EXPECT_EQ(stats.value("device", ""), "cpu");
  EXPECT_EQ(stats.value("hardware", ""), machine.value("cpu", std::string("?")));
  const json baseline = json::parse(Slurp(run.path() / "baseline_time_torch.json"), nullptr, false);
  ASSERT_TRUE(baseline.is_object()) << Slurp(run.path() / "baseline_time_torch.json");
  const json& linear = baseline.at("level0").at("1_Linear_Scale.py");
  EXPECT_GT(linear.value("mean", 0.0), 0.0) << linear.dump();
  EXPECT_GT(linear.value("num_trials", 0), 0) << linear.dump();
  EXPECT_FALSE(fs::exists(run.path() / "baseline_time_torch_compile_inductor_default.json"))
      << "no --compiled-baseline: no torch.compile timings";

  // KernelBench's analysis (benchmark_eval_analysis.py, read the way it reads) on those two files:
  // it runs without a missing key, aligns problem 1 and divides its baseline's mean by the runtime.
  SpawnOptions analysis;
  analysis.argv = {TorchPython(), (ProblemsDir() / "scripts" / "kernelbench_analysis.py").string(),
                   "--level-dir", (ProblemsDir() / "problems").string(), "--level", "0",
                   "--eval-results", (run.path() / "eval_results.json").string(),
                   "--baseline-file", (run.path() / "baseline_time_torch.json").string()};
  analysis.inherit_environment = true;
  auto analysed = RunCommand(analysis, std::chrono::seconds(60), size_t{1} << 20);
  ASSERT_TRUE(analysed.ok()) << analysed.error().message;
  ASSERT_TRUE(analysed->succeeded()) << analysed->Describe() << analysed->output;
  const json report = json::parse(analysed->output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << analysed->output;
  EXPECT_EQ(report.value("correct_count", -1), 1) << report.dump();
  EXPECT_EQ(report.value("aligned", -1), 1) << "only problem 1 was judged: " << report.dump();
  for (const auto& warning : report.at("warnings")) {
    EXPECT_EQ(warning.get<std::string>().find("1_Linear_Scale.py"), std::string::npos) << warning;
  }
  EXPECT_NEAR(report.value("geo_mean_speedup", 0.0), linear.at("mean").get<double>() / samples.at(0).at("runtime").get<double>(),
              1e-9);
  EXPECT_DOUBLE_EQ(report.at("fast_p").value("0.0", -1.0), 1.0);
}

TEST(KernelBenchImport, ImportedTasksAreListedAndPassTasksCheck) {
  SKIP_WITHOUT_TORCH();
  const Imported imported = TestProblems();
  const CliResult listed = RunKsmith({"tasks", "--json"}, {EnvWithTasks(imported)});
  ASSERT_EQ(listed.exit_code, 0) << listed.Describe();
  EXPECT_NE(listed.out.find("kb_l0_001_linear_scale"), std::string::npos);
  EXPECT_NE(listed.out.find("\"softmax\""), std::string::npos) << "the built-in tasks are still listed";
  const CliResult checked = RunKsmith({"tasks", "check", "kb_l0_001_linear_scale", "kb_l0_002_sum_and_max",
                                       "kb_l0_003_fixed_reshape", "kb_l0_004_gather_rows", "kb_l0_006_log_of_positive",
                                       "kb_l0_007_masked_sum", "--quiet"},
                                      {EnvWithTasks(imported)});
  EXPECT_EQ(checked.exit_code, 0) << checked.Describe();
}

struct Candidate {
  fs::path file;
  std::string task;
  std::string expect;
  std::optional<std::string> label;  // `# label: ` a label the verdict carries ("none": it carries none)
  std::vector<std::string> reasons;  // `# reason: ` words the verdict's reason contains (each line)
  std::vector<std::string> statics;  // `# static: ` checks among the build's static findings ("none": no finding)
  std::string generalizes = "yes";   // `# generalizes: ` for a ModelNew that passes: works at the hidden shapes
  bool worker_alive = false;         // `# worker: alive`: what the candidate raised ended as a verdict, not an abort
};

// C++ candidates (`// expect: ` first line) named <honest|hostile>_<task>.cc, and KernelBench-format
// ones in modelnew/ (`# expect: `) named <what they try>_<task>.py.
std::vector<Candidate> Candidates() {
  std::vector<Candidate> candidates;
  for (const auto& [folder, extension, marker] : {std::tuple{CandidatesDir(), ".cc", "// expect: "},
                                                  std::tuple{CandidatesDir() / "modelnew", ".py", "# expect: "}}) {
    for (const auto& file : FilesIn(folder, extension)) {
      const std::string stem = file.stem().string();
      Candidate candidate{file, stem.substr(stem.find("kb_l")), ""};
      std::istringstream lines(Slurp(file));
      std::string line;
      std::getline(lines, line);
      if (line.starts_with(marker)) candidate.expect = line.substr(std::string_view(marker).size());
      const std::string comment = std::string(marker).substr(0, std::string_view(marker).find(' ') + 1);
      while (std::getline(lines, line) && line.starts_with(comment)) {
        if (line.starts_with(comment + "label: ")) candidate.label = line.substr(comment.size() + 7);
        if (line.starts_with(comment + "reason: ")) candidate.reasons.push_back(line.substr(comment.size() + 8));
        if (line.starts_with(comment + "static: ")) candidate.statics.push_back(line.substr(comment.size() + 8));
        if (line.starts_with(comment + "generalizes: ")) candidate.generalizes = line.substr(comment.size() + 13);
        if (line == comment + "worker: alive") candidate.worker_alive = true;
      }
      candidates.push_back(candidate);
    }
  }
  return candidates;
}

void PrintTo(const Candidate& candidate, std::ostream* out) { *out << candidate.file.filename(); }

class KernelBenchCandidateTest : public ::testing::TestWithParam<Candidate> {};

TEST_P(KernelBenchCandidateTest, GetsTheExpectedVerdict) {
  SKIP_WITHOUT_TORCH();
  const Candidate& candidate = GetParam();
  ASSERT_FALSE(candidate.expect.empty()) << candidate.file << " has no `expect:` first line";
  // kb_l0_*: the problems of tests/kernelbench/problems; the rest are KernelBench's level 1.
  const bool own_problem = candidate.task.starts_with("kb_l0_");
  const Imported imported =
      own_problem ? TestProblems()
                  : ImportOnce("level1-five", {(KernelBenchCopy() / "level1").string(), "--problems", "1,19,23,40,51"});
  ASSERT_TRUE(fs::exists(imported.out / "kernelbench" / candidate.task / "task.toml"))
      << candidate.task << " was not imported: " << imported.report.dump();
  const CliResult run = RunKsmith({"eval", "--task", candidate.task, candidate.file.string(), "--json", "--quiet",
                                   "--timing-budget", "0.3"},
                                  {EnvWithTasks(imported)});
  const json verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  EXPECT_EQ(verdict.value("status", std::string()), candidate.expect)
      << "reason: " << verdict.value("reason", std::string()) << "\n" << run.Describe();
  for (const auto& reason : candidate.reasons) {
    EXPECT_NE(verdict.value("reason", std::string()).find(reason), std::string::npos)
        << "the reason lacks '" << reason << "': " << verdict.value("reason", std::string());
  }
  // What the build made, in words true of a candidate with nothing to compile: a torch-only
  // ModelNew said "compiled in 42 s".
  if (candidate.expect == "passed" && candidate.file.extension() == ".py") {
    for (const auto& stage : verdict.value("stages", json::array())) {
      if (stage.value("name", "") != "build") continue;
      const std::string summary = stage.value("details", json::object()).value("summary", "");
      if (summary == "cached") continue;
      const bool extension = Slurp(candidate.file).find("load_inline(") != std::string::npos;
      EXPECT_NE(summary.find(extension ? "1 extension built" : "no load_inline or load extension to build"),
                std::string::npos) << summary;
      EXPECT_NE(summary.find("the build sandbox ran ModelNew"), std::string::npos) << summary;
    }
  }
  if (candidate.worker_alive) {
    // The worker was not aborted: no crash in the reasons, the traceback in the failing stage's
    // output, and a worker that served on closes cleanly after a passing verdict.
    const json shapes = verdict.value("generalization", json::object());
    for (const std::string& said : {verdict.value("reason", std::string()), shapes.value("reason", std::string())}) {
      EXPECT_EQ(said.find("the worker ended"), std::string::npos) << said;
    }
    std::map<std::string, json> stages;
    for (const auto& stage : verdict.value("stages", json::array())) stages[stage.value("name", "")] = stage;
    if (candidate.expect == "passed") {
      ASSERT_TRUE(stages.contains("close")) << verdict.dump(2);
      EXPECT_EQ(stages["close"].value("outcome", ""), "ok") << stages["close"].dump();
      EXPECT_NE(shapes.value("reason", std::string()).find("Error"), std::string::npos) << shapes.dump();
    } else {
      const auto failed = std::find_if(stages.begin(), stages.end(), [](const auto& stage) {
        return stage.second.value("outcome", "") == "failed";
      });
      ASSERT_NE(failed, stages.end()) << verdict.dump(2);
      const std::string output = failed->second.value("details", json::object()).value("candidate_output", "");
      EXPECT_NE(output.find("Traceback"), std::string::npos) << failed->second.dump();
    }
  }
  if (candidate.label) {
    const auto labels = verdict.value("labels", std::vector<std::string>{});
    if (*candidate.label == "none") {
      EXPECT_TRUE(labels.empty()) << verdict.value("labels", json()).dump();
    } else {
      EXPECT_TRUE(std::any_of(labels.begin(), labels.end(), [&](const std::string& label) {
        return label.starts_with(*candidate.label);
      })) << "no label '" << *candidate.label << "' in " << verdict.value("labels", json()).dump();
    }
  }
  if (candidate.file.extension() == ".py" && candidate.expect == "passed") {
    // KernelBench's problems are fixed-shape: the hidden shapes are a property, reported.
    const json shapes = verdict.value("generalization", json::object());
    ASSERT_TRUE(shapes.contains("generalizes") && shapes["generalizes"].is_boolean()) << shapes.dump();
    EXPECT_EQ(shapes["generalizes"].get<bool>(), candidate.generalizes == "yes") << shapes.dump();
    EXPECT_GT(shapes.value("hidden_cases", 0), 0) << shapes.dump();
    const std::string said = candidate.generalizes == "yes" ? "; generalizes to the hidden shapes"
                                                            : "; does not generalize to the hidden shapes";
    EXPECT_NE(verdict.value("reason", std::string()).find(said), std::string::npos) << verdict.value("reason", std::string());
  }
  if (!candidate.statics.empty()) {
    std::set<std::string> found;
    json findings = json::array();
    for (const auto& stage : verdict.value("stages", json::array())) {
      if (stage.value("name", std::string()) != "build") continue;
      findings = stage.value("details", json::object()).value("build_sandbox", json::object()).value("static_findings", json::array());
    }
    for (const auto& finding : findings) found.insert(finding.value("check", std::string()));
    for (const auto& check : candidate.statics) {
      if (check == "none") {
        EXPECT_TRUE(found.empty()) << findings.dump();
      } else {
        EXPECT_TRUE(found.contains(check)) << "no static finding '" << check << "' in " << findings.dump();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelBenchCandidateTest, ::testing::ValuesIn(Candidates()),
                         [](const ::testing::TestParamInfo<Candidate>& info) {
                           std::string name = info.param.file.stem().string();
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace ksmith::it
