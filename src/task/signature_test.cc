// The C signature a candidate must define: parsing, its errors, and the declaration text.
#include "task/signature.h"

#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

std::string ErrorOf(const std::string& text) {
  auto signature = ParseSignature(text);
  EXPECT_FALSE(signature.ok()) << text << " parsed";
  if (signature.ok()) return {};
  EXPECT_EQ(signature.error().kind, ErrorKind::kParse);
  return signature.error().message;
}

TEST(ParseSignature, ReadsTheVectorAddSignature) {
  auto signature = ParseSignature("void vector_add(const float* a, const float* b, float* c, int64_t n)");
  ASSERT_TRUE(signature.ok()) << signature.error().message;
  EXPECT_EQ(signature->function, "vector_add");
  ASSERT_EQ(signature->parameters.size(), 4u);
  const auto& a = signature->parameters[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.base_type, "float");
  EXPECT_TRUE(a.is_pointer);
  EXPECT_TRUE(a.is_const);
  const auto& c = signature->parameters[2];
  EXPECT_EQ(c.name, "c");
  EXPECT_TRUE(c.is_pointer);
  EXPECT_FALSE(c.is_const);
  const auto& n = signature->parameters[3];
  EXPECT_EQ(n.name, "n");
  EXPECT_EQ(n.base_type, "int64_t");
  EXPECT_FALSE(n.is_pointer);
  EXPECT_FALSE(n.is_const);
}

TEST(ParseSignature, AcceptsAnyPlacementOfTheStar) {
  for (const char* text : {"void f(const float* x)", "void f(const float *x)",
                           "void f(const float * x)", "void f(const float*x)",
                           "void f(float const* x)"}) {
    auto signature = ParseSignature(text);
    ASSERT_TRUE(signature.ok()) << text << ": " << signature.error().message;
    ASSERT_EQ(signature->parameters.size(), 1u) << text;
    EXPECT_EQ(signature->parameters[0].name, "x") << text;
    EXPECT_EQ(signature->parameters[0].base_type, "float") << text;
    EXPECT_TRUE(signature->parameters[0].is_pointer) << text;
    EXPECT_TRUE(signature->parameters[0].is_const) << text;
  }
}

TEST(ParseSignature, AcceptsAnExternCPrefixAndExtraWhitespace) {
  auto signature = ParseSignature("  extern \"C\"   void   softmax ( const float* x ,  float* y, int64_t rows, int64_t cols )  ");
  ASSERT_TRUE(signature.ok()) << signature.error().message;
  EXPECT_EQ(signature->function, "softmax");
  ASSERT_EQ(signature->parameters.size(), 4u);
  EXPECT_EQ(signature->parameters[1].name, "y");
  EXPECT_EQ(signature->parameters[3].name, "cols");
}

TEST(ParseSignature, AcceptsAnEmptyParameterList) {
  auto signature = ParseSignature("void noop()");
  ASSERT_TRUE(signature.ok()) << signature.error().message;
  EXPECT_EQ(signature->function, "noop");
  EXPECT_TRUE(signature->parameters.empty());
}

TEST(ParseSignature, RequiresAVoidReturnType) {
  EXPECT_TRUE(Contains(ErrorOf("int f(const float* x)"), "must start with 'void '"));
  EXPECT_TRUE(Contains(ErrorOf("f(const float* x)"), "must start with 'void '"));
}

TEST(ParseSignature, RejectsGarbage) {
  EXPECT_TRUE(Contains(ErrorOf("void f const float* x"), "must look like"));
  EXPECT_TRUE(Contains(ErrorOf("void f(float* x"), "must look like"));
  EXPECT_TRUE(Contains(ErrorOf("void f(float* x) trailing"), "must look like"));
  EXPECT_FALSE(ParseSignature("").ok());
  EXPECT_FALSE(ParseSignature("%$#@!").ok());
}

TEST(ParseSignature, RejectsAFunctionNameThatIsNotAnIdentifier) {
  EXPECT_TRUE(Contains(ErrorOf("void 2fast(float* x)"), "'2fast' is not a function name"));
  EXPECT_TRUE(Contains(ErrorOf("void my-kernel(float* x)"), "is not a function name"));
  EXPECT_TRUE(Contains(ErrorOf("void (float* x)"), "is not a function name"));
}

TEST(ParseSignature, RejectsAParameterWithoutTypeOrName) {
  EXPECT_TRUE(Contains(ErrorOf("void f(x)"), "needs a type and a name"));
  EXPECT_TRUE(Contains(ErrorOf("void f(float* a, *)"), "needs a type and a name"));
  EXPECT_TRUE(Contains(ErrorOf("void f(const * x)"), "has no type"));
}

TEST(ParseSignature, RejectsAParameterNameThatIsNotAnIdentifier) {
  EXPECT_TRUE(Contains(ErrorOf("void f(float* 9x)"), "'9x' is not a name"));
  EXPECT_TRUE(Contains(ErrorOf("void f(float x[])"), "is not a name"));
}

TEST(ParseSignature, RejectsPointersToPointers) {
  EXPECT_TRUE(Contains(ErrorOf("void f(float** x)"), "pointers to pointers are not supported"));
}

TEST(ParseSignature, RejectsTwoTypeNames) {
  EXPECT_TRUE(Contains(ErrorOf("void f(float int x)"), "unexpected 'int'"));
}

TEST(ParseSignature, RejectsDuplicateParameterNames) {
  EXPECT_TRUE(Contains(ErrorOf("void f(const float* a, float* a, int64_t n)"),
                       "parameter 'a' appears twice"));
}

TEST(SignatureParameter, DeclarationWritesConstPointerAndScalarForms) {
  EXPECT_EQ((SignatureParameter{"x", "float", true, true}).Declaration(), "const float* x");
  EXPECT_EQ((SignatureParameter{"y", "float", true, false}).Declaration(), "float* y");
  EXPECT_EQ((SignatureParameter{"n", "int64_t", false, false}).Declaration(), "int64_t n");
}

TEST(Signature, DeclarationIsExternCWithParametersInOrder) {
  auto signature = ParseSignature("void matmul(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k)");
  ASSERT_TRUE(signature.ok());
  EXPECT_EQ(signature->Declaration(),
            "extern \"C\" void matmul(const float* a, const float* b, float* c, int64_t m, "
            "int64_t n, int64_t k)");
}

TEST(Signature, DeclarationParsesBackToTheSameSignature) {
  auto first = ParseSignature("void layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols)");
  ASSERT_TRUE(first.ok());
  auto second = ParseSignature(first->Declaration());
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->Declaration(), first->Declaration());
  ASSERT_EQ(second->parameters.size(), first->parameters.size());
  for (size_t i = 0; i < first->parameters.size(); ++i) {
    EXPECT_EQ(second->parameters[i].name, first->parameters[i].name);
    EXPECT_EQ(second->parameters[i].is_const, first->parameters[i].is_const);
  }
}

TEST(Signature, EmptyParameterListDeclaresEmptyParentheses) {
  auto signature = ParseSignature("void noop()");
  ASSERT_TRUE(signature.ok());
  EXPECT_EQ(signature->Declaration(), "extern \"C\" void noop()");
}

}  // namespace
}  // namespace ksmith
