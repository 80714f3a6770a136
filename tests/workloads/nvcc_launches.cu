// Kernel launches as nvcc compiles them: `<<<>>>` on the default stream and on a created stream, a template
// kernel, a kernel without parameters, and cudaLaunchKernelEx. Built twice by make (nvcc -cudart shared):
// nvcc_launches, and nvcc_launches_ptsz with --default-stream per-thread. Runs with or without a GPU: with
// no driver every call fails and the program goes on, so that every launch is still made.
//
// Prints what it did, for tests/integration/test_nvcc_launches.py:
//   call NAME STATUS                       the status a runtime call returned
//   expect kernel MANGLED LAUNCHES GRIDX BLOCKX   launches made of a kernel, with their one configuration
//   expect launch API MANGLED COUNT         launch calls of a kernel made through a runtime entry point
//   launch-errors N                         launches whose cudaGetLastError() was not cudaSuccess
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

template <typename T> __global__ void scale(T *x, T a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void empty_kernel() {}

static int launch_errors;

static void check_launch()
{
    if (cudaGetLastError() != cudaSuccess)
        launch_errors++;
}

int main()
{
    const int n = 1 << 12;
    const int fills = 7, scales = 3, exs = 2;
    float *d = nullptr;
    std::printf("call cudaMalloc %d\n", (int)cudaMalloc(&d, n * sizeof(float)));
    cudaStream_t s = nullptr;
    std::printf("call cudaStreamCreate %d\n", (int)cudaStreamCreate(&s));

    for (int i = 0; i < fills; i++) {
        fill<<<4, 256>>>(d, 1.0f, n);
        check_launch();
    }
    for (int i = 0; i < scales; i++) {
        scale<float><<<2, 128, 0, s>>>(d, 2.0f, n);
        check_launch();
    }
    empty_kernel<<<1, 1>>>();
    check_launch();

    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(4);
    config.blockDim = dim3(256);
    config.stream = s;
    for (int i = 0; i < exs; i++) {
        std::printf("call cudaLaunchKernelEx %d\n", (int)cudaLaunchKernelEx(&config, fill, d, 3.0f, n));
        check_launch();
    }

    std::printf("call cudaDeviceSynchronize %d\n", (int)cudaDeviceSynchronize());
    if (s)
        std::printf("call cudaStreamDestroy %d\n", (int)cudaStreamDestroy(s));
    std::printf("call cudaFree %d\n", (int)cudaFree(d));

    std::printf("expect kernel _Z4fillPffi %d 4 256\n", fills + exs);
    std::printf("expect kernel _Z5scaleIfEvPT_S0_i %d 2 128\n", scales);
    std::printf("expect kernel _Z12empty_kernelv 1 1 1\n");
    std::printf("expect launch __cudaLaunchKernel _Z4fillPffi %d\n", fills);
    std::printf("expect launch __cudaLaunchKernel _Z5scaleIfEvPT_S0_i %d\n", scales);
    std::printf("expect launch __cudaLaunchKernel _Z12empty_kernelv 1\n");
    std::printf("expect launch cudaLaunchKernelExC _Z4fillPffi %d\n", exs);
    std::printf("launch-errors %d\n", launch_errors);
    return 0;
}
