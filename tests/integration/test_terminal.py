"""profwrap's progress never changes what a program shows on its terminal (issue 19, item 8). In a pty of 24
rows, tests/workloads/tui_draw.py draws as full-screen programs do (its own window title, a saved cursor,
the last row, the alternate screen); the screen and the title, rendered by the pyte terminal emulator, must
be the same with and without profwrap, profwrap's own closing line aside: with the program's output on that
terminal profwrap shows no progress (it took the title before, replacing the program's own while it ran). Needs pyte (Debian's python3-pyte, which
make deps installs)."""
import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

ROWS, COLS = 24, 120


def import_pyte():
    try:
        import pyte
        return pyte
    except ImportError:
        pass
    for d in ("/usr/lib/python3/dist-packages",):  # Debian's python3-pyte, for another interpreter
        if os.path.isdir(os.path.join(d, "pyte")):
            sys.path.append(d)
            try:
                import pyte
                return pyte
            except ImportError:
                pass
    skip("pyte is not installed (make deps installs python3-pyte)")


def in_pty(args, timeout=60):
    """Runs args with stdin, stdout and stderr on a new pty of ROWS x COLS; returns every byte it wrote."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    p = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the pty's other side has gone
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    p.wait(timeout=10)
    return out


def screen_of(pyte, data):
    screen = pyte.Screen(COLS, ROWS)
    pyte.ByteStream(screen).feed(data)
    return screen


def test():
    pyte = import_pyte()
    cmd = [sys.executable, os.path.join(REPO, "tests", "workloads", "tui_draw.py")]
    plain = screen_of(pyte, in_pty(cmd))
    check("BOTTOM ROW" in plain.display[ROWS - 1], "the workload did not draw its last row: %r", plain.display)
    raw = in_pty([PROFWRAP, "-o", "OUT", "--"] + cmd)
    prof = screen_of(pyte, raw)
    # Every row as without profwrap, but for profwrap's closing line (it may wrap) on blank rows below where
    # the program's cursor ended.
    end, diff, closing = plain.cursor.y, [], ""
    for i in range(ROWS):
        a, b = plain.display[i].rstrip(), prof.display[i].rstrip()
        if a == b:
            continue
        if i >= end and not a:
            closing += b
        else:
            diff.append("row %d: %r without, %r with profwrap" % (i, a, b))
    check(not diff, "the screen differs under profwrap:\n  %s", "\n  ".join(diff))
    check(closing.startswith("profwrap: reports in ") and "OUT" in closing, "profwrap's closing line: %r", closing)
    check_eq(plain.title, "tui_draw's own title", "the title without profwrap (the test's premise)")
    check_eq(prof.title, plain.title, "the title under profwrap")
    check(b"\033]2;profwrap: " not in raw, "profwrap wrote its progress into the title: %r", raw[-400:])
    note("the screen and the title are the same with and without profwrap")


main(test)
