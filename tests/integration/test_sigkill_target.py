"""A target that SIGKILLs itself after 200 small writes: every committed record survives (exactly 200
writes of the right size on that file), and the report says the process vanished, by signal 9."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

N = 200
WRITER = """
import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
for i in range(int(sys.argv[2])):
    os.write(fd, b"record %03d\\n" % (i % 1000))
os.kill(os.getpid(), signal.SIGKILL)
"""


def test():
    path = os.path.abspath("killed.dat")
    r, rep = profile([PYTHON, "-c", WRITER, path, str(N)], "OUT", expect_rc=-signal.SIGKILL)
    check_eq(os.path.getsize(path), N * 11, "size of the file the target wrote")
    f = need_file(rep, path)
    check_eq(f["writes"], N, "writes to %s" % path)
    check_eq(f["write_bytes"], N * 11, "write_bytes to %s" % path)
    check_eq(f["opens"], 1, "opens of %s" % path)
    check_eq(count(rep, "io", "write"), N, "io.write count")
    check_eq(rep["dropped_events"], 0, "dropped_events")
    procs = processes(rep)
    check_eq(len(procs), 1, "processes\n" + describe_processes(rep))
    p = procs[0]
    check_eq((p["how"], p["signal"], p["exit_code"]), ("vanished", signal.SIGKILL, None),
             "(how, signal, exit_code) of the killed target")


main(test)
