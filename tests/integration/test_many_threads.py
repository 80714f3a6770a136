"""Many threads at default settings (issue 19, item 4): 100 threads released together each write 2,000 bytes
to /dev/null, one write() at a time, as a PyTorch process's 50-100 threads make calls. Each thread gets a
lane of its own (128 by default), grown as it fills, so nothing is dropped: every thread's writes are in
the raw trace, exactly, and the report counts 100 x 2,000 writes."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

THREADS = 100
WRITES = 2000


def test():
    r, rep = profile([workload("flood"), str(THREADS), str(WRITES)], "OUT", opts=["--trace=io"])
    check_eq(r.out, "threads %d writes %d failed 0\n" % (THREADS, WRITES), "the flood's own output")
    p = processes(rep)[0]
    check_eq((rep["dropped_events"], p["thread_drops"]), (0, []), "drops at default settings")
    raws = [os.path.join("OUT", "raw", n) for n in os.listdir(os.path.join("OUT", "raw")) if n.endswith(".pwt")]
    recorded = {}
    for rec in raw_records(raws[0], events=["write"]):
        recorded[rec["tid"]] = recorded.get(rec["tid"], 0) + 1
    check_eq(sorted(recorded.values()), [WRITES] * THREADS, "writes recorded per thread")
    check_eq(count(rep, "io", "write"), THREADS * WRITES, "io.write count in the report")
    note("%d threads x %d writes: all recorded, none dropped" % (THREADS, WRITES))


main(test)
