// expect: integrity_violation
// tries: declares socket() by hand (no <sys/socket.h>), so only the imported symbols show it.
// cause: network
#include <cstdint>

extern "C" int socket(int domain, int type, int protocol);

extern "C" void relu(const float* x, float* y, int64_t n) {
  static int fd = socket(2 /* AF_INET */, 2 /* SOCK_DGRAM */, 0);
  (void)fd;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
