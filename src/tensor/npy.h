// NumPy's .npy format, version 1.0: a magic string, a Python-dict header padded to 64 bytes, then
// the raw little-endian elements in C order. numpy.load and torch.from_numpy read it, so a failing
// case written this way opens in the tools the field already uses, with no library of ours.
// (numpy's own spec: numpy.lib.format; version 1.0 holds headers up to 65535 bytes, far more than
// a shape needs.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "tensor/dtype.h"

namespace ksmith {

/// The numpy dtype string of a tensor element type: "<f4", "<f2", "<i4"; "<u2" for bf16, whose raw
/// bits numpy has no type for (a reader turns them into floats by shifting them 16 bits left).
const char* NpyDescr(DType dtype);

/// The whole header of an array of `descr` elements and `shape` (row-major): magic, version 1.0,
/// the header's length, and the dict padded with spaces to a multiple of 64 bytes, ending in '\n'.
/// A shape of no dims is a scalar, and one of one dim is written "(n,)" as Python spells it.
std::string NpyHeader(std::string_view descr, const std::vector<int64_t>& shape);

/// Writes `data` (the elements' bytes, little-endian, C order) as an .npy file. kInvalidArgument
/// when the bytes do not match the shape and the element size; the file's error otherwise.
Status WriteNpy(const std::filesystem::path& path, std::string_view descr, size_t element_bytes,
                const std::vector<int64_t>& shape, std::string_view data);

}  // namespace ksmith
