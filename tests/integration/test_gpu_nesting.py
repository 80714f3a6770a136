"""GPU library calls inside other GPU library calls, and NCCL groups (tests/workloads/cuda_nesting.c on the
fake libraries, which print their ground truth as `expect` lines).

- The fake cuDNN's explicit-GEMM convolution calls cublasLtMatmul through dlopen/dlsym, as cuDNN 9's engines
  do, and profwrap hands it its wrapper: that call is recorded as nested (nested_calls, exactly), is in no
  other figure (not in calls, not in GPU time by call), and its kernel belongs to the cuDNN call: GPU time by
  call gives cudnnConvolutionForward both kernels of each convolution.
- The kernels an NCCL group's ncclGroupEnd launches are linked to the group's collectives (each kind of call
  in a group counts the group's kernels; the time is shared, so the rows add up to the kernels' time), never
  to ncclGroupStart/ncclGroupEnd; every kernel inside a wrapped call is linked to it.
- Kernels launched under another CUPTI client's external ids (CUSTOM0, as PyTorch's Kineto pushes them), equal
  to profwrap's own first ids, are tied to no wrapped call (only to the CUDA API record that launched them)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_nesting")
    plain = run([prog])
    check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
    expect = parse_expect(plain.out)
    r, rep = profile([prog], "OUT")
    check_eq(r.out, plain.out, "the program's output under profwrap vs without")
    ctx = "\ncalls:\n" + describe_calls(rep)

    domains = gpu_event_names()
    for _, name, n in (e for e in expect if e[0] == "call"):
        c = call(rep, domains[name], name)
        check(c is not None and c["count"] == int(n), "%s: %s calls, expected %s%s", name,
              c and c["count"], n, ctx)
    nested = {c["name"]: c["count"] for c in rep["nested_calls"]}
    check_eq(nested, {e[1]: int(e[2]) for e in expect if e[0] == "nested"}, "nested_calls")
    for name in nested:
        check(call(rep, domains[name], name) is None, "nested %s is also in calls%s", name, ctx)

    act = rep["gpu_activity"]
    total = int(next(e[1] for e in expect if e[0] == "kernels"))
    wrapped = int(next(e[1] for e in expect if e[0] == "kernels-wrapped"))
    check_eq(act["kernels"], total, "kernels the GPU ran")
    # cublasSgeam's kernels ran under another client's ids (CUSTOM0), equal to profwrap's first ones
    check_eq(act["kernels_linked"], wrapped, "kernels linked to a wrapped call (not to a stranger's id)")
    check_eq(act["kernels_linked_api"], total - wrapped, "kernels linked to CUDA API records only")
    by_call = {c["call"]: c for c in rep["gpu_time_by_call"]}
    kernels_of = {e[1]: int(e[2]) for e in expect if e[0] == "kernels-of"}
    check_eq(by_call.get("cudnnConvolutionForward", {}).get("kernels"), kernels_of["cudnnConvolutionForward"],
             "kernels of cudnnConvolutionForward, its nested GEMMs' included (%r)" % by_call)
    for name in nested:
        check(name not in by_call, "nested %s has GPU time of its own: %r", name, by_call)
    for name in ("ncclGroupStart", "ncclGroupEnd"):
        check(name not in by_call, "%s has GPU time: a group's kernels are its collectives' (%r)", name, by_call)

    nccl_kernels = [k for k in rep["kernels"] if "ncclDevKernel_" in k["name"]]
    check_eq(sum(k["count"] for k in nccl_kernels), kernels_of["nccl"], "NCCL kernels the GPU ran")
    nccl_ns = sum(k["total_ns"] for k in nccl_kernels)
    rows = [c for name, c in by_call.items() if name.startswith("nccl")]
    check_eq(sum(c["kernel_ns"] for c in rows), nccl_ns, "NCCL calls' shares of the NCCL kernels' time (%r)" % rows)
    groups = int(next(e[2] for e in expect if e[:2] == ["call", "ncclGroupEnd"]))
    # per group: a send/receive kernel and an all-reduce kernel, both counted on each kind of call in it
    check_eq(by_call["ncclSend"]["kernels"], 2 * groups, "kernels of ncclSend (groups only)")
    check_eq(by_call["ncclRecv"]["kernels"], 2 * groups, "kernels of ncclRecv (groups only)")
    check_eq(by_call["ncclAllReduce"]["kernels"], 2 * groups + 1, "kernels of ncclAllReduce (in groups and alone)")


main(test)
