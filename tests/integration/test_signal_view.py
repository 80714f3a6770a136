"""SIGUSR2, on which profwrap start|stop ride, looks to the program as it does without profwrap (issue 19,
item 9): Python's signal.getsignal() gives the default, not profwrap's handler (None, "not installed from
Python"), setting a handler returns the default as the previous one, the program's handler runs, and the
whole output is the same with and without profwrap."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    cmd = [sys.executable, os.path.join(REPO, "tests", "workloads", "signal_view.py")]
    plain = run(cmd)
    check_eq(plain.rc, 0, "signal_view.py without profwrap\n" + plain.describe())
    r, rep = profile(cmd, "OUT")
    check_eq(r.out, plain.out, "signal_view.py's output under profwrap vs without\n" + r.describe())
    note(plain.out.strip().replace("\n", "; "))


main(test)
