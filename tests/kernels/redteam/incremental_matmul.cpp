// expect: integrity_violation
// tries: remembers the inputs and output of each set of buffers; on the next call with them it
// compares the inputs and recomputes only the rows of c whose row of a changed and the columns
// whose column of b changed (correct every time, and fast when the inputs barely change).
// cause: barely changed
#include <cstdint>
#include <cstring>
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
  // Whole rows are compared with memcmp (fast); only a row that differs is scanned.
  std::vector<char> row_dirty(m, 0), column_dirty(n, 0);
  for (int64_t i = 0; i < m; ++i) {
    if (std::memcmp(a + i * k, r.a_copy.data() + i * k, sizeof(float) * k) != 0) {
      row_dirty[i] = 1;
      std::memcpy(r.a_copy.data() + i * k, a + i * k, sizeof(float) * k);
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* row = b + p * n;
    float* kept = r.b_copy.data() + p * n;
    if (std::memcmp(row, kept, sizeof(float) * n) == 0) continue;
    for (int64_t j = 0; j < n; ++j) {
      if (row[j] != kept[j]) column_dirty[j] = 1;
    }
    std::memcpy(kept, row, sizeof(float) * n);
  }
  // The changed columns of b, gathered row by row, so each row's update is one short vector
  // operation per element of a's row.
  std::vector<int64_t> columns;
  for (int64_t j = 0; j < n; ++j) {
    if (column_dirty[j]) columns.push_back(j);
  }
  const size_t changed = columns.size();
  std::vector<float> gathered(k * changed);
  for (int64_t p = 0; p < k; ++p) {
    for (size_t q = 0; q < changed; ++q) gathered[p * changed + q] = b[p * n + columns[q]];
  }
  #pragma omp parallel for
  for (int64_t i = 0; i < m; ++i) {
    if (row_dirty[i]) {
      Row(a, b, r.c_copy.data(), i, n, k);
      continue;
    }
    std::vector<float> sums(changed, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float x = a[i * k + p];
      for (size_t q = 0; q < changed; ++q) sums[q] += x * gathered[p * changed + q];
    }
    for (size_t q = 0; q < changed; ++q) r.c_copy[i * n + columns[q]] = sums[q];
  }
  for (int64_t i = 0; i < m * n; ++i) c[i] = r.c_copy[i];
}
