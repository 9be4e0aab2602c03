// `eval --sweep`: the grid of sizes, the task timed at each, and the table's figures.
#include "cli/eval_sweep.h"

#include <gtest/gtest.h>

#include "eval/backend_registry.h"

namespace ksmith {
namespace {

// rows x cols in, the same out, with a derived dim; 2 flops an element.
Task RowsColsTask() {
  Task task;
  task.name = "scale";
  task.dims = {"rows", "cols", "half"};
  task.derived_dims = {{"half", "cols / 2"}};
  task.bytes_expression = "8 * rows * cols";
  task.flops_expression = "2 * rows * cols";
  // As the loader keeps them: with their derived dims.
  task.bench_shape = {{"rows", 1024}, {"cols", 4096}, {"half", 2048}};
  task.cuda = CudaTaskSpec{.bench_shape = {{"rows", 8192}, {"cols", 8192}, {"half", 4096}}};
  return task;
}

TEST(PlanSweep, EveryCombinationOverTheBackendsBenchShapeFirstDimSlowest) {
  const Task task = RowsColsTask();
  auto points = PlanSweep(task, {"rows=1,2", "cols=10,20,30"}, task.bench_shape);
  ASSERT_TRUE(points.ok()) << points.error().message;
  ASSERT_EQ(points->size(), 6u);
  // Each point's derived dim follows its swept dims, not the bench shape's.
  EXPECT_EQ(points->at(0), (DimValues{{"rows", 1}, {"cols", 10}, {"half", 5}}));
  EXPECT_EQ(points->at(2), (DimValues{{"rows", 1}, {"cols", 30}, {"half", 15}}));
  EXPECT_EQ(points->at(3), (DimValues{{"rows", 2}, {"cols", 10}, {"half", 5}}));
  // A dim not swept keeps the timed shape's value, the GPU's on a GPU backend.
  auto gpu = PlanSweep(task, {"rows=7"}, TraitsOf("cuda").prompt.timed_shape(task));
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(gpu->at(0), (DimValues{{"rows", 7}, {"cols", 8192}, {"half", 4096}}));
  auto cpu = PlanSweep(task, {"rows=7"}, TraitsOf("cpu").prompt.timed_shape(task));
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->at(0), (DimValues{{"rows", 7}, {"cols", 4096}, {"half", 2048}}));
}

TEST(PlanSweep, EachBadItemIsAnErrorThatSaysWhatToWrite) {
  const Task task = RowsColsTask();
  const auto message = [&](std::vector<std::string> items) {
    auto points = PlanSweep(task, items, task.bench_shape);
    return points.ok() ? std::string("accepted") : points.error().message;
  };
  EXPECT_NE(message({"rows"}).find("write it as DIM=V1,V2"), std::string::npos);
  EXPECT_NE(message({"depth=2"}).find("has no dim depth; its dims are rows, cols, half"), std::string::npos);
  EXPECT_NE(message({"half=2"}).find("computed from the other dims"), std::string::npos);
  EXPECT_NE(message({"rows=2,x"}).find("'x' is not a positive whole number"), std::string::npos);
  EXPECT_NE(message({"rows=0"}).find("'0' is not a positive"), std::string::npos);
  EXPECT_NE(message({"rows=2,"}).find("'' is not a positive"), std::string::npos);
  EXPECT_NE(message({"rows=1", "rows=2"}).find("swept twice"), std::string::npos);
  EXPECT_NE(message({"rows=1,2,3,4,5,6,7,8", "cols=1,2,3,4,5,6,7,8,9"}).find("72 points is more than 64"),
            std::string::npos);
  // A dim grows at most 16-fold (so no product of dims overflows), and a point moves at most 16x the
  // bench shape's bytes or 1 GiB, the larger: 16384 x 4096 floats twice is 512 MiB; x 65536 is 8 GiB.
  EXPECT_EQ(message({"rows=16384"}), "accepted");
  EXPECT_NE(message({"rows=16384", "cols=65536"}).find("moves more than 1073741824 bytes"), std::string::npos);
  EXPECT_NE(message({"rows=16385"}).find("16385 is more than 16x the bench shape's rows (1024)"), std::string::npos);
  EXPECT_NE(message({"rows=4611686018427387904"}).find("sweep smaller sizes"), std::string::npos);
}

TEST(TaskAtBenchShape, SetsTheTimedShapeOnEveryBackendAndNothingElse) {
  const Task task = RowsColsTask();
  const Task at = TaskAtBenchShape(task, {{"rows", 3}, {"cols", 5}});
  EXPECT_EQ(at.bench_shape, (DimValues{{"rows", 3}, {"cols", 5}}));
  EXPECT_EQ(at.cuda->bench_shape, at.bench_shape);
  EXPECT_EQ(at.bytes_expression, task.bytes_expression);
}

Verdict Timed(double candidate_us, double baseline_us) {
  Verdict verdict;
  verdict.status = VerdictStatus::kPassed;
  verdict.timing = MakeTiming({candidate_us, candidate_us, candidate_us}, {baseline_us, baseline_us, baseline_us}, "b");
  return verdict;
}

TEST(SweepFigures, GigabytesAndGigaflopsPerSecondFollowTheTaskAtEachShape) {
  const Task task = RowsColsTask();
  Verdict wrong;
  wrong.status = VerdictStatus::kWrongOutput;
  wrong.reason = "wrong output at rows=2048";
  const std::vector<SweepRow> rows = {{{{"rows", 1000}, {"cols", 1000}}, Timed(8, 16)},
                                      {{{"rows", 2048}, {"cols", 1000}}, wrong}};
  const nlohmann::json json = SweepJson(task, rows);
  const nlohmann::json& first = json.at("points").at(0);
  // 8e6 bytes in 8 us: 1000 GB/s; 2e6 flops in 8 us: 250 GFLOP/s; the baseline half of each.
  EXPECT_DOUBLE_EQ(first.at("candidate_gbs").get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(first.at("baseline_gbs").get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(first.at("candidate_gflops").get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(first.at("speedup").get<double>(), 2.0);
  EXPECT_EQ(first.at("shape").at("rows"), 1000);
  const nlohmann::json& second = json.at("points").at(1);
  EXPECT_EQ(second.at("status"), "wrong_output");
  EXPECT_FALSE(second.contains("candidate_us")) << "a failed point has no time";

  const std::string csv = SweepCsv(task, rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "rows,cols,status,candidate_us,baseline_us,speedup,speedup_low,speedup_high,comparison,"
            "candidate_gbs,baseline_gbs,candidate_gflops,baseline_gflops");
  EXPECT_NE(csv.find("\n1000,1000,passed,8,16,2,2,2,faster,1000,500,250,125\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2048,1000,wrong_output,,,,,,,,,,\n"), std::string::npos) << csv;

  const std::string table = SweepTable(task, rows);
  EXPECT_NE(table.find("GFLOP/s cand/base"), std::string::npos) << table;
  EXPECT_NE(table.find("2.00x [2.00, 2.00] faster"), std::string::npos) << table;
  EXPECT_NE(table.find("wrong output at rows=2048"), std::string::npos) << table;
  Task no_flops = task;
  no_flops.flops_expression = "0";  // a task that counts none (memory-bound) has no GFLOP/s column
  EXPECT_EQ(SweepTable(no_flops, rows).find("GFLOP/s"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
