"""pycalls [N [RUNS]]: the cost of a Python function call, as readloop prints it (best of RUNS loops of N calls).

First one time.sleep(0.001): a call above --stack-threshold made without the GIL, which wants its Python
frames (--stacks=on): on CPython 3.9 to 3.13 profwrap reads them directly, elsewhere its profile hook goes
on the interpreter's threads; with --stacks=native neither. The difference between the two is what getting
those frames costs every Python call and return."""
import sys
import time


def f():
    return None


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    time.sleep(0.001)
    time.sleep(0.001)  # by now the hook, installed from the main thread between bytecodes, is on
    best = best_cpu = None
    for _ in range(runs):
        c0, t0 = time.thread_time_ns(), time.monotonic_ns()
        for _ in range(n):
            f()
        dt, dc = time.monotonic_ns() - t0, time.thread_time_ns() - c0
        best = dt if best is None else min(best, dt)
        best_cpu = dc if best_cpu is None else min(best_cpu, dc)
    print("pycalls calls=%d runs=%d best_ns=%d ns_per_call=%.2f cpu_ns_per_call=%.2f"
          % (n, runs, best, best / n, best_cpu / n))


main()
