#include "binary/vector_code.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "testing/shared_object.h"

namespace ksmith {
namespace {

TEST(SummarizeVectorCode, CountsArithmeticByWidthAndPrecisionAndSkipsMovesAndZeroing) {
  const VectorCode code = SummarizeVectorCode(
      "0000000000001120 <scale>:\n"
      "    1128:\tvmovups (%rax),%zmm1\n"
      "    1132:\tvaddps %zmm1,%zmm1,%zmm0\n"
      "    1138:\tvmovups %zmm0,-0x40(%rax)\n"
      "    1169:\tvfmadd231ps %ymm2,%ymm1,%ymm0\n"
      "    125b:\tvxorpd %xmm0,%xmm0,%xmm0\n"
      "    1260:\tvaddpd %xmm1,%xmm0,%xmm0\n"
      "    1264:\tvaddss %xmm1,%xmm0,%xmm0\n"
      "    1268:\tvrsqrt14ps %zmm1,%zmm2\n"
      "    1270:\tcall   1030 <GOMP_parallel@plt>\n"
      "    1275:\tret\n");
  EXPECT_EQ(code.instructions, 10);
  EXPECT_EQ(code.packed_single, 3);
  EXPECT_EQ(code.packed_double, 1);
  EXPECT_EQ(code.scalar_float, 1);
  EXPECT_EQ(code.arithmetic_512_bit, 2);
  EXPECT_EQ(code.arithmetic_256_bit, 1);
  EXPECT_EQ(code.arithmetic_128_bit, 1);
  EXPECT_EQ(code.fma, 1);
  EXPECT_EQ(code.openmp_parallel, 1);
  EXPECT_EQ(code.widest_vector_bits(), 512);
  EXPECT_EQ(VectorCode::FromJson(code.ToJson()).ToJson(), code.ToJson());
}

TEST(SummarizeVectorCode, ScalarCodeHasNoVectorWidth) {
  const VectorCode code = SummarizeVectorCode("    1264:\taddss %xmm1,%xmm0\n    1268:\tret\n");
  EXPECT_EQ(code.widest_vector_bits(), 0);
  EXPECT_EQ(code.scalar_float, 1);
}

TEST(ReadVectorCode, SeesTheWidthTheCompilerChose) {
  ScopedTempDir folder("vector-code-test");
  const std::string failure = testing::BuildSharedObject(folder.path(), "k", R"(
#include <immintrin.h>
extern "C" __attribute__((target("avx2,fma"))) void axpy8(const float* x, float* y, float a) {
  _mm256_storeu_ps(y, _mm256_fmadd_ps(_mm256_set1_ps(a), _mm256_loadu_ps(x), _mm256_loadu_ps(y)));
}
extern "C" double sum2(const double* x) { return x[0] + x[1]; }
)");
  ASSERT_TRUE(failure.empty()) << failure;
  auto code = ReadVectorCode(folder.path() / "k.so");
  ASSERT_TRUE(code.ok()) << code.error().message;
  EXPECT_EQ(code->widest_vector_bits(), 256);
  EXPECT_GE(code->fma, 1);
  EXPECT_GE(code->packed_single, 1);
  EXPECT_GE(code->scalar_float, 1);  // sum2's addsd
  EXPECT_EQ(code->openmp_parallel, 0);
}

TEST(ReadVectorCode, ReportsAMissingFileAsAnError) { EXPECT_FALSE(ReadVectorCode("/nonexistent/k.so").ok()); }

}  // namespace
}  // namespace ksmith
