// The feed of prepared cases: order, the bound on what it holds ahead, and how it stops.
#include "eval/case_feed.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ksmith {
namespace {

std::vector<CaseSpec> Specs(int count) {
  std::vector<CaseSpec> specs;
  for (int i = 0; i < count; ++i) specs.push_back(CaseSpec{{}, Distribution::kNormal, static_cast<uint64_t>(i), "case " + std::to_string(i)});
  return specs;
}

// A case whose inputs are `bytes` long and name the seed it came from.
PreparedCase Inputs(const CaseSpec& spec, size_t bytes) {
  PreparedCase prepared;
  prepared.inputs.assign(bytes, static_cast<char>('a' + spec.seed));
  return prepared;
}

// Prepares inputs of `bytes`, counting the cases prepared.
CaseFeed::Prepare Counting(std::atomic<int>& prepared, size_t bytes) {
  return [&prepared, bytes](const CaseSpec& spec, PreparedCase) {
    ++prepared;
    return Inputs(spec, bytes);
  };
}

// Waits (up to 10 s, for a loaded machine) until `count` cases were prepared, then a little
// longer, so that a feed that would run past its bound has the time to.
void SettleAt(const std::atomic<int>& prepared, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (prepared.load() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

Status Double(PreparedCase& prepared) {
  prepared.expected = {std::vector<double>(prepared.inputs.size() / sizeof(double), 2.0)};
  return {};
}

TEST(CaseFeed, GivesEveryCaseInOrderWithItsAnswer) {
  CaseFeed feed(Specs(5), nullptr, [](const CaseSpec& spec, PreparedCase) { return Inputs(spec, 64); }, Double, 1 << 20);
  for (int i = 0; i < 5; ++i) {
    auto next = feed.Next();
    ASSERT_TRUE(next.ok()) << next.error().message;
    EXPECT_EQ(next->inputs.front(), 'a' + i);
    ASSERT_EQ(next->expected.size(), 1u);
    EXPECT_EQ(next->expected[0].size(), 8u);
    EXPECT_EQ(PreparedBytes(*next), 64u + 8 * sizeof(double));
    EXPECT_TRUE(next->input_rms.has_value());  // computed ahead, not while the candidate is judged
  }
  EXPECT_THROW((void)feed.Next(), std::logic_error);
}

TEST(CaseFeed, HoldsNoMoreThanItsBoundPlusOneCaseAhead) {
  std::atomic<int> prepared{0};
  // Each case holds 128 + 128 bytes; a bound of 600 lets three be ready before the taker comes.
  CaseFeed feed(Specs(10), nullptr, Counting(prepared, 128), Double, 600);
  SettleAt(prepared, 3);
  EXPECT_EQ(prepared.load(), 3);
  ASSERT_TRUE(feed.Next().ok());
  SettleAt(prepared, 4);
  EXPECT_EQ(prepared.load(), 4);
  for (int i = 1; i < 10; ++i) ASSERT_TRUE(feed.Next().ok());
  EXPECT_EQ(prepared.load(), 10);
}

TEST(CaseFeed, StopsAtTheFirstFailedAnswerAndSaysWhichCase) {
  int answered = 0;
  CaseFeed feed(Specs(5), nullptr, [](const CaseSpec& spec, PreparedCase) { return Inputs(spec, 16); },
                [&](PreparedCase& prepared) -> Status {
                  if (++answered == 3) return MakeError(ErrorKind::kInternal, "the reference worker failed");
                  return Double(prepared);
                },
                1 << 20);
  ASSERT_TRUE(feed.Next().ok());
  ASSERT_TRUE(feed.Next().ok());
  auto third = feed.Next();
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().message, "case 2: the reference worker failed");
  EXPECT_EQ(answered, 3);
}

TEST(CaseFeed, AFailedStartIsTheAnswerForTheFirstCase) {
  bool prepared_any = false;
  CaseFeed feed(Specs(2), [] { return Status(MakeError(ErrorKind::kIo, "cannot load the reference")); },
                [&](const CaseSpec& spec, PreparedCase) {
                  prepared_any = true;
                  return Inputs(spec, 8);
                },
                Double, 1 << 20);
  auto first = feed.Next();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().message, "cannot load the reference");
  EXPECT_FALSE(prepared_any);
}

TEST(CaseFeed, ClosesWithCasesNeverTaken) {
  std::atomic<int> prepared{0};
  {
    CaseFeed feed(Specs(100), nullptr, Counting(prepared, 64), Double, 256);
    ASSERT_TRUE(feed.Next().ok());
  }  // a verdict that failed at its first case: the feed stops instead of preparing the rest
  EXPECT_LT(prepared.load(), 100);
}

TEST(CaseFeed, ALargeCaseIsPreparedInTheMemoryOfOneHandedBack) {
  // Cases of 4096 + 4096 bytes against a bound of 1024: each is "large", as a problem's own sizes are.
  std::vector<std::string> spares;  // what each preparation was handed, by the feed's thread only
  CaseFeed feed(Specs(4), nullptr,
                [&](const CaseSpec& spec, PreparedCase spare) {
                  spares.push_back(spare.inputs);
                  PreparedCase prepared = Inputs(spec, 4096);
                  return prepared;
                },
                Double, 1024);
  auto first = feed.Next();
  auto second = feed.Next();
  ASSERT_TRUE(first.ok() && second.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the third waits for memory
  feed.Recycle(std::move(first.value()));
  auto third = feed.Next();
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->inputs.front(), 'c');
  ASSERT_EQ(spares.size(), 3u);
  EXPECT_TRUE(spares[0].empty());
  EXPECT_TRUE(spares[1].empty());
  EXPECT_EQ(spares[2], std::string(4096, 'a'));  // the first case's buffer, handed back
}

TEST(CaseFeed, ACaseHandedBackAfterTheLastBeganIsNotHeld) {
  CaseFeed feed(Specs(2), nullptr, [](const CaseSpec& spec, PreparedCase) { return Inputs(spec, 4096); }, Double, 1024);
  auto first = feed.Next();
  auto second = feed.Next();  // both began: nothing more will be prepared
  ASSERT_TRUE(first.ok() && second.ok());
  feed.Recycle(std::move(first.value()));
  EXPECT_EQ(feed.SpareBytes(), 0u);  // freed, not held through the timing that follows
}

TEST(CaseFeed, ATakerThatHandsNothingBackStillGetsEveryLargeCase) {
  std::atomic<int> prepared{0};
  CaseFeed feed(Specs(6), nullptr, Counting(prepared, 4096), Double, 1024);
  for (int i = 0; i < 6; ++i) {
    auto next = feed.Next();
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(next->inputs.front(), 'a' + i);
  }
}

}  // namespace
}  // namespace ksmith
