"""scripts/nvrtc_convert.py: an nvcc-form CUDA file rewritten into the NVRTC form (the built
result is checked by ctest's CudaKernelSuite, which builds every seed, all converted by it)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("nvrtc_convert", ROOT / "scripts" / "nvrtc_convert.py")
nvrtc_convert = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nvrtc_convert)


def sections(text):
    device = text[text.index("#ifdef KSMITH_DEVICE"):text.index("#endif  // KSMITH_DEVICE")]
    host = text[text.index("#ifdef KSMITH_HOST"):text.index("#endif  // KSMITH_HOST")]
    both = text[:text.index("#ifdef KSMITH_DEVICE")]
    return both, device, host


def test_sorts_a_real_kernel_into_its_sections_and_rewrites_its_launches():
    text = nvrtc_convert.convert((ROOT / "tests/kernels/cuda/honest/softmax_fast.cu").read_text())
    both, device, host = sections(text)
    assert "#include <ksmith/launch.h>" in both
    assert "constexpr int kThreads = 256;" in both
    assert "struct MaxSum" in both  # a plain struct: both sides may name it
    assert "__global__ void __launch_bounds__(kThreads) SoftmaxWarpPerRow" in device
    assert "bool Aligned(const void* pointer)" in host
    assert 'extern "C" void softmax(' in host
    assert "#include <algorithm>" in host and "#include <algorithm>" not in both
    assert "KSMITH_LAUNCH(blocks, kThreads, 0, stream, SoftmaxWarpPerRow<true>)(x, y, rows, cols)" in host
    assert "<<<" not in text


def test_a_launch_without_shared_bytes_or_stream_gets_zeros():
    assert (nvrtc_convert.launches("k<4, T><<<grid, 128>>>(a, b);")
            == "KSMITH_LAUNCH(grid, 128, 0, 0, k<4, T>)(a, b);")
    assert (nvrtc_convert.launches("ns::k<<<dim3(a, b), 64, bytes, stream>>>(x);")
            == "KSMITH_LAUNCH(dim3(a, b), 64, bytes, stream, ns::k)(x);")


def test_host_device_helpers_go_to_both_and_wmma_namespaces_to_the_device():
    text = nvrtc_convert.convert(
        "#include <mma.h>\nusing namespace nvcuda;\n"
        "__host__ __device__ constexpr int Rows(int d) { return d > 64 ? 32 : 64; }\n"
        "__global__ void k(float* y) { y[0] = Rows(1); }\n"
        'extern "C" void f(float* y, cudaStream_t stream) { k<<<1, 1, 0, stream>>>(y); }\n')
    both, device, host = sections(text)
    assert "Rows(int d)" in both
    assert "using namespace nvcuda;" in device and "#include <mma.h>" in device
    assert "KSMITH_LAUNCH(1, 1, 0, stream, k)(y);" in host


def test_an_unterminated_comment_ends_the_file_instead_of_looping():
    assert "int x;" in nvrtc_convert.convert("int x;\n/* never closed\n")
    assert "int f()" in nvrtc_convert.convert("int f() { return 1; /* open\n")
