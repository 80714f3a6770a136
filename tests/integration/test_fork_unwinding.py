"""Forks while other threads take call stacks: libunwind holds locks of its own while a thread unwinds (and
the loader its lock in dl_iterate_phdr), and a fork child inherits them held by a thread it does not have. Its
first stack then waited forever (seen in a SAN run of test_iomix: a fork child with 0 events, its parent
waiting in waitpid). profwrap now lets no unwinding start around a fork and waits for the unwinding under way
(preload/stacks.c, the fork gate).

tests/workloads/iomix with 4 threads writing and reading 16-byte blocks through a 4 KiB ring, every call
taking a stack (--stack-threshold=0), while the main thread forks 60 children; 8 runs. Before the gate about
one run in eight hung (so 8 runs find it about three times in four). Each run must end within its timeout,
with every child process reported as exited with its own code (iomix: the fork's number mod 7) and iomix's own count of calls equal to
the report's events plus drops."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

RUNS, FORKS = 8, 60


def test():
    iomix = workload("iomix")
    for i in range(RUNS):
        data = tmpdir("data-")
        out = "OUT-%d" % i
        r = profwrap(["-q", "-o", out, "--ring-size=4096", "--stack-threshold=0", "--", iomix, data, "4", "20000",
                      "16", "2", str(FORKS)], timeout=60)
        check_eq(r.rc, 0, "run %d: profwrap iomix with stacks on every call and %d forks\n%s" % (i, FORKS,
                                                                                                 r.describe()))
        truth = json.loads(r.out)
        rep = load_report(out)
        kids = [p for p in rep["processes"] if p["ppid"] == rep["processes"][0]["pid"]]
        check_eq(len(kids), FORKS, "run %d: fork children in the report" % i)
        check_eq(sorted((p["how"], p["exit_code"]) for p in kids),
                 sorted(("exited", k % 7) for k in range(FORKS)), "run %d: how the children ended" % i)
        check_eq(rep["events"] + rep["dropped_events"], truth["calls"], "run %d: events + dropped_events" % i)


if __name__ == "__main__":
    main(test)
