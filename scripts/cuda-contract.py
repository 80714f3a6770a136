#!/usr/bin/env python3
"""The CUDA contract, taken from real binaries: writes tests/contract/cuda-imports.txt, the CUDA runtime, driver,
cuBLAS, cuBLASLt, cuDNN and NCCL functions that real programs and libraries import, and the functions the
libraries they bind to export. tests/integration/test_cuda_symbol_contract.py checks libprofwrap.so against it
(every launch, copy, sync, allocation, GEMM, cuDNN execute and collective imported is interposed, or passed
through with a reason in tests/contract/passthrough.txt) and test_fake_exports.py checks the fakes against it.

The importers: small programs built here with nvcc -cudart shared (<<<>>> launches on the default stream and
on a created stream, compiled plainly and with --default-stream per-thread; cudaLaunchKernelEx, the template
of cuda_runtime.h; cuBLAS, cuBLASLt, cuDNN and NCCL calls), and the PyTorch wheel's shared libraries (torch/lib,
the nvidia-* wheels' cudart, cuBLAS, cuBLASLt, cuDNN and NCCL, triton's). The exports: the wheel's libcudart,
libcublas, libcublasLt, libcudnn* and libnccl, and the toolkit's driver stub (lib64/stubs/libcuda.so).

Refresh the snapshot when PyTorch moves: `make e2e` installs the new wheel, then run scripts/cuda-contract.py
and commit tests/contract/cuda-imports.txt (review the new imports against passthrough.txt). --check
regenerates to a temporary file and diffs it against the committed one (exit 1 when they differ).

Needs nm and readelf (binutils), nvcc, and the e2e virtual environment. Python 3 standard library only.
"""
import argparse
import concurrent.futures
import difflib
import glob
import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "contract", "cuda-imports.txt")

# The libraries whose names the contract is about. cu[A-Z] is the driver API; cuFile* shares the pattern but is
# libcufile's.
CONTRACT_NAME = re.compile(r"^(__cuda|cuda|cu[A-Z]|cublas|cudnn|nccl|pnccl)")
NOT_CONTRACT_NAME = re.compile(r"^cuFile")

LAUNCH_SOURCE = r'''
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

int main()
{
    const int n = 1024;
    static float host[n];
    float *dev = nullptr;
    cudaMalloc(&dev, sizeof host);
    cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
    scale<<<n / 256, 256>>>(dev, 2.0f, n);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    scale<<<n / 256, 256, 0, stream>>>(dev, 0.5f, n);
    cudaMemsetAsync(dev, 0, sizeof host, stream);
    cudaMemcpyAsync(host, dev, sizeof host, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    cudaDeviceSynchronize();
    cudaFree(dev);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''

LAUNCH_EX_SOURCE = r'''
#include <cuda_runtime.h>

