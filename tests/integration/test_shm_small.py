"""A container-sized /dev/shm (issue 19, item 3): in a mount namespace of its own with a 64 MiB tmpfs on
/dev/shm, 8 forked workers each fill 7 MiB of POSIX shared memory and hold it together, as DataLoader
workers do. Without profwrap they all exit 0; under profwrap too (it takes /dev/shm space as its lanes fill,
never the last quarter of it, so the program's own segments fit): the same output, every worker a process
of the report that exited 0. Profwrap's records that found no room are dropped and counted as such
(dropped_shm_short, part of dropped_events). Skipped where a mount namespace cannot be made (no
CAP_SYS_ADMIN)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

WORKERS = 8
MIB = 7
def test():
    need_shm_namespace()
    script = os.path.join(REPO, "tests", "workloads", "shm_workers.py")
    cmd = [sys.executable, script, str(WORKERS), str(MIB)]
    plain = in_shm(64, cmd)
    want = "".join("worker %d: exit 0\n" % i for i in range(WORKERS))
    check_eq(plain.out, want, "the workers without profwrap (the test's premise)\n" + plain.describe())
    r = in_shm(64, [PROFWRAP, "-q", "-o", "OUT", "--"] + cmd)
    check_eq(r.out, want, "the workers under profwrap\n" + r.describe())
    rep = load_report("OUT")
    ctx = "\n" + describe_processes(rep)
    workers = [p for p in processes(rep, script) if p["ppid"] != os.getpid()]
    top = [p for p in workers if not any(q["pid"] == p["ppid"] for q in workers)]
    check_eq(len(top), 1, "the workload's main process" + ctx)
    kids = [p for p in workers if p["ppid"] == top[0]["pid"]]
    check_eq([(p["how"], p["exit_code"]) for p in kids], [("exited", 0)] * WORKERS, "the workers in the report" + ctx)
    check(rep["dropped_shm_short"] <= rep["dropped_events"], "dropped_shm_short %d > dropped_events %d",
          rep["dropped_shm_short"], rep["dropped_events"])
    note("8 workers x 7 MiB in a 64 MiB /dev/shm: all exited 0 under profwrap; %d events dropped for lack of room"
         % rep["dropped_shm_short"])


main(test)
