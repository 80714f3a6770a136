"""Too little /dev/shm, in a mount namespace with a tmpfs of its own on /dev/shm:
- 16 MiB (profwrap leaves the program a quarter of /dev/shm, at least 16 MiB, so it takes none): the program
  runs unharmed, profwrap says why in one line (not that the program "never loaded libprofwrap.so"), and a
  report names the process as not recorded for lack of room in /dev/shm.
- 64 MiB of which the program holds 44 MiB first (tests/workloads/shm_threads): 8 threads write 100,000 times
  each, together, while profwrap has room for little; each record that found no room is counted once
  (before, a thread that could not back a lane of its own counted it on that lane and again on the shared
  lane): the writes recorded plus the drops are the writes made, plus at most the program's few other
  calls."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

THREADS, WRITES = 8, 100000


def test():
    need_shm_namespace()

    r = in_shm(16, [PROFWRAP, "-o", "OUT16", "--", "sh", "-c", "echo hi; exit 2"])
    check_eq((r.rc, r.out), (2, "hi\n"), "the program in a 16 MiB /dev/shm\n" + r.describe())
    lines = [l for l in r.err.splitlines() if "/dev/shm" in l]
    check_eq(len(lines), 1, "lines about /dev/shm on stderr\n" + r.describe())
    check("no room" in lines[0], "the line does not say why: %r", lines[0])
    check("never loaded" not in r.err, "profwrap blames the program:\n%s", r.err)
    rep = load_report("OUT16")
    sh = [p for p in processes(rep) if p["argv"] == "sh -c echo hi; exit 2"]
    check_eq([p["how"] for p in sh], ["unrecorded"], "how the shell is listed\n" + describe_processes(rep))
    check("/dev/shm had no room" in (rep["incomplete_reason"] or ""), "incomplete_reason: %r",
          rep["incomplete_reason"])

    cmd = [workload("shm_threads"), "44", str(THREADS), str(WRITES), "0"]
    plain = in_shm(64, cmd)
    want = '{"writes":%d,"took":0}\n' % (THREADS * WRITES)
    check_eq((plain.rc, plain.out), (0, want), "without profwrap (the test's premise)\n" + plain.describe())
    r = in_shm(64, [PROFWRAP, "-q", "-o", "OUT64", "--"] + cmd)
    check_eq((r.rc, r.out), (0, want), "under profwrap\n" + r.describe())
    rep = load_report("OUT64")
    made = THREADS * WRITES
    writes, dropped = count(rep, "io", "write"), rep["dropped_events"]
    check(rep["dropped_shm_short"] > 0, "no record lacked room (the test's premise): dropped %d", dropped)
    check_range(writes + dropped, made, made + 100, "writes recorded %d + dropped %d (made %d)" % (writes, dropped,
                                                                                              made))


main(test)
