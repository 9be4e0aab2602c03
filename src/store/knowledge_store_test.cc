#include "store/knowledge_store.h"

#include <gtest/gtest.h>

#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

KnowledgeNote Note(const std::string& title, const std::string& body, const std::string& tags = "",
                   const std::string& origin = "") {
  KnowledgeNote note;
  note.title = title;
  note.body = body;
  note.tags = tags;
  note.origin = origin;
  return note;
}

class KnowledgeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = KnowledgeStore::Open(folder_.db_path());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store.value());
  }
  testing::StoreFolder folder_;
  std::unique_ptr<KnowledgeStore> store_;
};

TEST_F(KnowledgeStoreTest, SearchRanksTitleAndTagMatchesFirstAndStems) {
  ASSERT_TRUE(store_->Add(Note("Online softmax", "Keep a running max and sum.", "softmax reduction")).ok());
  ASSERT_TRUE(store_->Add(Note("Tiling", "A GEMM mentions softmax once in passing.", "gemm")).ok());
  ASSERT_TRUE(store_->Add(Note("Vectorize the loads", "Use float4.", "memory-bound elementwise")).ok());
  auto found = store_->Search({"softmax", "", 10});
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].title, "Online softmax");
  EXPECT_LT((*found)[0].score, (*found)[1].score) << "bm25: lower is better";
  // Porter stemming: "vectorized" finds "Vectorize".
  auto stemmed = store_->Search({"vectorized", "", 10});
  ASSERT_TRUE(stemmed.ok());
  ASSERT_EQ(stemmed->size(), 1u);
  EXPECT_EQ((*stemmed)[0].title, "Vectorize the loads");
  auto limited = store_->Search({"softmax float4", "", 1});
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 1u);
}

TEST_F(KnowledgeStoreTest, AQueryIsWordsNeverFts5Syntax) {
  ASSERT_TRUE(store_->Add(Note("Near misses", "OR AND NOT NEAR", "syntax")).ok());
  for (const char* query : {"\"unbalanced", "NEAR(a b", "a* OR", "col:value", "-x ^y"}) {
    auto found = store_->Search({query, "", 10});
    EXPECT_TRUE(found.ok()) << query << ": " << found.error().message;
  }
  EXPECT_EQ(AnyWordQuery("Tile, the K-loop!"), "\"tile\" OR \"the\" OR \"loop\"");
  EXPECT_EQ(AnyWordQuery("?? !"), "");
  auto none = store_->Search({"??", "", 10});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(KnowledgeStoreTest, PutReplacesANoteOfTheSameOriginOnlyWhenItChanged) {
  auto first = store_->Put(Note("Coalescing", "v1", "cuda", "builtin:coalescing.md"));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*store_->Put(Note("Coalescing", "v1", "cuda", "builtin:coalescing.md")));
  EXPECT_TRUE(*store_->Put(Note("Coalescing", "v2", "cuda", "builtin:coalescing.md")));
  auto all = store_->List();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].body, "v2");
  EXPECT_EQ((*all)[0].kind, "technique");
  EXPECT_FALSE((*all)[0].created_at.empty());
}

TEST_F(KnowledgeStoreTest, KindsListingRemovalAndBadNotes) {
  KnowledgeNote experience = Note("relu on cuda: 1.2x", "Measured...", "elementwise", "run:r1#3");
  experience.kind = "experience";
  auto id = store_->Add(experience);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->Add(Note("A technique", "Body.")).ok());
  EXPECT_EQ(store_->List("experience")->size(), 1u);
  EXPECT_EQ(store_->List("technique")->size(), 1u);
  EXPECT_EQ(store_->Search({"measured", "technique", 10})->size(), 0u);
  ASSERT_TRUE(store_->Remove(*id).ok());
  EXPECT_EQ(store_->Remove(*id).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->Add(Note("", "body")).error().kind, ErrorKind::kInvalidArgument);
  KnowledgeNote odd = Note("t", "b");
  odd.kind = "rumour";
  EXPECT_EQ(store_->Add(odd).error().kind, ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace ksmith
