"""_exit from a signal handler that interrupts CUDA (tests/workloads/cuda_exit_in_handler.c on the fake
libraries: kernels launched without end, a SIGALRM every 50 us whose handler calls _exit(0)). The fake CUPTI,
as CUPTI does, writes a launch's records under its lock on the launching thread, so the handler often runs with
that lock held; profwrap's _exit must not flush CUPTI then (it flushes only outside any GPU call of the
thread), or the process waits for its own lock forever. 20 runs, none may
hang: before the fix, some did (2 in 15, and 1 in 2 runs of 20 here)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

RUNS = 20


def test():
    fakes_dir()
    prog = workload("cuda_exit_in_handler")
    plain = run([prog], timeout=20)
    check_eq(plain.rc, 0, "the workload without profwrap\n" + plain.describe())
    for i in range(RUNS):
        r, rep = profile([prog], "OUT-%d" % i, timeout=20)
        check_eq(rep["processes"][-1]["exit_code"], 0, "run %d: the workload's exit code in the report" % i)


main(test)
