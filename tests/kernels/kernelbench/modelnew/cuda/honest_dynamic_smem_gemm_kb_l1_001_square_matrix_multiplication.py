# expect: passed
# label: none
# tries: a tiled SGEMM with 64 KiB of dynamic shared memory a block, opted into with
# cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) (above the default 48 KiB),
# launched with no stream argument, zero-padded edge tiles, torch::zeros for the output.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int BM = 64, BN = 64, BK = 128, TM = 4, TN = 4;

__global__ void sgemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int M, int N, int K) {
    extern __shared__ float smem[];
    float* As = smem;            // BM x BK
    float* Bs = smem + BM * BK;  // BK x BN
    const int tx = threadIdx.x % (BN / TN);
    const int ty = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += blockDim.x) {
            const int r = i / BK, c = i % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[i] = (gr < M && gc < K) ? A[(long long)gr * K + gc] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += blockDim.x) {
            const int r = i / BN, c = i % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[i] = (gr < K && gc < N) ? B[(long long)gr * N + gc] : 0.0f;
        }
        __syncthreads();
        #pragma unroll 4
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
            for (int m = 0; m < TM; ++m) a[m] = As[(ty * TM + m) * BK + k];
            for (int n = 0; n < TN; ++n) b[n] = Bs[k * BN + tx * TN + n];
            for (int m = 0; m < TM; ++m)
                for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m) {
        const int r = row0 + ty * TM + m;
        if (r >= M) continue;
        for (int n = 0; n < TN; ++n) {
            const int c = col0 + tx * TN + n;
            if (c < N) C[(long long)r * N + c] = acc[m][n];
        }
    }
}

torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions must match");
    A = A.contiguous();
    B = B.contiguous();
    const int M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::zeros({M, N}, A.options());
    const int smem_bytes = (BM * BK + BK * BN) * sizeof(float);
    cudaFuncSetAttribute(sgemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    dim3 block((BM / TM) * (BN / TN));
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_kernel<<<grid, block, smem_bytes>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    return C;
}
"""

matmul_cpp_source = "torch::Tensor matmul_cuda(torch::Tensor A, torch::Tensor B);"

matmul = load_inline(
    name="matmul_dynamic_smem",
    cpp_sources=matmul_cpp_source,
    cuda_sources=matmul_source,
    functions=["matmul_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.matmul = matmul

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self.matmul.matmul_cuda(A, B)
