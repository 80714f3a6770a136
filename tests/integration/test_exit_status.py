"""profwrap exits with the target's status: exit codes pass through, a signal that does not dump core ends
profwrap too (a shell loop stops at Ctrl-C as it would without profwrap; the report names the signal), one
that dumps core gives 128+N, a command that cannot be found gives 127 and one line on stderr."""
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


LOOP = 'for i in 1 2 3; do %s sleep 30; echo "after $i"; done'


def ctrl_c_stops_a_loop():
    """Ctrl-C (SIGINT to the terminal's foreground process group) during a bash loop of runs: bash stops the
    loop when its child died of SIGINT, and goes on when the child exited (it took the signal as handled).
    Before, profwrap exited 130 and the loop went on under profwrap only."""
    if not shutil.which("bash"):
        skip("no bash")
    outcomes = []
    for prefix in ("", "%s -q -o OUT-loop-$i --" % PROFWRAP):
        p = subprocess.Popen(["bash", "-c", LOOP % prefix], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        try:
            started = wait_for(lambda: any(os.path.basename(proc_exe(c)) == "sleep" for c in descendants(p.pid)),
                               20, 0.02)
            check(started, "the loop's first sleep did not start")
            os.killpg(p.pid, signal.SIGINT)
            out, err = p.communicate(timeout=60)
        finally:
            kill_group(p.pid)
        outcomes.append((p.returncode, out.decode()))
    check_eq(outcomes[0], (-signal.SIGINT, ""), "bash's loop of plain runs after Ctrl-C (the test's premise)")
    check_eq(outcomes[1], outcomes[0], "bash's loop of profwrap runs after Ctrl-C")
    check(os.path.exists("OUT-loop-1/rank0.json"), "the interrupted run wrote no report")


def descendants(pid):
    found, todo = [], [pid]
    while todo:
        kids = children_of(todo.pop())
        found += kids
        todo += kids
    return found


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
                     expect_rc=-signal.SIGTERM)
    procs = processes(rep)
    check_eq(len(procs), 1, "processes for SIGTERM\n" + describe_processes(rep))
    check_eq(procs[0]["signal"], signal.SIGTERM, "signal of a target killed by SIGTERM")
    check_eq(procs[0]["exit_code"], None, "exit_code of a target killed by SIGTERM")
    check(procs[0]["how"] != "exited", "a target killed by SIGTERM is reported as how 'exited'")

    ctrl_c_stops_a_loop()

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
