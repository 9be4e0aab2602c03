// A backend for tests of the pipeline driver and the evaluation service: it "compiles" a
// one-line kernel language and computes vector_add in this process, so that stage order, every
// failure's status and cancellation are tested without a compiler or a worker. It shows what
// adding a backend takes: this file and one BackendRegistry::Register line.
//
// A candidate is text; the first of these words it holds decides what it does:
//   forbidden      the source audit refuses it
//   syntax-error   it does not compile
//   imports-fopen  the binary audit refuses it
//   throw          the session throws (a bug of ours: infra_error)
//   crash          the kernel "crashes" (runtime_error)
//   hang           the kernel never returns (until the call timeout or a cancel)
//   sub            computes a - b (wrong_output)
//   add            computes a + b (passes)
#pragma once

#include <filesystem>

#include "eval/backend_registry.h"

namespace ksmith::testing {

inline constexpr const char* kInProcessBackend = "inprocess";

/// The registry entry; `cache_directory` of the config holds the "built" kernels.
BackendEntry InProcessBackendEntry();

/// Registers the backend in the global registry once (later calls do nothing).
void RegisterInProcessBackend();

}  // namespace ksmith::testing
