#include "service/redis/job_codec.h"

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

FormatLookup NoFormats() {
  return [](std::string_view) -> const CandidateFormat* { return nullptr; };
}

EvalJob VectorAddJob() {
  auto task = TaskRegistry::Default().Find("vector_add");
  EXPECT_TRUE(task.ok());
  EvalJob job;
  job.id = "j-1";
  job.task = std::make_shared<const Task>(std::move(task.value()));
  job.backend = "cpu";
  job.candidate.path = "k.cpp";
  job.candidate.text = "extern \"C\" void vector_add() {}";
  job.options.seeds = 2;
  job.options.time = false;
  job.options.timing_budget_s = 0.5;
  job.options.fixed_seed = 0xfedcba9876543210ULL;  // past 2^53: travels as text
  job.options.sandbox = false;
  return job;
}

TEST(JobCodec, AJobTravelsWholeAndAWorkerAlwaysSandboxesIt) {
  const EvalJob job = VectorAddJob();
  const auto decoded = DecodeJob(nlohmann::json::parse(EncodeJob(job).dump()), TaskRegistry::Default(), NoFormats());
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->id, "j-1");
  EXPECT_EQ(decoded->task->name, "vector_add");
  EXPECT_EQ(decoded->candidate.text, job.candidate.text);
  EXPECT_EQ(decoded->options.seeds, 2);
  EXPECT_FALSE(decoded->options.time);
  EXPECT_DOUBLE_EQ(decoded->options.timing_budget_s, 0.5);
  EXPECT_EQ(decoded->options.fixed_seed, job.options.fixed_seed);
  EXPECT_TRUE(decoded->options.sandbox);
}

TEST(JobCodec, RefusesATaskThatDiffersFromTheServersOrAnUnknownFormat) {
  nlohmann::json encoded = EncodeJob(VectorAddJob());
  encoded["task"]["toml_sha256"] = "0000";
  auto differs = DecodeJob(encoded, TaskRegistry::Default(), NoFormats());
  ASSERT_FALSE(differs.ok());
  EXPECT_NE(differs.error().message.find("differs from the server's"), std::string::npos) << differs.error().message;

  encoded = EncodeJob(VectorAddJob());
  encoded["candidate"]["format"] = "fortran";
  auto format = DecodeJob(encoded, TaskRegistry::Default(), NoFormats());
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.error().message.find("'fortran' is unknown"), std::string::npos);

  encoded = EncodeJob(VectorAddJob());
  encoded["task"] = {{"name", "no_such_task"}, {"directory", ""}};
  EXPECT_FALSE(DecodeJob(encoded, TaskRegistry::Default(), NoFormats()).ok());
  EXPECT_FALSE(DecodeJob(nlohmann::json{{"id", 3}}, TaskRegistry::Default(), NoFormats()).ok());
}

}  // namespace
}  // namespace ksmith
