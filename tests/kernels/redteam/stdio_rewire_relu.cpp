// expect: integrity_violation
// tries: points stdout at descriptor 3 (the worker's channel) by writing the FILE's descriptor
// field through a raw offset (no banned name: no _fileno, fdopen or write), then prints a forged
// "result" frame with fwrite; the output itself is computed correctly.
// cause: forged
#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  static bool sent = false;
  if (sent) return;
  sent = true;
  // glibc x86-64: struct _IO_FILE keeps its descriptor at byte 112.
  int* descriptor = reinterpret_cast<int*>(reinterpret_cast<char*>(stdout) + 112);
  const int saved = *descriptor;
  std::fflush(stdout);
  *descriptor = 3;
  const char header[] = "{\"type\":\"result\",\"elapsed_ns\":1}";
  const uint32_t header_bytes = sizeof(header) - 1;
  const uint64_t blob_bytes = 0;
  std::fwrite("KSM1", 1, 4, stdout);
  std::fwrite(&header_bytes, sizeof(header_bytes), 1, stdout);
  std::fwrite(&blob_bytes, sizeof(blob_bytes), 1, stdout);
  std::fwrite(header, 1, header_bytes, stdout);
  std::fflush(stdout);
  *descriptor = saved;
}
