"""Many launching threads at default settings (tests/workloads/cuda_threads.c on the fake libraries, whose CUPTI
fills one buffer per launching thread, as CUPTI 13 does and as profwrap asks explicitly): profwrap's buffer
pool holds a buffer for each, so no request is refused and no record dropped; every kernel is recorded."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_threads")
    plain = run([prog])
    check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
    expect = {e[0]: int(e[1]) for e in parse_expect(plain.out)}
    r, rep = profile([prog], "OUT")
    act = rep["gpu_activity"]
    check_eq(act["buffers_refused"], 0, "CUPTI's requests for a buffer refused")
    check_eq(act["dropped"], 0, "records CUPTI dropped")
    check_eq(act["kernels"], expect["kernels"], "kernels recorded")


main(test)
