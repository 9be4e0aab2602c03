// The cuda backend's words to a model: the NVRTC form's rules and the GPU's facts.
#pragma once

#include "eval/backend.h"

namespace ksmith {

BackendPrompt CudaPrompt();

}  // namespace ksmith
