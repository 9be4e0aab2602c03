#include "sandbox/process_state.h"

#include <dlfcn.h>
#include <xmmintrin.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace ksmith {
namespace {

// The runtimes are found where the candidate or baseline loaded them (privately: RTLD_LOCAL
// hides them from RTLD_DEFAULT); the worker links neither, and RTLD_NOLOAD opens no file.
template <typename Function>
Function Find(const char* name) {
  for (const char* library : {"libgomp.so.1", "libopenblas.so.0"}) {
    if (void* handle = ::dlopen(library, RTLD_NOW | RTLD_NOLOAD)) {
      void* symbol = ::dlsym(handle, name);
      ::dlclose(handle);  // drops the reference NOLOAD took; the library stays loaded
      if (symbol != nullptr) return reinterpret_cast<Function>(symbol);
    }
  }
  return reinterpret_cast<Function>(::dlsym(RTLD_DEFAULT, name));
}

// MXCSR's low six bits are sticky exception flags: they record what happened, not a setting.
constexpr unsigned kMxcsrStatusBits = 0x3f;

unsigned short X87Control() {
  unsigned short control = 0;
  __asm__ volatile("fnstcw %0" : "=m"(control));
  return control;
}

int FromEnvironment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : -1;
}

}  // namespace

ProcessState ProcessState::Capture() {
  ProcessState state;
  if (auto get = Find<int (*)()>("omp_get_max_threads")) state.omp_max_threads = get();
  if (auto get = Find<int (*)()>("omp_get_dynamic")) state.omp_dynamic = get();
  if (auto get = Find<int (*)()>("openblas_get_num_threads")) state.openblas_threads = get();
  state.mxcsr = _mm_getcsr() & ~kMxcsrStatusBits;
  state.x87_control = X87Control();
  CPU_ZERO(&state.affinity);
  ::sched_getaffinity(0, sizeof(state.affinity), &state.affinity);
  return state;
}

std::vector<std::string> ProcessState::ChangesFrom(const ProcessState& expected) const {
  std::vector<std::string> changes;
  auto compare = [&](const char* what, int now, int before, const char* variable, int runtime_default) {
    if (now < 0) return;
    if (before < 0 && variable != nullptr) before = FromEnvironment(variable);
    if (before < 0) before = runtime_default;
    if (before >= 0 && now != before) changes.push_back(fmt::format("{} ({} -> {})", what, before, now));
  };
  // A runtime the candidate loaded starts from its environment variable, else its default: for
  // OpenMP one thread per core of the affinity mask, no dynamic adjustment.
  compare("the OpenMP thread count", omp_max_threads, expected.omp_max_threads, "OMP_NUM_THREADS",
          CPU_COUNT(&expected.affinity));
  compare("OpenMP's dynamic thread adjustment", omp_dynamic, expected.omp_dynamic, nullptr, 0);
  compare("the OpenBLAS thread count", openblas_threads, expected.openblas_threads, "OPENBLAS_NUM_THREADS", -1);
  if (mxcsr != expected.mxcsr) {
    changes.push_back(fmt::format("the SSE floating-point mode (MXCSR {:#06x} -> {:#06x}: rounding, flush-to-zero or "
                                  "denormals-are-zero)",
                                  expected.mxcsr, mxcsr));
  }
  if (x87_control != expected.x87_control) {
    changes.push_back(fmt::format("the x87 floating-point control word ({:#06x} -> {:#06x})", expected.x87_control,
                                  x87_control));
  }
  if (!CPU_EQUAL(&affinity, &expected.affinity)) {
    changes.push_back(fmt::format("the CPU affinity ({} cores -> {})", CPU_COUNT(&expected.affinity), CPU_COUNT(&affinity)));
  }
  return changes;
}

void ProcessState::Restore() const {
  if (auto set = Find<void (*)(int)>("omp_set_num_threads")) {
    const int wanted = FromEnvironment("OMP_NUM_THREADS");
    set(omp_max_threads > 0 ? omp_max_threads : wanted > 0 ? wanted : CPU_COUNT(&affinity));
  }
  if (auto set = Find<void (*)(int)>("omp_set_dynamic")) set(omp_dynamic > 0 ? 1 : 0);
  if (openblas_threads > 0) {
    if (auto set = Find<void (*)(int)>("openblas_set_num_threads")) set(openblas_threads);
  }
  _mm_setcsr((_mm_getcsr() & kMxcsrStatusBits) | mxcsr);
  const unsigned short control = x87_control;
  __asm__ volatile("fldcw %0" : : "m"(control));
  ::sched_setaffinity(0, sizeof(affinity), &affinity);
}

}  // namespace ksmith
