"""profwrap exits with the target's status: exit codes pass through, a signal gives 128+N (and the report
names the signal), a command that cannot be found gives 127 and one line on stderr."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    for code in (0, 1, 42, 255):
        out = "OUT-%d" % code
        r, rep = profile([PYTHON, "-c", "import sys; sys.exit(%d)" % code], out, expect_rc=code)
        procs = processes(rep)
        check_eq(len(procs), 1, "processes for exit %d\n%s" % (code, describe_processes(rep)))
        check_eq((procs[0]["how"], procs[0]["exit_code"], procs[0]["signal"]), ("exited", code, 0),
                 "(how, exit_code, signal) for exit %d" % code)

    # A C program's return from main (no exit() call of its own): the same.
    r, rep = profile(["sh", "-c", "exit 42"], "OUT-sh", expect_rc=42)
    check_eq(processes(rep)[0]["exit_code"], 42, "exit_code of sh -c 'exit 42'")

    r, rep = profile([PYTHON, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"], "OUT-term",
                     expect_rc=128 + signal.SIGTERM)
    procs = processes(rep)
    check_eq(len(procs), 1, "processes for SIGTERM\n" + describe_processes(rep))
    check_eq(procs[0]["signal"], signal.SIGTERM, "signal of a target killed by SIGTERM")
    check_eq(procs[0]["exit_code"], None, "exit_code of a target killed by SIGTERM")
    check(procs[0]["how"] != "exited", "a target killed by SIGTERM is reported as how 'exited'")

    r = profwrap(["-q", "-o", "OUT-missing", "--", "profwrap-no-such-command-xyz"])
    check_eq(r.rc, 127, "profwrap exit status for a command not found\n" + r.describe())
    lines = r.err.splitlines()
    check_eq(len(lines), 1, "lines on stderr for a command not found: %r" % r.err)
    check("profwrap-no-such-command-xyz" in lines[0], "the message does not name the command: %r", lines[0])
    check_eq(r.out, "", "stdout for a command not found")
    # Without -q: still one line.
    r = profwrap(["-o", "OUT-missing2", "--", "profwrap-no-such-command-xyz"])
    check_eq(r.rc, 127, "profwrap exit status for a command not found (not quiet)\n" + r.describe())
    check_eq(len(r.err.splitlines()), 1, "lines on stderr for a command not found (not quiet): %r" % r.err)


main(test)
