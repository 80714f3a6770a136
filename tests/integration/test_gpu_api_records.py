"""CUPTI's API records only of the calls that enqueue work (tests/workloads/cuda_api_noise.c on the fake
libraries, whose CUPTI, like the real one, makes an API record of every runtime call when the RUNTIME kind is
on): 2,000 cudaGetDevice/cudaSetDevice calls among 10 launches. profwrap asks CUPTI for the records of the
launching functions alone (cuptiActivityEnableRuntimeApi/DriverApi), as production profilers turn the
others off: the records CUPTI delivers stay proportional to the GPU work, not to the program's calls, and
every kernel is still tied to its launch."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_api_noise")
    plain = run([prog])
    check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
    expect = {e[0]: int(e[1]) for e in parse_expect(plain.out)}
    r, rep = profile([prog], "OUT")
    act = rep["gpu_activity"]
    check_eq(act["kernels"], expect["kernels"], "kernels recorded")
    check_eq(act["kernels_linked"], expect["kernels"], "kernels linked to their wrapped launch")
    check_eq(count(rep, "cudart", "cudaGetDevice"), expect["quiet"] // 2, "cudaGetDevice calls recorded")
    # per kernel: the kernel, its launch's API record and external correlation; plus device and overhead
    # records: far below one record per quiet call
    check(act["records"] <= 4 * expect["kernels"] + 20,
          "CUPTI records: %d for %d kernels among %d calls that enqueue nothing (API records of every call?)",
          act["records"], expect["kernels"], expect["quiet"])
    gpu = rep["gpus"][0]
    check_eq(gpu["launches"], expect["kernels"], "kernels with a known launch (launch latency)")


main(test)
