// The process-wide settings a candidate must leave as it found them: each change is seen,
// named, and undone.
#include "sandbox/process_state.h"

#include <gtest/gtest.h>
#include <xmmintrin.h>

namespace ksmith {
namespace {

TEST(ProcessState, AnUntouchedProcessHasNoChanges) {
  const ProcessState before = ProcessState::Capture();
  EXPECT_TRUE(ProcessState::Capture().ChangesFrom(before).empty());
}

TEST(ProcessState, FlushToZeroIsNamedAndUndone) {
  const ProcessState before = ProcessState::Capture();
  _mm_setcsr(_mm_getcsr() | 0x8040);  // flush-to-zero and denormals-are-zero
  const auto changes = ProcessState::Capture().ChangesFrom(before);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NE(changes[0].find("the SSE floating-point mode"), std::string::npos) << changes[0];
  before.Restore();
  EXPECT_EQ(_mm_getcsr() & 0x8040u, before.mxcsr & 0x8040u);
  EXPECT_TRUE(ProcessState::Capture().ChangesFrom(before).empty());
}

TEST(ProcessState, ExceptionFlagsAreNotSettings) {
  const ProcessState before = ProcessState::Capture();
  volatile float tiny = 1e-38f;
  volatile float result = tiny * tiny;  // raises underflow and inexact: sticky flags, not a mode
  (void)result;
  EXPECT_TRUE(ProcessState::Capture().ChangesFrom(before).empty());
}

}  // namespace
}  // namespace ksmith
