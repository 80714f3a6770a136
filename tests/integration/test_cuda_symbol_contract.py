"""Every CUDA function of a kind that matters that real binaries import is interposed by libprofwrap.so, or
passed through on purpose: launches and graph launches, copies, memsets, syncs, allocations and frees, GEMMs,
cuDNN executes, collectives and group calls, profiler start/stop, from what nvcc-built programs and the PyTorch
wheel's libraries import (tests/contract/cuda-imports.txt; scripts/cuda-contract.py refreshes it). A name that
neither libprofwrap.so defines nor tests/contract/passthrough.txt lists with a reason is missing: the profiler
would not see those calls. Stale pass-through entries (interposed, no longer imported, or of no kind that
matters) fail too.

Second: every imported name libprofwrap.so defines is exported by the real library the import binds to, as
the snapshot records the wheel's exports: profwrap never wraps a name the library does not have."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403
from cuda_contract import bound_library, load_passthrough, load_snapshot, need_nm, wrapped_functions  # noqa: E402

# (kind, rule): the first rule a name matches gives its kind. <<<>>> compiles into __cudaPushCallConfiguration,
# then, in the kernel's host stub, __cudaPopCallConfiguration, __cudaGetKernel and __cudaLaunchKernel: all part
# of a launch.
KIND_RULES = [
    ("launch", re.compile(r"^(cudaLaunch|__cudaLaunchKernel|__cudaGetKernel|__cuda(Push|Pop)CallConfiguration"
                          r"|cudaGraphLaunch|cuLaunch|cuGraphLaunch)")),
    ("copy", re.compile(r"^cu(da)?Memcpy")),
    ("memset", re.compile(r"^cu(da)?Memset")),
    ("sync", re.compile(r"^(cuda|cu[A-Z])\w*Synchronize|^cu(da)?(StreamWaitEvent|EventQuery|StreamQuery)")),
    ("alloc", re.compile(r"^(cudaMalloc|cudaFree|cudaHostAlloc|cudaHostRegister|cudaHostUnregister"
                         r"|cuMemAlloc|cuMemFree|cuMemHostAlloc|cuMemHostRegister|cuMemHostUnregister)")),
    # cuBLASLt's GEMM is cublasLtMatmul; its other *Gemm*/*Matmul* names (cublasLtLegacyGemmSSS,
    # cublasLtSSSMatmul) are private entries that only libcublas calls, declared in no header.
    ("gemm", re.compile(r"^cublas(?!lt)\w*gemm|^cublasLtMatmul$", re.I)),
    ("dnn-execute", re.compile(r"^cudnnBackendExecute$|^cudnn\w*(Forward|Backward)")),
    ("collective", re.compile(r"^p?nccl(AllReduce|AllGather|ReduceScatter|Reduce|Broadcast|Bcast|AlltoAll"
                              r"|Gather|Scatter|Send|Recv|PutSignal|Signal|WaitSignal"
                              r"|GroupStart|GroupEnd|GroupSimulateEnd)$")),
    ("profiler", re.compile(r"^cu(da)?Profiler(Start|Stop)$")),
]
# cuDNN's descriptor, workspace-size, algorithm-choice and getter functions name Forward/Backward too; its
# algorithm searches (cudnnFind*AlgorithmEx) run every algorithm on the GPU, and so are executions.
DNN_NOT_EXECUTE = re.compile(r"Get|Set|Create|Destroy|WorkspaceSize|Descriptor|ReserveSpace|Algorithm(?!Ex$)")
KINDS = [kind for kind, _ in KIND_RULES]


def kind_of(name):
    for kind, rule in KIND_RULES:
        if rule.search(name):
            if kind == "dnn-execute" and DNN_NOT_EXECUTE.search(name):
                return None
            return kind
    return None


def test():
    if not os.path.exists(os.path.join(CUDA_HOME, "include", "cuda_runtime_api.h")):
        skip("no CUDA headers under %s: libprofwrap.so is built without the GPU library wrappers" % CUDA_HOME)
    need_nm()
    snap = load_snapshot()
    reasons = load_passthrough()
    wrapped = wrapped_functions(LIB)
    check(wrapped, "libprofwrap.so (%s) defines no CUDA library function", LIB)

    kinds = {name: kind_of(name) for name in snap.imports}
    problems = []
    counts = {kind: [0, 0, 0] for kind in KINDS}  # interposed, passed through, missing
    for name in sorted(n for n, k in kinds.items() if k):
        kind = kinds[name]
        if name in wrapped:
            counts[kind][0] += 1
        elif name in reasons:
            counts[kind][1] += 1
        else:
            counts[kind][2] += 1
            problems.append("missing %s %s (%s; imported by %s)" % (
                kind, name, ",".join(sorted(snap.imports[name])), ",".join(snap.importers(name))))

    for name in sorted(reasons):
        if name in wrapped:
            problems.append("stale pass-through %s: libprofwrap.so interposes it" % name)
        elif name not in snap.imports:
            problems.append("stale pass-through %s: no binary in the snapshot imports it" % name)
        elif not kinds[name]:
            problems.append("needless pass-through %s: of no kind that matters" % name)

    # Wrapping a name the real library lacks is dead code, or a typo that leaves the real name unwrapped.
    for name in sorted(set(snap.imports) & set(wrapped)):
        for soname in sorted(snap.imports[name]):
            lib = bound_library(name, soname)
            if name not in snap.exports.get(lib, {}):
                problems.append("libprofwrap.so wraps %s, imported from %s, which the real %s does not export" % (
                    name, soname, lib))

    for kind in KINDS:
        note("%-12s %3d interposed, %3d passed through, %3d missing" % ((kind,) + tuple(counts[kind])))
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    for line in problems:
        note(line)
    note("%d imported entry points of the kinds that matter: %d interposed, %d passed through with a reason, "
         "%d missing" % (sum(total), total[0], total[1], total[2]))
    check(not problems, "%d problems with the CUDA symbol contract (listed above)", len(problems))


main(test)
