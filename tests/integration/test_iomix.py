"""iomix (threads writing and reading their own files, sleeps, forked children with known exit codes)
prints the exact figures it produced; the report must match them. A small ring must account for every
call as either recorded or dropped."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def run_iomix(out, threads, blocks, block_bytes, sleeps, forks, opts=()):
    iomix = workload("iomix")
    data = tmpdir("data-")
    r, rep = profile([iomix, data, str(threads), str(blocks), str(block_bytes), str(sleeps), str(forks)], out,
                     opts=opts)
    try:
        truth = json.loads(r.out)
    except ValueError:
        raise Fail("iomix did not print its figures as JSON\n" + r.describe())
    return r, rep, truth, data


def test_big_ring():
    threads, blocks, block_bytes, sleeps, forks = 4, 1000, 4096, 5, 3
    r, rep, truth, data = run_iomix("OUT", threads, blocks, block_bytes, sleeps, forks)
    ctx = "\ncalls:\n" + describe_calls(rep)
    check_eq(rep["dropped_events"], 0, "dropped_events with the default ring")
    check_eq(total_calls(rep), truth["calls"], "sum of calls[].count vs the calls iomix made" + ctx)
    check_eq(rep["events"], truth["calls"], "events")
    check_eq(rep["records_refused"], 0, "records_refused")

    check_eq(count(rep, "io", "read"), truth["reads"], "io.read count")
    check_eq(nbytes(rep, "io", "read"), truth["read_bytes"], "io.read bytes")
    # Every file write, plus the one write() of the figures to stdout.
    check_eq(count(rep, "io", "write"), truth["file_writes"] + 1, "io.write count")
    check_eq(nbytes(rep, "io", "write"), truth["file_write_bytes"] + len(r.out_bytes), "io.write bytes")
    check_eq(count(rep, "io", "open"), 2 * threads + forks, "io.open count")
    check_eq(count(rep, "io", "close"), 2 * threads + forks, "io.close count")
    check_eq(count(rep, "wait", "nanosleep"), threads * sleeps, "wait.nanosleep count")
    check_eq(count(rep, "wait", "pthread_join"), threads, "wait.pthread_join count")
    check_eq(count(rep, "process", "fork"), forks, "process.fork count")
    check_eq(count(rep, "process", "waitpid"), forks, "process.waitpid count")
    check_eq(count(rep, "process", "_exit"), forks, "process._exit count")

    for t in range(threads):
        f = need_file(rep, os.path.join(data, "iomix-%d.dat" % t))
        check_eq((f["reads"], f["read_bytes"]), (blocks, blocks * block_bytes), "reads, read_bytes of %s" % f["path"])
        check_eq((f["writes"], f["write_bytes"]), (blocks, blocks * block_bytes),
                 "writes, write_bytes of %s" % f["path"])

    procs = processes(rep)
    check_eq(len(procs), 1 + forks, "number of processes\n" + describe_processes(rep))
    top = procs[0]
    check_eq((top["how"], top["exit_code"], top["signal"]), ("exited", 0, 0), "how iomix ended (how, exit, signal)")
    kids = sorted((p for p in procs if p["ppid"] == top["pid"]), key=lambda p: p["start_ns"])
    check_eq(len(kids), forks, "children of iomix\n" + describe_processes(rep))
    check_eq([p["exit_code"] for p in kids], [f % 7 for f in range(forks)], "children's exit codes, in fork order")
    check_eq([p["how"] for p in kids], ["exited"] * forks, "how the children ended")
    check_eq(sum(p["exit_code"] for p in kids), truth["exit_sum"], "sum of the children's exit codes")
    check_eq(sum(p["events"] for p in kids), truth["child_calls"], "calls recorded in the children")
    for f in range(forks):
        c = need_file(rep, os.path.join(data, "iomix-child-%d.dat" % f))
        check_eq((c["opens"], c["writes"], c["write_bytes"]), (1, 1, 1), "(opens, writes, write_bytes) of %s" % c["path"])


def test_small_ring():
    # 4 threads x 20000 blocks of 16 bytes through a 4 KiB ring: most records cannot fit; every call must
    # still be counted, as an event or as a drop.
    forks = 8
    r, rep, truth, data = run_iomix("OUT-small", 4, 20000, 16, 2, forks, opts=["--ring-size=4096"])
    note("small ring: %d events, %d dropped, %d calls made" % (rep["events"], rep["dropped_events"], truth["calls"]))
    check_eq(rep["events"] + rep["dropped_events"], truth["calls"],
             "events + dropped_events with --ring-size=4096 (events %d, dropped %d)" % (
                 rep["events"], rep["dropped_events"]))
    check_eq(rep["events"], total_calls(rep), "events == sum of calls[].count")
    check_eq(sum(p["dropped"] for p in rep["processes"]), rep["dropped_events"], "sum of processes' dropped")
    procs = processes(rep)
    check_eq(len(procs), 1 + forks, "number of processes\n" + describe_processes(rep))
    # How processes end comes from their segment headers, not from records, so drops do not blur it.
    kids = sorted((p for p in procs if p["ppid"] == procs[0]["pid"]), key=lambda p: p["start_ns"])
    check_eq([(p["how"], p["exit_code"]) for p in kids], [("exited", f % 7) for f in range(forks)],
             "children's (how, exit_code), in fork order")


def test():
    test_big_ring()
    test_small_ring()


main(test)
