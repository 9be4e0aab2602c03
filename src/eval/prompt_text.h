// Small formatting helpers for the texts backends give prompts (BackendPrompt): sizes, rates and
// values read from a device's facts.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

/// "48 KiB", "1.5 MiB", "80 GiB".
std::string FormatBytes(uint64_t bytes);
/// Plain numbers a reader takes in at a glance, no exponents: 3270, 51.0, 6.34.
std::string Rate(double value);
/// A number of `facts` (0 where absent or not a number).
double FactNumber(const nlohmann::json& facts, const char* key);
/// A string of `facts` (empty where absent or not a string).
std::string FactText(const nlohmann::json& facts, const char* key);

}  // namespace ksmith
