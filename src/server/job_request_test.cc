#include "server/job_request.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using json = nlohmann::json;

TEST(ParseCandidates, OneCandidateOrABatchWithDefaults) {
  std::vector<CandidateRequest> one;
  ASSERT_FALSE(ParseCandidates(json{{"task", "softmax"}, {"source", "x"}, {"client_id", "a"}}, {}, one));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].task, "softmax");
  EXPECT_EQ(one[0].client_id, "a");

  std::vector<CandidateRequest> batch;
  const json body = {{"task", "relu"},
                     {"backend", "cpu"},
                     {"options", {{"seeds", 2}, {"time", false}}},
                     {"candidates", {{{"source", "a"}}, {{"source", "b"}, {"task", "gelu"}, {"options", {{"seeds", 5}}}}}}};
  ASSERT_FALSE(ParseCandidates(body, {}, batch));
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].task, "relu");
  EXPECT_EQ(batch[0].backend, "cpu");
  EXPECT_EQ(batch[0].options.seeds, 2);
  EXPECT_EQ(batch[1].task, "gelu");
  EXPECT_EQ(batch[1].options.seeds, 5);
  EXPECT_EQ(batch[1].options.time, false);  // the envelope's other options stay
  EvalOptions options;
  batch[1].options.ApplyTo(options);
  EXPECT_EQ(options.seeds, 5);
  EXPECT_FALSE(options.time);
}

TEST(ParseCandidates, NamesTheFieldAtFault) {
  auto error_of = [](const json& body, RequestLimits limits = {}) {
    std::vector<CandidateRequest> out;
    const auto error = ParseCandidates(body, limits, out);
    return error ? *error : ApiError{0, "", "", ""};
  };
  EXPECT_EQ(error_of(json::array()).http_status, 400);
  EXPECT_EQ(error_of(json{{"task", "relu"}}).where, "body.source");
  EXPECT_EQ(error_of(json{{"source", "x"}}).where, "body.task");
  EXPECT_EQ(error_of(json{{"task", "../../etc/passwd"}, {"source", "x"}}).where, "body.task");
  EXPECT_EQ(error_of(json{{"task", "relu"}, {"source", "x"}, {"file_name", "a/b.cu"}}).where, "body.file_name");
  EXPECT_EQ(error_of(json{{"task", "relu"}, {"source", "x"}, {"colour", "red"}}).where, "body.colour");
  const ApiError seeds = error_of(json{{"task", "relu"}, {"source", "x"}, {"options", {{"seeds", 0}}}});
  EXPECT_EQ(seeds.where, "body.options.seeds");
  EXPECT_NE(seeds.message.find("from 1 to 100"), std::string::npos) << seeds.message;
  EXPECT_EQ(error_of(json{{"candidates", {{{"task", "relu"}, {"source", "x"}}, {{"task", "relu"}, {"source", 1}}}}}).where,
            "candidates[1].source");
  RequestLimits small;
  small.source_bytes = 4;
  small.candidates_per_request = 1;
  EXPECT_EQ(error_of(json{{"task", "relu"}, {"source", "12345"}}, small).http_status, 413);
  EXPECT_EQ(error_of(json{{"task", "relu"}, {"candidates", {{{"source", "a"}}, {{"source", "b"}}}}}, small).code,
            "too_many_candidates");
}

TEST(IsPlainName, RefusesAnythingThatCouldNameAnotherFolder) {
  EXPECT_TRUE(IsPlainName("kb_l1_019_relu"));
  EXPECT_TRUE(IsPlainName("kernel.cu"));
  for (const char* bad : {"", ".hidden", "a/b", "..", "a b", "a\\b", "x\n"}) EXPECT_FALSE(IsPlainName(bad)) << bad;
  EXPECT_FALSE(IsPlainName(std::string(129, 'a')));
}

}  // namespace
}  // namespace ksmith