__global__ void fill(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

int main()
{
    const int n = 1024;
    float *dev = nullptr;
    cudaMalloc(&dev, n * sizeof(float));
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributePriority;
    attr.val.priority = 0;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(n / 256);
    config.blockDim = dim3(256);
    config.attrs = &attr;
    config.numAttrs = 1;
    cudaLaunchKernelEx(&config, fill, dev, 1.0f, n);
    cudaDeviceSynchronize();
    cudaFree(dev);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
'''

LIBRARIES_SOURCE = r'''
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

int main()
{
    const int n = 64;
    float *a = nullptr, *c = nullptr;
    cudaMalloc(&a, n * n * sizeof(float));
    cudaMalloc(&c, n * n * sizeof(float));
    const float one = 1.0f, zero = 0.0f;

    cublasHandle_t blas;
    cublasCreate(&blas);
    cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, a, n, &zero, c, n);
    cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_32F, n, a, CUDA_R_32F, n, &zero, c,
                 CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasDestroy(blas);

    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t layout;
    cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, n, n, n);
    cublasLtMatmul(lt, op, &one, a, layout, a, layout, &zero, c, layout, c, layout, nullptr, nullptr, 0, 0);
    cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(lt);

    cudnnHandle_t dnn;
    cudnnCreate(&dnn);
    cudnnTensorDescriptor_t t;
    cudnnCreateTensorDescriptor(&t);
    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, n, n);
    cudnnSoftmaxForward(dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one, t, a, &zero, t, c);
    cudnnBackendDescriptor_t plan = nullptr, pack = nullptr;
    cudnnBackendExecute(dnn, plan, pack);
    cudnnDestroyTensorDescriptor(t);
    cudnnDestroy(dnn);

    ncclComm_t comm;
    int device = 0;
    ncclCommInitAll(&comm, 1, &device);
    ncclGroupStart();
    ncclAllReduce(a, c, n * n, ncclFloat, ncclSum, comm, 0);
    ncclGroupEnd();
    ncclCommDestroy(comm);

    cudaFree(c);
    cudaFree(a);
    return 0;
}
'''

NVCC_SOURCES = {"launch.cu": LAUNCH_SOURCE, "launch_ex.cu": LAUNCH_EX_SOURCE, "libraries.cu": LIBRARIES_SOURCE}
# The programs built with nvcc: (importer label, source, extra nvcc flags, extra libraries).
PER_THREAD = ["--default-stream", "per-thread"]
NVCC_PROGRAMS = [
    ("nvcc:launch", "launch.cu", [], []),
    ("nvcc:launch-per-thread", "launch.cu", PER_THREAD, []),
    ("nvcc:launch-ex", "launch_ex.cu", [], []),
    ("nvcc:launch-ex-per-thread", "launch_ex.cu", PER_THREAD, []),
    ("nvcc:libraries", "libraries.cu", [], ["-lcublas", "-lcublasLt", "-lcudnn", "-lnccl"]),
]


class ContractError(Exception):
    """Something the snapshot needs is missing or failed; the message says what."""


def run(args, **kw):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)
    if r.returncode != 0:
        raise ContractError("%s exited %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()[-2000:]))
    return r.stdout


def dynamic_symbols(path, which):
    """[(name, version suffix or None, nm type)] of path's dynamic symbol table; which is --undefined-only or
    --defined-only. nm writes `name@tag` for a reference bound to a version (the suffix `@tag`), `name@@tag`
    for a default definition (`@@tag`)."""
    symbols = []
    for line in run(["nm", "-D", which, path]).splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        kind, full = fields[-2], fields[-1]
        at = full.find("@")
        if at < 0:
            symbols.append((full, None, kind))
        else:
            symbols.append((full[:at], full[at:], kind))
    return symbols


def is_contract_name(name):
    return bool(CONTRACT_NAME.match(name)) and not NOT_CONTRACT_NAME.match(name)


def soname(path):
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", run(["readelf", "-d", path]))
    return m.group(1) if m else os.path.basename(path)


def build_nvcc_programs(nvcc, libdir, workdir):
    """Builds NVCC_PROGRAMS in workdir, in parallel; returns [(importer label, binary path)]."""
    def build(index, program):
        label, source_name, flags, libs = program
        binary = os.path.join(workdir, "prog%d" % index)
        run([nvcc, "-cudart", "shared"] + flags + ["-o", binary, os.path.join(workdir, source_name), "-L" + libdir]
            + libs)
        return label, binary

    for source_name, source in NVCC_SOURCES.items():
        with open(os.path.join(workdir, source_name), "w") as f:
            f.write(source)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(lambda p: build(*p), enumerate(NVCC_PROGRAMS)))


def site_packages(venv):
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages")))
    if not found or not os.path.isdir(os.path.join(found[-1], "torch", "lib")):
        raise ContractError("no PyTorch in %s (make e2e installs it, or name another with --venv)" % venv)
    return found[-1]


def need_files(site, pattern):
    found = sorted(glob.glob(os.path.join(site, pattern), recursive=True))
    if not found:
        raise ContractError("nothing matches %s in %s" % (pattern, site))
    return found


def need_file(path):
    if not os.path.isfile(path):
        raise ContractError("missing %s" % path)
    return path


def wheel_importers(site):
    """[(importer label, path)]: the wheel's shared objects, labelled by file name (triton's by their path from
    site-packages: it ships several libcupti copies)."""
    paths = need_files(site, "torch/lib/*.so")
    paths += [need_file(os.path.join(site, "nvidia", "cu13", "lib", name))
              for name in ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13")]
    paths += need_files(site, "nvidia/cudnn/lib/libcudnn*.so.9")
    paths.append(need_file(os.path.join(site, "nvidia", "nccl", "lib", "libnccl.so.2")))
    triton = [p for p in need_files(site, "triton/**/*.so*") if not os.path.islink(p)]
    return [(os.path.basename(p), p) for p in paths] + [(os.path.relpath(p, site), p) for p in triton]


def exporting_libraries(site, cuda_home):
    """[(soname, path)]: the wheel's libraries the imports bind to, and the driver as the toolkit's stub
    declares it (the wheel has no driver)."""
    paths = [need_file(os.path.join(site, "nvidia", "cu13", "lib", name))
             for name in ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13")]
    paths += need_files(site, "nvidia/cudnn/lib/libcudnn*.so.9")
    paths += [need_file(os.path.join(site, "nvidia", "nccl", "lib", "libnccl.so.2")),
              need_file(os.path.join(cuda_home, "lib64", "stubs", "libcuda.so"))]
    return [(soname(p), p) for p in paths]


def versions(site, nvcc):
    """The header's version lines: nvcc's release, torch.__version__ (from torch/version.py: importing torch
    would need the venv's interpreter), triton's and every nvidia-* wheel's version."""
    release = [line for line in run([nvcc, "--version"]).splitlines() if "release" in line]
    lines = ["nvcc: " + (release[0].strip() if release else "unknown")]
    with open(os.path.join(site, "torch", "version.py")) as f:
        m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", f.read(), re.M)
    lines.append("torch " + (m.group(1) if m else "unknown"))
    wheels = {}
    for dist in importlib.metadata.distributions(path=[site]):
        name = dist.metadata["Name"]
        if name and (name.lower() == "triton" or name.lower().startswith("nvidia-")):
            wheels[name.lower()] = dist.version
    lines += ["%s %s" % item for item in sorted(wheels.items())]
    return lines


def snapshot(venv, cuda_home):
    """The snapshot's text."""
    site = site_packages(venv)
    nvcc = os.path.join(cuda_home, "bin", "nvcc")
    if not os.access(nvcc, os.X_OK):
        raise ContractError("no nvcc at %s (--cuda-home)" % nvcc)
    with tempfile.TemporaryDirectory(prefix="cuda-contract-") as workdir:
        importers = build_nvcc_programs(nvcc, os.path.join(cuda_home, "lib64"), workdir)
        importers += wheel_importers(site)
        imports = {}
        for label, path in importers:
            for name, version, _ in dynamic_symbols(path, "--undefined-only"):
                if is_contract_name(name):
                    imports.setdefault((version.lstrip("@") if version else "-", name), set()).add(label)
    exports = set()
    for lib, path in exporting_libraries(site, cuda_home):
        for name, version, kind in dynamic_symbols(path, "--defined-only"):
            if kind in ("T", "W", "i") and is_contract_name(name):
                exports.add((lib, name, version or "-"))

    header = [
        "tests/contract/cuda-imports.txt: the CUDA functions real binaries import, and what the libraries they",
        "bind to export. Written by scripts/cuda-contract.py (see it for how to refresh); do not edit.",
        "import <soname the reference is bound to, - when unversioned> <function> <importers>",
        "export <soname> <function> <version as nm -D writes it (@@tag: the default), - when unversioned>",
        "Importers: nvcc:* are programs built with the toolkit's nvcc -cudart shared; the others are the wheel's",
        "shared objects. Exports: the wheel's libraries; libcuda.so.1 is the toolkit's driver stub.",
    ] + versions(site, nvcc)
    lines = ["# " + line for line in header]
    lines += ["import %s %s %s" % (lib, name, ",".join(sorted(labels)))
              for (lib, name), labels in sorted(imports.items())]
    lines += ["export %s %s %s" % entry for entry in sorted(exports)]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Writes the CUDA contract snapshot, tests/contract/cuda-imports.txt.")
    parser.add_argument("--venv", default=os.environ.get("PROFWRAP_E2E_VENV") or os.path.expanduser(
        "~/.cache/profwrap/e2e-venv"), help="the e2e virtual environment holding the PyTorch wheel")
    parser.add_argument("--cuda-home", default=os.environ.get("CUDA_HOME") or "/usr/local/cuda",
                        help="the CUDA toolkit (nvcc, lib64, the driver stub)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="the snapshot to write (default %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate and compare with --out instead of writing it; exit 1 when they differ")
    args = parser.parse_args()
    try:
        text = snapshot(args.venv, args.cuda_home)
    except (ContractError, OSError) as e:
        print("cuda-contract: %s" % e, file=sys.stderr)
        return 2
    if args.check:
        try:
            with open(args.out) as f:
                old = f.read()
        except OSError as e:
            print("cuda-contract: %s" % e, file=sys.stderr)
            return 2
        diff = list(difflib.unified_diff(old.splitlines(), text.splitlines(), args.out, "regenerated", lineterm=""))
        if diff:
            print("\n".join(diff))
            print("cuda-contract: %s is out of date (%d lines differ); run scripts/cuda-contract.py" % (
                args.out, sum(1 for d in diff[2:] if d[:1] in "+-")))
            return 1
        print("cuda-contract: %s is up to date" % args.out)
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print("cuda-contract: wrote %s (%d imports, %d exports)" % (
        args.out, text.count("\nimport "), text.count("\nexport ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
