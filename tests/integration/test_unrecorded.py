"""A process that cannot hand its shared memory to the collector is named in the report, never lost without a
word. The preload's half: with a collector whose backlog stays full (a listening socket that never accepts,
its one queued connection taken), a process waits a bounded time, runs unharmed (same exit status and output,
nothing on its stderr: the collector says it) and appends its pw_unrecorded record (pid, ppid, argv, the
reason) to the session's list. The collector's
half: a record in that list becomes a process in the report with how "unrecorded", and the report says it is
incomplete and names it."""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

# common/pw_session.h: struct pw_unrecorded
RECORD = struct.Struct("<IiiiiIQII472s")
MAGIC = 0x43524E55

APPEND = """
import os, struct, sys
rec = struct.pack("<IiiiiIQII472s", 0x43524E55, 4194000, os.getpid(), -1, 1, 24, 0, 1, 0, b"fake-unrecorded\\0--flag=1")
with open(os.path.join(os.environ["PROFWRAP_SESSION_DIR"], "unrecorded"), "ab") as f:
    f.write(rec)
sys.exit(4)
"""


def preload_half():
    sdir = tmpdir("session-")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(sdir, "sock"))
    listener.listen(0)
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    filler.connect(os.path.join(sdir, "sock"))  # the backlog's one place: the next connect waits
    open(os.path.join(sdir, "unrecorded"), "wb").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROFWRAP_")}
    env.update(LD_PRELOAD=LIB, PROFWRAP_SESSION_DIR=sdir, PROFWRAP_OUTPUT=os.path.abspath("UNUSED"))
    r = run(["sh", "-c", "echo ran; exit 3"], env=env, timeout=60)
    check_eq(r.rc, 3, "exit status\n" + r.describe())
    check_eq(r.out, "ran\n", "output")
    check_eq(r.err, "", "the program's stderr")
    with open(os.path.join(sdir, "unrecorded"), "rb") as f:
        data = f.read()
    check_eq(len(data), RECORD.size, "bytes in the session's list of unrecorded processes")
    magic, pid, ppid, rank, world, argv_len, start, why, _, argv = RECORD.unpack(data)
    check_eq(why, 1, "record's reason (PW_UNRECORDED_BUSY)")
    check_eq(magic, MAGIC, "record's magic")
    check_eq(ppid, os.getpid(), "record's ppid")
    check(pid > 0 and pid != os.getpid(), "record's pid %d", pid)
    check_eq(argv[:argv_len], b"sh\0-c\0echo ran; exit 3", "record's argv")
    check(start > 0, "record's start time is 0")
    filler.close()
    listener.close()


def collector_half():
    r, rep = profile([PYTHON, "-c", APPEND], "OUT", expect_rc=4)
    ctx = "\nprocesses:\n" + describe_processes(rep)
    fake = [p for p in processes(rep) if p["pid"] == 4194000]
    check_eq(len(fake), 1, "entries of the unrecorded process" + ctx)
    check_eq((fake[0]["how"], fake[0]["argv"], fake[0]["ppid"]), ("unrecorded", "fake-unrecorded --flag=1",
             processes(rep)[0]["pid"]), "(how, argv, ppid) of the unrecorded process" + ctx)
    check(rep["incomplete"], "the report is not marked incomplete")
    check("1 process was not recorded (pid 4194000, fake-unrecorded)" in rep["incomplete_reason"],
          "incomplete_reason does not name it: %r", rep["incomplete_reason"])
    with open("OUT/rank0.txt") as f:
        text = f.read()
    check("not recorded (could not connect)" in text, "rank0.txt's process table does not say it:\n%s", text)
    check("WARNING: incomplete: 1 process was not recorded" in text, "rank0.txt has no warning:\n%s", text)


def test():
    preload_half()
    collector_half()


main(test)
