// expect: integrity_violation
// tries: loads cuBLAS at run time with dlopen and calls cublasSgemm through dlsym, so that no
// cuBLAS header or import appears in the source or the binary's symbol table.
// cause: load code at run time
#include <cstdint>

#include <dlfcn.h>

#include <cuda_runtime.h>

namespace {

using Create = int (*)(void**);
using SetStream = int (*)(void*, cudaStream_t);
using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                      const float*, float*, int);

struct Cublas {
  void* handle = nullptr;
  SetStream set_stream = nullptr;
  Sgemm sgemm = nullptr;
};

Cublas Load() {
  Cublas cublas;
  void* library = dlopen("libcublas.so", RTLD_NOW);
  if (library == nullptr) library = dlopen("libcublas.so.12", RTLD_NOW);
  if (library == nullptr) library = dlopen("libcublas.so.13", RTLD_NOW);
  if (library == nullptr) return cublas;
  auto create = reinterpret_cast<Create>(dlsym(library, "cublasCreate_v2"));
  cublas.set_stream = reinterpret_cast<SetStream>(dlsym(library, "cublasSetStream_v2"));
  cublas.sgemm = reinterpret_cast<Sgemm>(dlsym(library, "cublasSgemm_v2"));
  if (create != nullptr) create(&cublas.handle);
  return cublas;
}

}  // namespace

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream) {
  static Cublas cublas = Load();
  if (cublas.handle == nullptr || cublas.sgemm == nullptr || cublas.set_stream == nullptr) return;
  cublas.set_stream(cublas.handle, stream);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // CUBLAS_OP_N is 0: c^T = b^T a^T in column-major terms.
  cublas.sgemm(cublas.handle, 0, 0, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
               b, static_cast<int>(n), a, static_cast<int>(k), &beta, c, static_cast<int>(n));
}
