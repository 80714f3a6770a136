"""Where threads wait. Python: 3 threads sleeping 50 ms each and joined. time.sleep is clock_nanosleep on
Linux (exactly 3, each >= 50 ms, one per thread); Python's Thread.join is a wait on a lock (sem_wait), not
pthread_join (Python's threads are detached), so pthread_join is 0 there. C (iomix): 3 threads joined with
pthread_join, each sleeping 1 ms 4 times."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SLEEP_NS = 50 * 1000000
THREADS = 3
SCRIPT = """
import threading, time
threads = [threading.Thread(target=time.sleep, args=(%f,)) for _ in range(%d)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("joined")
""" % (SLEEP_NS / 1e9, THREADS)


def test_python():
    r, rep = profile([PYTHON, "-c", SCRIPT], "OUT")
    check_eq(r.out, "joined\n", "the script's output")
    ctx = "\n" + describe_calls(rep)
    sleeps = call(rep, "wait", "clock_nanosleep")
    check(sleeps is not None, "no wait.clock_nanosleep calls%s", ctx)
    check_eq(sleeps["count"], THREADS, "wait.clock_nanosleep count" + ctx)
    check_range(sleeps["min_ns"], SLEEP_NS * 95 // 100, 20 * SLEEP_NS, "shortest clock_nanosleep (ns)")
    check_range(sleeps["max_ns"], SLEEP_NS * 95 // 100, 20 * SLEEP_NS, "longest clock_nanosleep (ns)")
    check_range(sleeps["total_ns"], THREADS * SLEEP_NS * 95 // 100, 20 * THREADS * SLEEP_NS, "clock_nanosleep total (ns)")
    check_eq(count(rep, "wait", "nanosleep") + count(rep, "wait", "usleep") + count(rep, "wait", "sleep"), 0,
             "other sleeps" + ctx)
    check_eq(count(rep, "wait", "pthread_join"), 0, "wait.pthread_join count (Python detaches its threads)" + ctx)
    joins = call(rep, "wait", "sem_wait")
    check(joins is not None and joins["count"] >= THREADS, "fewer than %d sem_wait calls (Thread.join)%s",
          THREADS, ctx)
    check(joins["max_ns"] >= SLEEP_NS // 5, "no sem_wait lasted %d ns: the joins were not seen (max %d)%s",
          SLEEP_NS // 5, joins["max_ns"], ctx)

    # One sleep on each of the 3 threads, none on the main thread.
    t = load_json("OUT/rank0.trace.json")
    pid = rep["processes"][0]["pid"]
    tids = sorted(e["tid"] for e in t["traceEvents"] if e.get("ph") == "X" and e.get("name") == "clock_nanosleep")
    check_eq(len(tids), THREADS, "clock_nanosleep slices in the trace")
    check_eq(len(set(tids)), THREADS, "threads the sleeps ran on: %r" % tids)
    check(pid not in tids, "a sleep on the main thread: %r", tids)


def test_c():
    iomix = workload("iomix")
    data = tmpdir("data-")
    r, rep = profile([iomix, data, str(THREADS), "0", "1", "4", "0"], "OUT-c")
    ctx = "\n" + describe_calls(rep)
    check_eq(count(rep, "wait", "pthread_join"), THREADS, "wait.pthread_join count" + ctx)
    sleeps = call(rep, "wait", "nanosleep")
    check(sleeps is not None, "no wait.nanosleep calls%s", ctx)
    check_eq(sleeps["count"], THREADS * 4, "wait.nanosleep count" + ctx)
    check_range(sleeps["min_ns"], 1000000, 1000000000, "shortest nanosleep (ns)")
    check_eq(count(rep, "wait", "clock_nanosleep"), 0, "wait.clock_nanosleep count in iomix" + ctx)
    join = call(rep, "wait", "pthread_join")
    check(join["max_ns"] >= 1000000, "the longest pthread_join (%d ns) is shorter than one 1 ms sleep", join["max_ns"])


def test():
    test_python()
    test_c()


main(test)
