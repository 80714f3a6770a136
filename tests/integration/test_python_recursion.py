"""--python-functions and recursion: every call of a named function is a range however deep it nests, and a
recursion that runs without profwrap runs the same under it, on every CPython 3.9+ found.

down(500) is 501 nested calls of a named function: 501 rows of one call each (depths 0 to 500), 501 calls
in "Phases by action". down(N) for N = 20,000, 50,000 and 200,000 on the main thread and 50,000 on a thread
of 4 MiB (threading.stack_size), with sys.setrecursionlimit raised: where the run without profwrap exits 0,
the run under it prints the same and exits the same, with N + 1 calls of down counted and none dropped. (On
3.11 the frame evaluation function costs CPython about 400 bytes of C stack a call, where the interpreter
alone costs none: 50,000 calls overflow 8 MiB; 200,000 nested rows once overflowed the collector's own
stack. CPython 3.9 and 3.10 overflow 8 MiB without profwrap near 20,000 calls: their deeper cases are left
out, which the note says.) Lightning actions started 20 deep, as a profiler's
start(action_name) and stop: the 16 outer ones are ranges, the 4 inner ones are counted as dropped (two
events each), and the stops close the right ones."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403
from test_python_functions import pythons  # noqa: E402

PROGRAM = r"""
import sys, threading
sys.setrecursionlimit(1000000)

def down(n):
    return 0 if n == 0 else down(n - 1) + 1

depth, stack = int(sys.argv[1]), int(sys.argv[2])
if stack:
    threading.stack_size(stack)
    out = []
    t = threading.Thread(target=lambda: out.append(down(depth)))
    t.start()
    t.join()
    print(out)
else:
    print(down(depth))
"""

PROFILER = r"""
class SimpleProfiler:
    def start(self, action_name):
        pass

    def stop(self, action_name):
        pass
"""

ACTIONS = r"""
import time
from lightning.pytorch.profilers.simple import SimpleProfiler

p = SimpleProfiler()
for i in range(20):
    p.start("action%d" % i)
time.sleep(0.01)
for i in reversed(range(20)):
    p.stop("action%d" % i)
    if i == 16:
        time.sleep(0.02)  # action15, still open, holds this sleep
p.start("after")
p.stop("after")
print("done")
"""

CASES = [(20000, 0), (50000, 0), (200000, 0), (50000, 4 << 20)]
RING = ["--ring-size=64M"]  # no record dropped for want of room: the counts are exact


def py_rows(rep, name):
    return [x for x in rep["ranges"] if x["domain"] == "py" and x["name"] == name]


def by_action_calls(text, name):
    """The calls of name in rank0.txt's "Phases by action" table."""
    flat = text.split("Phases by action", 1)
    check(len(flat) == 2, "rank0.txt has no Phases by action table:\n%s", text[:3000])
    m = re.search(r"^\| %s +\| [^|]+\| +(\d+) \|" % re.escape(name), flat[1], re.M)
    check(m, "no %s row in Phases by action:\n%s", name, flat[1][:3000])
    return int(m.group(1))


def test_nested(version, py, prog):
    out = "OUT-nested-%s" % version
    r, rep = profile([py, "-I", prog, "500", "0"], out, ["--python-functions=__main__:down"] + RING)
    check_eq(r.out, "500\n", "what down(500) printed under profwrap (%s)" % version)
    rows = py_rows(rep, "__main__.down")
    check_eq((len(rows), sorted(set((x["depth"], x["count"]) for x in rows)) == [(d, 1) for d in range(501)],
              sum(x["count"] for x in rows)), (501, True, 501),
             "Python %s: down(500)'s rows, whether they are one call at each depth from 0 to 500, their calls"
             % version)
    text = open(os.path.join(out, "rank0.txt")).read()
    check_eq(by_action_calls(text, "py:__main__.down"), 501, "Python %s: Phases by action's calls of down" % version)
    check_eq(rep["dropped_events"], 0, "Python %s: events dropped" % version)


def test_deep(version, py, prog, depth, stack):
    where = "a thread of %d MiB" % (stack >> 20) if stack else "the main thread"
    args = [py, "-I", prog, str(depth), str(stack)]
    plain = run(args, timeout=120)
    if plain.rc != 0:
        return "%d deep on %s overflows without profwrap (exit %d)" % (depth, where, plain.rc)
    out = "OUT-deep-%s-%d-%d" % (version, depth, stack)
    r, rep = profile(args, out, ["--python-functions=__main__:down"] + RING, expect_rc=None, timeout=120)
    check_eq((r.rc, r.out), (plain.rc, plain.out), "Python %s, %d deep on %s: (exit status, output) under "
             "--python-functions vs without\n%s" % (version, depth, where, r.describe()))
    check_eq(sum(x["count"] for x in py_rows(rep, "__main__.down")), depth + 1,
             "Python %s, %d deep on %s: calls of down" % (version, depth, where))
    check_eq(rep["dropped_events"], 0, "Python %s, %d deep on %s: events dropped" % (version, depth, where))
    return None


def test_actions(version, py, d):
    prog = os.path.join(d, "actions.py")
    r, rep = profile([py, prog], "OUT-actions-%s" % version, ["--python-functions=lightning"] + RING)
    check_eq(r.out, "done\n", "what the actions program printed (%s)" % version)
    got = [(x["name"], x["depth"], x["count"]) for x in rep["ranges"] if x["domain"] == "py"]
    want = [("action%d" % i, i, 1) for i in range(16)] + [("after", 0, 1)]
    check_eq(sorted(got), sorted(want), "Python %s: (action, depth, calls) of 20 nested actions" % version)
    check_eq(rep["dropped_events"], 8, "Python %s: events dropped (the 4 actions past 16, two each)" % version)
    inner = [x for x in rep["ranges"] if x["name"] == "action15"][0]
    check(inner["total_ns"] >= 20000000, "Python %s: action15 closed before the sleep it holds (%d ns): a "
          "stop past 16 closed it", version, inner["total_ns"])
    check_eq((rep["nvtx"]["unclosed"], rep["nvtx"]["unmatched_pops"]), (0, 0),
             "Python %s: (unclosed, unmatched pops) of the actions" % version)


def test():
    d = tmpdir("pyrec-")
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    pkg = os.path.join(d, "lightning", "pytorch", "profilers")
    os.makedirs(pkg)
    for part in ("lightning", "lightning/pytorch", "lightning/pytorch/profilers"):
        open(os.path.join(d, part, "__init__.py"), "w").close()
    with open(os.path.join(pkg, "simple.py"), "w") as f:
        f.write(PROFILER)
    with open(os.path.join(d, "actions.py"), "w") as f:
        f.write(ACTIONS)
    versions = pythons()
    check(versions, "no CPython 3.9 or later found")
    for version, py in versions:
        test_nested(version, py, prog)
        left_out = [x for x in (test_deep(version, py, prog, n, s) for n, s in CASES) if x]
        test_actions(version, py, d)
        note("Python %s: 501 nested calls counted, deep recursion as without profwrap%s" % (
            version, "; left out: " + ", ".join(left_out) if left_out else ""))


if __name__ == "__main__":
    main(test)
