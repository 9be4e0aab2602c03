// Test helpers shared by the store's tests: a store in a fresh temporary folder and records with
// every field set to something other than its default, so that a lost field shows.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "store/run_store.h"

namespace ksmith::testing {

inline constexpr char kSampleTaskToml[] = "name = \"vector_add\"\n[signature]\nargs = [\"x\", \"y\", \"out\"]\n";

/// A temporary folder holding runs.db; the store itself is opened by each test.
class StoreFolder {
 public:
  StoreFolder() : folder_("ksmith-store-test") {}
  std::filesystem::path db_path() const { return folder_.path() / "runs.db"; }
  std::unique_ptr<RunStore> Open() const {
    auto store = RunStore::Open(db_path());
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(store).value() : nullptr;
  }

 private:
  ScopedTempDir folder_;
};

inline RunRecord SampleRun(const std::string& id, const std::string& created_at = "") {
  RunRecord run;
  run.id = id;
  run.task = "vector_add";
  run.backend = "cpu";
  run.strategy = "refine";
  run.provider = "openai";
  run.model = "gpt-test";
  run.config = {{"candidates", 20}, {"temperature", 0.7}};
  run.created_at = created_at;
  return run;
}

/// A call with a reply and every field set.
inline LlmCall SampleCall(const std::string& reply_content = "```cpp\nkernel\n```") {
  LlmCall call;
  call.provider = "openai";
  call.model = "gpt-test";
  call.role = "coder";
  call.request = {{"model", "gpt-test"},
                  {"messages", {{{"role", "system"}, {"content", "You write kernels."}},
                                {{"role", "user"}, {"content", "Make vector_add faster."}}}},
                  {"max_tokens", 8192},
                  {"temperature", 0.7}};
  call.response_body = R"({"choices":[{"message":{"content":"..."}}]})";
  call.http_status = 200;
  call.attempts = 2;
  call.latency_s = 3.25;
  call.cached = true;
  call.reply = ChatReply{reply_content, "stop", 120, 340};
  call.provider_exhausted = false;
  call.input_tokens = 150;
  call.output_tokens = 360;
  call.cost_dollars = 0.0125;
  return call;
}

inline CandidateRecord SampleCandidate(const std::string& run_id, std::optional<int64_t> llm_call_id = std::nullopt,
                                       std::optional<int64_t> parent_id = std::nullopt) {
  CandidateRecord candidate;
  candidate.run_id = run_id;
  candidate.parent_id = parent_id;
  candidate.origin = llm_call_id ? "llm" : "seed";
  candidate.role = llm_call_id ? "coder" : "";
  candidate.llm_call_id = llm_call_id;
  candidate.source = "extern \"C\" void vector_add() {}\n";
  candidate.explanation = "unrolled by four";
  return candidate;
}

/// What `ksmith eval --json` prints, cut to the fields the store reads.
inline nlohmann::json SampleVerdict(const std::string& status, std::optional<double> speedup = std::nullopt) {
  nlohmann::json verdict = {{"status", status}, {"reason", status + " (test)"}, {"task", "vector_add"},
                            {"backend", "cpu"}, {"stages", nlohmann::json::array()}};
  if (speedup) {
    verdict["speedup"] = *speedup;
    verdict["timing"] = {{"speedup", {{"median", *speedup}, {"ci95", {*speedup - 0.1, *speedup + 0.1}}}}};
  }
  return verdict;
}

}  // namespace ksmith::testing
