"""Ring full under a producer flood (design property 2, "a full ring drops the new record and counts it"):
64 threads released together write flat out into 4 KiB lanes, more threads than lanes, so most records
find their lane full or the shared lane busy. The target never blocks (it finishes, prints what it did and
exits 0), and for every thread the writes recorded in the raw trace plus the drops counted for it equal the
writes it made, exactly; the process's drops add up to the report's, and rank0.txt names the threads."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

THREADS = 64
WRITES = 20000


def test():
    cmd = [workload("flood"), str(THREADS), str(WRITES)]
    r, rep = profile(cmd, "OUT", opts=["--trace=io", "--ring-size=4K"])
    check_eq(r.out, "threads %d writes %d failed 0\n" % (THREADS, WRITES), "the flood's own output")
    procs = processes(rep)
    check_eq(len(procs), 1, "processes\n" + describe_processes(rep))
    p = procs[0]
    check_eq((p["how"], p["exit_code"]), ("exited", 0), "(how, exit_code) of the flood")

    raws = [os.path.join("OUT", "raw", n) for n in os.listdir(os.path.join("OUT", "raw")) if n.endswith(".pwt")]
    check_eq(len(raws), 1, "raw traces: %r" % raws)
    recorded = {}
    for rec in raw_records(raws[0], events=["write"]):
        recorded[rec["tid"]] = recorded.get(rec["tid"], 0) + 1
    dropped = {t["tid"]: t["dropped"] for t in p["thread_drops"]}
    writers = set(recorded) | set(dropped)
    check_eq(len(writers), THREADS, "threads that wrote (recorded or dropped)")
    for tid in sorted(writers):
        check_eq(recorded.get(tid, 0) + dropped.get(tid, 0), WRITES,
                 "recorded + dropped writes of thread %d (recorded %d, dropped %d)"
                 % (tid, recorded.get(tid, 0), dropped.get(tid, 0)))
    total_dropped = sum(dropped.values())
    check(total_dropped > 0, "no record was dropped: the flood did not fill the rings")
    check(sum(recorded.values()) > 0, "no write was recorded")
    check_eq(p["dropped"], total_dropped, "the process's dropped count against its threads' sum")
    check_eq(rep["dropped_events"], total_dropped, "dropped_events")
    check_eq(count(rep, "io", "write"), sum(recorded.values()), "io.write count in the report")
    note("recorded %d, dropped %d of %d writes" % (sum(recorded.values()), total_dropped, THREADS * WRITES))

    with open(os.path.join("OUT", "rank0.txt")) as f:
        text = f.read()
    m = re.search(r"^  pid %d dropped (\d+): (.*)$" % p["pid"], text, re.M)
    check(m, "rank0.txt does not list the drops by thread:\n%s", text)
    check_eq(int(m.group(1)), total_dropped, "drops in rank0.txt's line")
    first = re.match(r"tid (\d+): (\d+)", m.group(2))
    check(first and dropped.get(int(first.group(1))) == int(first.group(2)) == max(dropped.values()),
          "the first thread listed is not the one that dropped most: %r", m.group(0))

main(test)
