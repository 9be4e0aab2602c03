// The shipped notes, retrieval into prompts and the harvest of a run's experience.
#include <gtest/gtest.h>

#include "agent/conversation.h"
#include "knowledge/builtin_notes.h"
#include "knowledge/harvest.h"
#include "knowledge/retrieval.h"
#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

TEST(BuiltinNotes, EveryShippedNoteReadsAndASecondSyncChangesNothing) {
  testing::StoreFolder folder;
  auto store = KnowledgeStore::Open(folder.db_path());
  ASSERT_TRUE(store.ok());
  const auto directory = std::filesystem::path(KSMITH_SOURCE_DIR) / "knowledge";
  auto first = SyncBuiltinNotes(**store, directory);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_GE(*first, 12u);
  EXPECT_EQ(*SyncBuiltinNotes(**store, directory), 0u);
  auto notes = (*store)->List();
  ASSERT_TRUE(notes.ok());
  for (const auto& note : *notes) {
    EXPECT_EQ(note.origin.rfind("builtin:", 0), 0u) << note.title;
    const std::string first_word = note.hardware.substr(0, note.hardware.find(' '));
    EXPECT_TRUE(note.hardware.empty() || first_word == "cpu" || first_word == "cuda") << note.title << ": " << note.hardware;
  }
  EXPECT_EQ(SyncBuiltinNotes(**store, folder.db_path().parent_path() / "nowhere").error().kind, ErrorKind::kNotFound);
}

TEST(BuiltinNotes, AMalformedNoteSaysWhichFileAndLine) {
  EXPECT_NE(ParseNoteFile("title: x\nbody without separator\n", "a.md").error().message.find("a.md:2"), std::string::npos);
  EXPECT_NE(ParseNoteFile("title: x\ncolour: red\n---\nb\n", "b.md").error().message.find("unknown header key 'colour'"),
            std::string::npos);
  EXPECT_NE(ParseNoteFile("title: x\n---\n\n", "c.md").error().message.find("no body"), std::string::npos);
  EXPECT_NE(ParseNoteFile("tags: y\n---\nb\n", "d.md").error().message.find("no title"), std::string::npos);
  auto note = ParseNoteFile("title: T\ntags: a b\nhardware: cuda hopper\n---\nLine 1\nLine 2\n", "e.md");
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(note->body, "Line 1\nLine 2");
  EXPECT_EQ(note->origin, "builtin:e.md");
}

TEST(Retrieval, ANoteForAnotherBackendOrGpuIsNeverShown) {
  KnowledgeNote any, cuda, hopper, cpu;
  cuda.hardware = "cuda";
  hopper.hardware = "cuda hopper h100 h200";
  cpu.hardware = "cpu";
  const std::string h200 = HardwareWords("cuda", {{"name", "NVIDIA H200"}, {"compute_capability", "9.0"}});
  EXPECT_EQ(h200, "cuda NVIDIA H200 hopper sm_90");
  const std::string a100 = HardwareWords("cuda", {{"name", "NVIDIA A100-SXM4-80GB"}, {"compute_capability", "8.0"}});
  const std::string xeon = HardwareWords("cpu", {{"cpu_model", "Intel(R) Xeon(R)"}});
  EXPECT_TRUE(AppliesTo(any, "cpu", xeon));
  EXPECT_TRUE(AppliesTo(cuda, "cuda", a100));
  EXPECT_FALSE(AppliesTo(cuda, "cpu", xeon));
  EXPECT_TRUE(AppliesTo(hopper, "cuda", h200));
  EXPECT_FALSE(AppliesTo(hopper, "cuda", a100));
  EXPECT_TRUE(AppliesTo(cpu, "cpu", xeon));
  EXPECT_FALSE(AppliesTo(cpu, "cuda", h200));
  KnowledgeNote xeon_note;
  xeon_note.hardware = "cpu Xeon(R)";
  EXPECT_TRUE(AppliesTo(xeon_note, "cpu", xeon)) << "both sides split alike";
  // A harvested note names the architecture, not words every GPU shares.
  KnowledgeNote harvested;
  harvested.hardware = NoteHardware("cuda", "sm_90a");
  EXPECT_EQ(harvested.hardware, "cuda hopper sm_90");
  EXPECT_TRUE(AppliesTo(harvested, "cuda", h200));
  EXPECT_FALSE(AppliesTo(harvested, "cuda", a100));
  EXPECT_EQ(NoteHardware("cpu", ""), "cpu");
  EXPECT_EQ(SmArchOf({{"compute_capability", "8.6"}}), "sm_86");
}

