#include "cli/build_report.h"

#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

Verdict BuiltVerdict() {
  Verdict verdict;
  verdict.task = "matmul";
  verdict.backend = "cuda";
  verdict.candidate = "k.cu";
  verdict.provenance = {{"target", {{"arch", "sm_90a"}}}, {"compiler", "release 13.0"}};
  StageRecord audit{"audit", "ok", 0.01, {}, 0};
  verdict.stages.push_back(audit);
  StageRecord build{"build", "ok", 2.5, {}, 0.01};
  BuildFacts& facts = build.details.build.emplace();
  facts.compile_s = 2.5;
  facts.shared_object = "/cache/k.so";
  KernelResources tile;
  tile.name = "tile(float const*)";
  tile.mangled_name = "_Z4tilePKf";
  tile.arch = "sm_90a";
  tile.registers = 126;
  tile.shared_memory_bytes = 8320;
  tile.stack_frame_bytes = 16;
  tile.spill_store_bytes = 8;
  tile.spill_load_bytes = 12;
  facts.resources = std::vector<KernelResources>{tile};
  SassSummary sass;
  KernelSass counted{"tile(float const*)", "_Z4tilePKf", "sm_90a", {}};
  counted.counts.instructions = 400;
  counted.counts.fma = 256;
  counted.counts.loads = 20;
  sass.kernels.push_back(counted);
  sass.total = counted.counts;
  facts.sass = sass;
  verdict.stages.push_back(build);
  return verdict;
}

TEST(BuildReport, AVerdictWhoseBuildStageSucceededIsBuiltWithEachKernelsResourcesAndSass) {
  const Verdict verdict = BuiltVerdict();
  ASSERT_TRUE(Built(verdict));
  const auto report = BuildReportJson(verdict);
  EXPECT_EQ(report["status"], "built");
  EXPECT_EQ(report["target"]["arch"], "sm_90a");
  ASSERT_EQ(report["kernels"].size(), 1u);
  const auto& kernel = report["kernels"][0];
  EXPECT_EQ(kernel["registers"], 126);
  EXPECT_EQ(kernel["shared_memory_bytes"], 8320);
  EXPECT_EQ(kernel["spill_store_bytes"], 8);
  EXPECT_EQ(kernel["sass"]["instructions"], 400);
  EXPECT_EQ(kernel["sass"]["fma"], 256);
  EXPECT_EQ(report["sass_total"]["instructions"], 400);
  EXPECT_FALSE(report.contains("sass_error"));
  EXPECT_EQ(report["stages"].size(), 2u);

  const std::string text = RenderBuildReport(verdict);
  EXPECT_NE(text.find("built k.cu for task matmul (cuda, sm_90a) in 2.50 s"), std::string::npos) << text;
  EXPECT_NE(text.find("registers 126, shared memory 8320 B static"), std::string::npos) << text;
  EXPECT_NE(text.find("stack frame 16 B, spill stores 8 B, spill loads 12 B"), std::string::npos) << text;
  EXPECT_NE(text.find("SASS: 400 instructions: 256 FMA, 20 loads"), std::string::npos) << text;
}

TEST(BuildReport, SaysWhyThereIsNoSassAndThatTheCpuReportsNoKernels) {
  Verdict verdict = BuiltVerdict();
  BuildFacts& facts = *verdict.stages.back().details.build;
  SassSummary none;
  none.error = "cuobjdump is not installed beside nvcc or on PATH";
  facts.sass = none;
  EXPECT_EQ(BuildReportJson(verdict)["sass_error"], "cuobjdump is not installed beside nvcc or on PATH");
  EXPECT_EQ(BuildReportJson(verdict)["kernels"][0]["sass"], nullptr);
  EXPECT_NE(RenderBuildReport(verdict).find("no SASS summary: cuobjdump is not installed"), std::string::npos);

  verdict.backend = "cpu";
  facts.resources = std::vector<KernelResources>{};
  EXPECT_NE(RenderBuildReport(verdict).find("no per-kernel resources"), std::string::npos);
}

TEST(BuildReport, AFailedBuildIsNotBuiltAndKeepsItsStatusAndStages) {
  Verdict verdict = BuiltVerdict();
  StageRecord& build = verdict.stages.back();
  build.outcome = "failed";
  build.details.build->shared_object.reset();
  verdict.status = VerdictStatus::kCompileError;
  verdict.reason = "the compiler rejected the candidate";
  EXPECT_FALSE(Built(verdict));
  const auto report = BuildReportJson(verdict);
  EXPECT_FALSE(report["built"].get<bool>());
  EXPECT_EQ(report["status"], "compile_error");
  EXPECT_EQ(report["reason"], "the compiler rejected the candidate");
  EXPECT_EQ(report["stages"][1]["outcome"], "failed");
}

TEST(BuildReport, AVerdictWithNoBuildStageIsNotBuilt) {
  Verdict verdict;
  verdict.stages.push_back(StageRecord{"audit", "ok", 0, {}, 0});
  EXPECT_FALSE(Built(verdict));
  EXPECT_TRUE(BuildReportJson(verdict)["kernels"].empty());
}

}  // namespace
}  // namespace ksmith
