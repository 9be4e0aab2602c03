// Finds machine instructions in a built kernel, whatever source spelling produced them (inline
// assembly behind token pasting, intrinsics, macros): the last word on raw system calls and
// reads of the time-stamp counter.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

struct InstructionUse {
  std::string mnemonic;  // "syscall", "rdtsc", "int $0x80"
  std::string function;  // the symbol it sits in, when objdump names one
};

/// `objdump -d --no-show-raw-insn -M att` of `shared_object`: every reader of machine code here
/// parses this one form.
Result<std::string> Disassemble(const std::filesystem::path& shared_object);

/// Disassembles `shared_object` with objdump and returns every use of the listed instructions.
/// "int $0x80" matches only that operand; other entries match the mnemonic.
Result<std::vector<InstructionUse>> FindInstructions(const std::filesystem::path& shared_object,
                                                     const std::vector<std::string>& mnemonics);

}  // namespace ksmith
