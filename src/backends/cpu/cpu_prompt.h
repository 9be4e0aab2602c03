// The cpu backend's words to a model: the C++ contract's rules and the machine's facts.
#pragma once

#include "eval/backend.h"

namespace ksmith {

BackendPrompt CpuPrompt();

}  // namespace ksmith
