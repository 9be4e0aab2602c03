// Reads a PNG's pixels for the tests that look at a screenshot (Chromium's `--screenshot`): 8-bit
// RGB or RGBA, not interlaced, which is what Chromium writes. Enough to ask what colours were
// drawn, not a general decoder.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace ksmith::it {

struct PngPixels {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint32_t> rgb;  // 0xRRGGBB, row by row
};

inline uint32_t BigEndian32(const std::string& bytes, size_t at) {
  return (uint32_t{static_cast<uint8_t>(bytes[at])} << 24) | (uint32_t{static_cast<uint8_t>(bytes[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(bytes[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(bytes[at + 3])};
}

/// nullopt, with `why` set, for anything but an 8-bit RGB(A) PNG that inflates to its size.
inline std::optional<PngPixels> ReadPng(const std::string& file, std::string* why) {
  if (file.size() < 33 || file.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || file.compare(12, 4, "IHDR") != 0) {
    *why = "not a PNG";
    return std::nullopt;
  }
  PngPixels png{BigEndian32(file, 16), BigEndian32(file, 20), {}};
  const int depth = static_cast<uint8_t>(file[24]), colour = static_cast<uint8_t>(file[25]);
  const int interlace = static_cast<uint8_t>(file[28]);
  if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) {
    *why = "depth " + std::to_string(depth) + ", colour type " + std::to_string(colour) + ", interlace " +
           std::to_string(interlace);
    return std::nullopt;
  }
  std::string compressed;
  for (size_t at = 8; at + 12 <= file.size();) {
    const uint32_t length = BigEndian32(file, at);
    if (file.compare(at + 4, 4, "IDAT") == 0) compressed += file.substr(at + 8, length);
    at += 12 + size_t{length};
  }
  const size_t channels = colour == 6 ? 4 : 3, stride = png.width * channels;
  std::vector<uint8_t> raw((stride + 1) * png.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()), compressed.size()) != Z_OK ||
      raw_size != raw.size()) {
    *why = "the image data does not inflate to " + std::to_string(raw.size()) + " bytes";
    return std::nullopt;
  }
  // Undo each row's filter (PNG spec section 9) in place, then read the pixels.
  std::vector<uint8_t> previous(stride, 0);
  png.rgb.reserve(size_t{png.width} * png.height);
  for (uint32_t y = 0; y < png.height; ++y) {
    uint8_t* row = &raw[y * (stride + 1) + 1];
    const int filter = row[-1];
    for (size_t x = 0; x < stride; ++x) {
      const int left = x >= channels ? row[x - channels] : 0, up = previous[x];
      const int up_left = x >= channels ? previous[x - channels] : 0;
      int predicted = 0;
      if (filter == 1) predicted = left;
      if (filter == 2) predicted = up;
      if (filter == 3) predicted = (left + up) / 2;
      if (filter == 4) {
        const int p = left + up - up_left, pa = std::abs(p - left), pb = std::abs(p - up), pc = std::abs(p - up_left);
        predicted = pa <= pb && pa <= pc ? left : (pb <= pc ? up : up_left);
      }
      row[x] = static_cast<uint8_t>(row[x] + predicted);
    }
    previous.assign(row, row + stride);
    for (uint32_t x = 0; x < png.width; ++x) {
      const uint8_t* pixel = row + x * channels;
      png.rgb.push_back((uint32_t{pixel[0]} << 16) | (uint32_t{pixel[1]} << 8) | pixel[2]);
    }
  }
  return png;
}

/// Whether `png` has a solid `width` x `height` patch of `rgb`: a drawn shape, where a pixel or a
/// few of that colour can come from a text's anti-aliased edge.
inline bool HasPatch(const PngPixels& png, uint32_t rgb, uint32_t width, uint32_t height) {
  for (uint32_t y = 0; y + height <= png.height; ++y) {
    for (uint32_t x = 0; x + width <= png.width; ++x) {
      bool solid = true;
      for (uint32_t dy = 0; dy < height && solid; ++dy) {
        for (uint32_t dx = 0; dx < width && solid; ++dx) solid = png.rgb[size_t{y + dy} * png.width + x + dx] == rgb;
      }
      if (solid) return true;
    }
  }
  return false;
}

}  // namespace ksmith::it
