"""The real CUDA runtime (libcudart.so.13 of the toolkit) under profwrap, with a program built by nvcc that
launches a kernel with <<<>>> and links the shared runtime. Without a GPU every call fails: the program must
run to its own error exactly as it does without profwrap (same output, same exit status, same sticky error
from cudaGetLastError), and the report must show the failed calls with the runtime's error codes. On a
machine with a GPU the same comparison holds with successful calls."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SOURCE = r'''
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

int main()
{
    const int n = 1 << 16;
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, n * sizeof(float));
    std::printf("cudaMalloc %d\n", (int)e);
    static float h[1 << 16];
    e = cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    std::printf("cudaMemcpy %d\n", (int)e);
    scale<<<n / 256, 256>>>(d, 2.0f, n);
    std::printf("launch %d\n", (int)cudaGetLastError());
    e = cudaDeviceSynchronize();
    std::printf("cudaDeviceSynchronize %d\n", (int)e);
    e = cudaFree(d);
    std::printf("cudaFree %d\n", (int)e);
    return e == cudaSuccess ? 0 : 3;
}
'''


def test():
    nvcc = os.path.join(CUDA_HOME, "bin", "nvcc")
    if not os.access(nvcc, os.X_OK):
        skip("no nvcc under %s" % CUDA_HOME)
    with open("prog.cu", "w") as f:
        f.write(SOURCE)
    libdir = os.path.join(CUDA_HOME, "lib64")
    build = run([nvcc, "-cudart", "shared", "-o", "prog", "prog.cu", "-Xlinker", "-rpath=" + libdir], timeout=300)
    if build.rc != 0:
        skip("nvcc cannot build here: " + short(build.err.strip().splitlines()[-1] if build.err.strip() else "", 200))
    plain = run(["./prog"])
    r, rep = profile(["./prog"], "OUT", expect_rc=plain.rc)
    check_eq(r.out, plain.out, "the program's output under profwrap vs without")
    codes = dict(line.split() for line in plain.out.splitlines())
    ctx = "\ncalls:\n" + describe_calls(rep)
    for name in ("cudaMalloc", "cudaMemcpy", "cudaDeviceSynchronize", "cudaFree"):
        c = call(rep, "cudart", name)
        check(c is not None, "no cudart.%s in the report%s", name, ctx)
        check_eq(c["count"], 1, "cudart.%s count" % name)
        check_eq(c["errors"], 0 if codes[name] == "0" else 1, "cudart.%s errors (the program saw %s)" % (name, codes[name]))
        if codes[name] != "0":
            errs = [e for e in rep["gpu_errors"] if e["call"] == name]
            check(errs and errs[0]["code"] == int(codes[name]), "gpu_errors for %s: %r (the program saw %s)",
                  name, rep["gpu_errors"], codes[name])
    # The <<<>>> launch reached cudaLaunchKernel from nvcc's host stub (it may fail before, without a GPU).
    launched = call(rep, "cudart", "cudaLaunchKernel")
    if codes["cudaMalloc"] == "0":
        check(launched is not None and launched["count"] == 1, "cudaLaunchKernel not recorded%s", ctx)
        names = [k["name"] for k in rep["kernels_launched"]]
        check(any("scale" in n for n in names), "kernel name 'scale' not among %r", names)
    elif launched is not None:
        check_eq(launched["count"], 1, "cudart.cudaLaunchKernel count")


main(test)
