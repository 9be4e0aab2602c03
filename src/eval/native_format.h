// ksmith's own candidate contract as a format (eval/candidate_format.h): one C++ or CUDA source
// that defines the task's function with `extern "C"`, audited, built and audited again by the
// backend, and decided at the task's hidden shapes.
#pragma once

#include "eval/candidate_format.h"

namespace ksmith {

/// The native format; the one a candidate that names no format is written in.
const CandidateFormat& NativeFormat();

}  // namespace ksmith
