#include "tensor/npy.h"

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

TEST(NpyHeader, IsVersionOneWithTheDictPaddedToSixtyFourBytes) {
  const std::string header = NpyHeader("<f4", {3});
  ASSERT_GE(header.size(), 10u);
  EXPECT_EQ(header.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(header[6], '\x01');
  EXPECT_EQ(header[7], '\x00');
  const size_t dict_bytes = static_cast<unsigned char>(header[8]) | (static_cast<unsigned char>(header[9]) << 8);
  EXPECT_EQ(dict_bytes + 10, header.size());
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_NE(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
}

TEST(NpyHeader, SpellsShapesAsPythonTuples) {
  EXPECT_NE(NpyHeader("<i4", {2, 5}).find("'shape': (2, 5)"), std::string::npos);
  EXPECT_NE(NpyHeader("<f2", {}).find("'shape': ()"), std::string::npos);
  EXPECT_NE(NpyHeader("<f8", {7}).find("'shape': (7,)"), std::string::npos);
}

TEST(NpyDescr, NamesEveryDtypeAndBf16AsItsBits) {
  EXPECT_STREQ(NpyDescr(DType::kFloat32), "<f4");
  EXPECT_STREQ(NpyDescr(DType::kFloat16), "<f2");
  EXPECT_STREQ(NpyDescr(DType::kBFloat16), "<u2");
  EXPECT_STREQ(NpyDescr(DType::kInt32), "<i4");
}

TEST(WriteNpy, WritesHeaderThenTheRawBytes) {
  ScopedTempDir folder("npy");
  const float values[] = {1.5f, -2.0f, 0.25f, 8.0f};
  const std::string data(reinterpret_cast<const char*>(values), sizeof(values));
  const auto path = folder.path() / "a.npy";
  ASSERT_TRUE(WriteNpy(path, "<f4", 4, {2, 2}, data).ok());
  auto written = ReadFile(path);
  ASSERT_TRUE(written.ok());
  const std::string header = NpyHeader("<f4", {2, 2});
  EXPECT_EQ(written->substr(0, header.size()), header);
  EXPECT_EQ(written->substr(header.size()), data);
}

TEST(WriteNpy, RefusesBytesThatDoNotFillTheShape) {
  ScopedTempDir folder("npy");
  const Status status = WriteNpy(folder.path() / "b.npy", "<f4", 4, {3}, std::string(8, '\0'));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(folder.path() / "b.npy"));
}

}  // namespace
}  // namespace ksmith