TEST(Retrieval, NotesFitTheirBudgetWholeAndAShorterOneTakesABigOnesPlace) {
  std::vector<KnowledgeNote> notes(3);
  notes[0].title = "Huge";
  notes[0].body = std::string(8000, 'x');
  notes[1].title = "Small";
  notes[1].body = "Short advice.";
  notes[2].title = "Medium";
  notes[2].body = std::string(400, 'y');
  const std::string text = RenderNotes(notes, "Notes:", 200);
  EXPECT_LE(EstimateTokens(text), 200);
  EXPECT_EQ(text.find("### Huge"), std::string::npos);
  EXPECT_NE(text.find("### Small\nShort advice."), std::string::npos);
  EXPECT_NE(text.find("### Medium"), std::string::npos);
  EXPECT_EQ(RenderNotes(notes, "Notes:", 5), "") << "nothing fits: nothing said";

  RetrievalQuery query{"normalization", "add_layernorm", "cuda", "cuda h200", "memory", "wrong_output", {}};
  const std::string words = SearchWords(query);
  for (const char* word : {"normalization", "add", "layernorm", "bandwidth", "wrong_output", "remainder"}) {
    EXPECT_NE(words.find(word), std::string::npos) << word;
  }
}

TEST(Retrieval, TheStoreSourceFiltersExcludesAndRanks) {
  testing::StoreFolder folder;
  auto store = KnowledgeStore::Open(folder.db_path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(SyncBuiltinNotes(**store, std::filesystem::path(KSMITH_SOURCE_DIR) / "knowledge").ok());
  const StoreKnowledgeSource source(**store);
  RetrievalQuery cpu_query{"elementwise", "relu", "cpu", "cpu intel", "memory", "", {}};
  const std::string cpu_notes = source.Retrieve(cpu_query, "Notes:", 2000);
  EXPECT_NE(cpu_notes.find("### SIMD on the CPU"), std::string::npos) << cpu_notes;
  EXPECT_EQ(cpu_notes.find("float4"), std::string::npos) << "a CUDA note on a CPU run";
  RetrievalQuery gpu_query{"gemm", "matmul", "cuda", "cuda NVIDIA A100 ampere sm_80", "compute", "", {}};
  const std::string gpu_notes = source.Retrieve(gpu_query, "Notes:", 4000);
  EXPECT_NE(gpu_notes.find("### Tiling GEMM-like kernels"), std::string::npos) << gpu_notes;
  EXPECT_EQ(gpu_notes.find("### Hopper"), std::string::npos) << "a Hopper note on an A100";
  gpu_query.exclude_titles = {"Tiling GEMM-like kernels in shared memory and registers"};
  EXPECT_EQ(source.Retrieve(gpu_query, "Notes:", 4000).find("### Tiling GEMM-like kernels"), std::string::npos);
}

TEST(Harvest, TheBestKernelAndEachKindOfFailureWithItsFix) {
  RunRecord run = testing::SampleRun("r9");
  RunState state;
  auto attempt = [&state](int64_t number, const std::string& status, std::optional<double> speedup,
                          std::optional<int64_t> parent) {
    Attempt a;
    a.number = number;
    a.candidate_id = 100 + number;
    a.parent_id = parent;
    a.status = status;
    a.speedup = speedup;
    a.source = "// kernel " + std::to_string(number);
    a.explanation = "explanation " + std::to_string(number);
    Verdict& verdict = a.verdict.emplace();
    verdict.status = status == "passed" ? VerdictStatus::kPassed : VerdictStatus::kWrongOutput;
    verdict.reason = status == "passed" ? "" : "3 of 185 elements off";
    if (speedup) {
      Timing& timing = verdict.timing.emplace();
      timing.speedup = {*speedup, *speedup, *speedup};
      timing.bound_by = "memory";
    }
    state.attempts.push_back(std::move(a));
  };
  attempt(1, "wrong_output", std::nullopt, std::nullopt);
  attempt(2, "passed", 1.2, 101);
  attempt(3, "wrong_output", std::nullopt, 102);
  attempt(4, "passed", 1.8, 102);
  const auto notes = HarvestRun(run, state, "elementwise", "cpu intel");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].kind, "experience");
  EXPECT_EQ(notes[0].origin, "run:r9#best");
  EXPECT_NE(notes[0].title.find("1.80x, the best of run r9 (candidate 4)"), std::string::npos) << notes[0].title;
  EXPECT_NE(notes[0].tags.find("memory-bound"), std::string::npos);
  EXPECT_NE(notes[0].body.find("// kernel 4"), std::string::npos);
  EXPECT_EQ(notes[1].origin, "run:r9#1") << "the first wrong output";
  EXPECT_NE(notes[1].title.find("wrong_output and its fix"), std::string::npos) << notes[1].title;
  EXPECT_NE(notes[1].body.find("Fixed by candidate 2: explanation 2"), std::string::npos) << notes[1].body;
  testing::StoreFolder folder;
  auto store = KnowledgeStore::Open(folder.db_path());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*HarvestInto(**store, run, state, "elementwise", "cpu"), 2u);
  EXPECT_EQ(*HarvestInto(**store, run, state, "elementwise", "cpu"), 0u) << "a run harvested twice adds nothing";
}

}  // namespace
}  // namespace ksmith
