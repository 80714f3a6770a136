"""/dev/shm given back: a thread's lane memory returns to /dev/shm once the thread has ended and the collector
has read the lane, so a program that later needs the space finds it. In a mount namespace with a 64 MiB tmpfs
on /dev/shm (Docker's default), tests/workloads/shm_threads: 16 threads each write 200,000 times at once
(their 2 MiB lanes fill) and end; then the program waits until /dev/shm has 40 MiB free (at most 30 s) and
takes 40 MiB of its own (shm_open + posix_fallocate), as DataLoader workers pass batches. Before, profwrap kept the ended threads' 32 MiB and the
program's 40 MiB never fit. Also: every write is counted (events + drops), and the report states the most
/dev/shm the process's segment held (more than the 16 lanes' worth, less than the tmpfs)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

THREADS, WRITES = 16, 200000

def test():
    need_shm_namespace()
    cmd = [workload("shm_threads"), "0", str(THREADS), str(WRITES), "40"]
    plain = in_shm(64, cmd)
    want = '{"writes":%d,"took":1}\n' % (THREADS * WRITES)
    check_eq((plain.rc, plain.out), (0, want), "without profwrap (the test's premise)\n" + plain.describe())
    r = in_shm(64, [PROFWRAP, "-q", "-o", "OUT", "--"] + cmd)
    check_eq((r.rc, r.out), (0, want), "under profwrap\n" + r.describe())
    rep = load_report("OUT")
    writes = count(rep, "io", "write")
    check_eq(writes + rep["dropped_events"] >= THREADS * WRITES, True,
             "writes %d + dropped %d cover the %d made" % (writes, rep["dropped_events"], THREADS * WRITES))
    peak = rep["profwrap_cost"]["shm_peak_bytes"]
    check_range(peak, 2 << 20, 64 << 20, "profwrap_cost.shm_peak_bytes")
    check_eq(rep["profwrap_cost"]["shm_peak_pid"], rep["processes"][0]["pid"], "profwrap_cost.shm_peak_pid")
    note("16 threads ended, then 40 MiB of the program's own fit; profwrap's segment held at most %.1f MiB"
         % (peak / 1048576.0))


main(test)
