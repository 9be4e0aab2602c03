// The opencl backend's words to a model: the OpenCL C contract (the `@launch` form) and the
// device's facts, whichever device it is (PoCL on a CPU, a GPU's driver).
#pragma once

#include "eval/backend.h"

namespace ksmith {

BackendPrompt OpenclPrompt();

}  // namespace ksmith
