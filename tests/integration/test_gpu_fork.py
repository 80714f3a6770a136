"""Fork children and CUDA (tests/workloads/cuda_fork.c on the fake libraries, whose driver, like the real one,
cannot be used in a fork child of a process that initialised it; CUPTI's activity API initialises it).

- before: a child forked before the parent used CUDA uses CUDA itself. profwrap must not have initialised the
  driver in the parent (CUPTI starts at the first GPU call, not when libcudart is loaded): the child's launches
  succeed, as without profwrap, and its kernels are recorded with the parent's.
- after: a child forked after the parent used CUDA cannot; its failure is the program's own, unchanged, and the
  report counts it (fork_children_without_cuda) instead of recording nothing silently."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_fork")
    for mode, child in (("before", "child launches ok"), ("after", "child cudaMalloc cudaErrorInitializationError")):
        plain = run([prog, mode])
        check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
        check(child in plain.out, "%s: the child without profwrap:\n%s", mode, plain.out)
        expect = {e[0]: int(e[1]) for e in parse_expect(plain.out)}
        r, rep = profile([prog, mode], "OUT-" + mode)
        check_eq(r.out, plain.out, "%s: the program's output under profwrap vs without" % mode)
        act = rep["gpu_activity"]
        check_eq(act["status"], "recording", "%s: GPU activity status" % mode)
        check_eq(act["kernels"], expect["kernels"], "%s: kernels recorded, in both processes" % mode)
        check_eq(count(rep, "cudart", "cudaLaunchKernel"), expect["launches"], "%s: cudaLaunchKernel calls" % mode)
        check_eq(act["fork_children_without_cuda"], 1 if mode == "after" else 0,
                 "%s: fork children that could not use CUDA" % mode)


main(test)
