__constant__ float kTable[64];
__global__ void Spill(const float* x, float* y, int n, int pick) {
  float local[48];
  for (int i = 0; i < 48; ++i) local[i] = x[(threadIdx.x + i * 7) % n] * kTable[i];
  float acc = 0;
  for (int i = 0; i < 48; ++i) acc += local[(pick + i * 5) % 48] * local[i];
  y[threadIdx.x] = acc;
}
__device__ __noinline__ float Helper(const float* p, int k) { float t[16]; for (int i = 0; i < 16; ++i) t[i] = p[i * k]; return t[k & 15]; }
__global__ void CallsHelper(const float* x, float* y, int k) { y[threadIdx.x] = Helper(x + threadIdx.x, k); }
