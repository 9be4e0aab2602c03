// expect: integrity_violation
// tries: remembers the inputs and output of each set of buffers; on the next call with them it
// compares the inputs and recomputes only the rows of c whose row of a changed and the columns
// whose column of b changed (correct every time, and fast when the inputs barely change).
// cause: barely changed
#include <cstdint>
#include <map>
#include <vector>

namespace {

struct Remembered {
  const float* a = nullptr;
  const float* b = nullptr;
  int64_t m = 0, n = 0, k = 0;
  std::vector<float> a_copy, b_copy, c_copy;
};

std::map<float*, Remembered>& Memory() {
  static std::map<float*, Remembered> memory;
  return memory;
}

void Row(const float* a, const float* b, float* c, int64_t i, int64_t n, int64_t k) {
  for (int64_t j = 0; j < n; ++j) c[i * n + j] = 0.0f;
  for (int64_t p = 0; p < k; ++p) {
    const float x = a[i * k + p];
    for (int64_t j = 0; j < n; ++j) c[i * n + j] += x * b[p * n + j];
  }
}

}  // namespace

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  Remembered& r = Memory()[c];
  const bool same = r.a == a && r.b == b && r.m == m && r.n == n && r.k == k;
  if (!same) {
    r = Remembered{a, b, m, n, k, std::vector<float>(a, a + m * k), std::vector<float>(b, b + k * n), {}};
    #pragma omp parallel for
    for (int64_t i = 0; i < m; ++i) Row(a, b, c, i, n, k);
    r.c_copy.assign(c, c + m * n);
    return;
  }
  std::vector<char> row_dirty(m, 0), column_dirty(n, 0);
  for (int64_t i = 0; i < m * k; ++i) {
    if (a[i] != r.a_copy[i]) {
      row_dirty[i / k] = 1;
      r.a_copy[i] = a[i];
    }
  }
  for (int64_t i = 0; i < k * n; ++i) {
    if (b[i] != r.b_copy[i]) {
      column_dirty[i % n] = 1;
      r.b_copy[i] = b[i];
    }
  }
  // The changed columns of b, gathered contiguous, so each row's update is a few short dot products.
  std::vector<int64_t> columns;
  for (int64_t j = 0; j < n; ++j) {
    if (column_dirty[j]) columns.push_back(j);
  }
  std::vector<float> gathered(columns.size() * k);
  for (size_t q = 0; q < columns.size(); ++q) {
    for (int64_t p = 0; p < k; ++p) gathered[q * k + p] = b[p * n + columns[q]];
  }
  #pragma omp parallel for
  for (int64_t i = 0; i < m; ++i) {
    if (row_dirty[i]) {
      Row(a, b, r.c_copy.data(), i, n, k);
      continue;
    }
    for (size_t q = 0; q < columns.size(); ++q) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * gathered[q * k + p];
      r.c_copy[i * n + columns[q]] = sum;
    }
  }
  for (int64_t i = 0; i < m * n; ++i) c[i] = r.c_copy[i];
}
