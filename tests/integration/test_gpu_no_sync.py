"""GPU activity of a program that never waits through a CUDA call and is then killed (SIGKILL: no exit
handler runs): tests/workloads/cuda_no_sync.c on the fake libraries. Its kernels finish at once but stay in a
partly filled CUPTI buffer, which CUPTI's own worker never delivers (it delivers full buffers only); profwrap's
flushing thread delivers it within a flush period, so every kernel is in the report. A process that handles
SIGTERM by calling exit() keeps every kernel through the exit's forced flush, whatever the period."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_no_sync")
    env = dict(os.environ, PROFWRAP_CUPTI_FLUSH_MS="100")
    r, rep = profile([prog, "1.5"], "OUT", expect_rc=None, env=env)
    expect = {e[0]: int(e[1]) for e in parse_expect(r.out)}
    check_eq(expect.get("kernels"), 9, "the workload's own count (it printed: %r)" % r.out)
    act = rep["gpu_activity"]
    check_eq(act["status"], "recording", "GPU activity status")
    check_eq(act["kernels"], expect["kernels"], "kernels recorded of a process killed before any flush of its own")

    # SIGTERM handled by exit(), with a flush period longer than the run: the exit's forced flush keeps all
    r, rep = profile([prog, "0.3", "term"], "OUT-term", expect_rc=None,
                     env=dict(os.environ, PROFWRAP_CUPTI_FLUSH_MS="60000"))
    check_eq(r.rc, 0, "exit status after SIGTERM handled by exit(0)\n" + r.describe())
    check_eq(rep["gpu_activity"]["kernels"], expect["kernels"], "kernels recorded of a process ended by SIGTERM")


main(test)
