// Finding the kernel in a model's answer: the fenced block (```cpp, ```c++, ```cuda, ```c or
// untagged) that defines the task's function, or the whole answer when it is bare code. A reply
// that cannot yield a kernel is an explained failure, recorded like any other attempt.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ksmith {

struct CodeBlock {
  std::string language;  // the fence's info string, lower case ("cpp", "cuda", "" untagged)
  std::string text;
  bool closed = true;    // false: the answer ended inside this block (truncated output)
};

/// Every fenced block, in order. An unclosed last fence is kept with closed == false.
std::vector<CodeBlock> FindCodeBlocks(std::string_view answer);

/// Names of the `extern "C"` functions that `code` defines (with a body, not only declares).
std::vector<std::string> DefinedExternCFunctions(std::string_view code);

struct ExtractedKernel {
  std::string source;
  size_t blocks_found = 0;  // fenced blocks in the answer (0: the answer was bare code)
  size_t block_index = 0;   // which one was taken
};

/// The kernel that defines `function`: when several blocks do, the last one (a model that revises
/// its answer ends with the version it means). Failures (kParse) say what the answer held instead:
/// no code, code that defines other functions, or a block cut off before it ended.
Result<ExtractedKernel> ExtractKernel(std::string_view answer, const std::string& function);

/// The last closed code block that `is_candidate` accepts; the whole answer when it is bare code
/// it accepts. Failures (kParse) as ExtractKernel's, saying it looked for `what`.
Result<ExtractedKernel> ExtractCandidateBlock(std::string_view answer, const std::function<bool(std::string_view)>& is_candidate,
                                              const std::string& what);

/// KernelBench's format: the last closed Python block (```python, ```py or untagged) that defines
/// `class ModelNew`; the whole answer when it is bare code that does. Failures as ExtractKernel's.
Result<ExtractedKernel> ExtractModelNew(std::string_view answer);

}  // namespace ksmith
