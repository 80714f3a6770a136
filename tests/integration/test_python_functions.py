"""--python-functions: calls of named Python functions are ranges (domain "py"), with exact counts and nesting,
in every thread and fork child, and the program sees no difference.

A Python program written here calls, with figures it prints itself: train_step 10 times on the main thread,
5 times on a threading.Thread and 4 times in a fork child (each calling Model.forward once); a generator gen
resumed 3 times (4 occurrences: each resume and the final return); fails, which raises, 6 times; helper_a
and helper_b (named through a file, "@FILE", with a wildcard) 2 and 3 times inside train_step's first two
calls... It also prints sys.path, the sorted names of sys.modules, the environment without profwrap's own
variables, the profile functions (sys.getprofile() on both threads, threading's hook): the same with and without --python-functions. Run with every CPython 3.9+ found (pyenv's, the
system's): a version without the hook is named in the note. PyPy and CPythons before 3.9, where found, run
as without profwrap, which says in one line that they are not supported. Also: a SPEC that is not MODULE:QUALNAME is
refused in one line with exit 2, and PROFWRAP_PYTHON_FUNCTIONS alone works in preload-only mode."""
import glob
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROGRAM = r"""
import json, os, sys, threading

class Model:
    def forward(self, x):
        return x + 1

def helper_a():
    return 1

def helper_b():
    return 2

def train_step(m, i):
    if i == 0:
        helper_a(); helper_a()
    if i == 1:
        helper_b(); helper_b(); helper_b()
    return m.forward(i)

def gen():
    for i in range(3):
        yield i

def fails():
    raise ValueError("expected")

m = Model()
for i in range(10):
    train_step(m, i)
seen = {}
t = threading.Thread(target=lambda: (seen.update(thread_profile=repr(sys.getprofile())),
                                     [train_step(m, i) for i in range(5, 10)]))
t.start()
t.join()
assert list(gen()) == [0, 1, 2]
for i in range(6):
    try:
        fails()
    except ValueError:
        pass
pid = os.fork()
if pid == 0:
    for i in range(4):
        train_step(m, i + 10)
    os._exit(0)
os.waitpid(pid, 0)
own = ("LD_PRELOAD", "NVTX_INJECTION64_PATH")
env = {k: v for k, v in os.environ.items() if not k.startswith("PROFWRAP_") and k not in own}
seen.update(profile=repr(sys.getprofile()), threading_hook=repr(getattr(threading, "_profile_hook", None)))
print(json.dumps({"path": sys.path, "modules": sorted(sys.modules), "env": env, "seen": seen}, sort_keys=True))
"""

SPECS = "__main__:train_step,__main__:Model.forward,__main__:gen,__main__:fails"
# name -> (count, parent name); the module-level functions are named with their module
WANT = {
    "__main__.train_step": (19, None),
    "Model.forward": (19, "__main__.train_step"),
    "__main__.helper_a": (2, "__main__.train_step"),
    "__main__.helper_b": (3, "__main__.train_step"),
    "__main__.gen": (4, None),
    "__main__.fails": (6, None),
}


def pythons():
    """Every CPython 3.9+ found, the one running the tests first."""
    found = [sys.executable]
    for p in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3") + glob.glob("/usr/bin/python3.[0-9]*")):
        if not p.endswith("-config") and os.access(p, os.X_OK):
            found.append(p)
    seen, keep = set(), []
    for p in found:
        r = run([p, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout=30)
        v = r.out.strip()
        if r.rc == 0 and v not in seen and tuple(int(x) for x in v.split(".")) >= (3, 9):
            seen.add(v)
            keep.append((v, p))
    return keep


def rows(rep):
    """{name: (count, parent name)} of the "py" rows."""
    ranges = rep["ranges"]
    got = {}
    for x in ranges:
        if x["domain"] != "py":
            continue
        parent = ranges[x["parent"]]["name"] if x["parent"] is not None else None
        check(x["name"] not in got, "two rows named %r: %r", x["name"], ranges)
        got[x["name"]] = (x["count"], parent)
    return got


def test_version(version, py, prog, specs_file):
    plain = run([py, "-I", prog], timeout=60)
    check_eq(plain.rc, 0, "the program without profwrap (%s)\n%s" % (version, plain.describe()))
    out = "OUT-%s" % version
    r, rep = profile([py, "-I", prog], out, ["--python-functions=%s,@%s" % (SPECS, specs_file)], timeout=60)
    check_eq(r.out, plain.out, "what the program printed (sys.path, sys.modules, environment), %s, under "
             "--python-functions vs without" % version)
    ctx = "\n" + json.dumps(rep["ranges"], indent=1)
    check_eq(rows(rep), WANT, "Python %s: py ranges {name: (count, parent)}%s" % (version, ctx))
    text = open(os.path.join(out, "rank0.txt")).read()
    check("py:__main__.train_step" in text and "  py:Model.forward" in text,
          "rank0.txt's Phases has no py:__main__.train_step with py:Model.forward under it:\n%s", text[:3000])
    note("Python %s: %s" % (version, ", ".join("%s %d" % (k, v[0]) for k, v in sorted(rows(rep).items()))))


def unsupported_pythons():
    """PyPy and the CPythons before 3.9 found: (name as profwrap says it, path)."""
    found = []
    pypy = shutil.which("pypy3")
    if pypy:
        found.append(("PyPy", pypy))
    for p in sorted(glob.glob("/root/.pyenv/versions/3.[5-8].*/bin/python3")):
        found.append(("CPython " + p.split("/")[-3], p))
    return found


def test_unsupported(name, py):
    """The program runs as without profwrap; one line on stderr says that name is not supported."""
    code = "def f():\n    return 1\nprint(sum(f() for _ in range(5)))\n"
    plain = run([py, "-c", code], timeout=60)
    r, rep = profile([py, "-c", code], "OUT-unsupported-" + name.replace(" ", "-"), ["--python-functions=__main__:f"],
                     quiet=False, expect_rc=plain.rc, timeout=60)
    check_eq(r.out, plain.out, "what %s printed under --python-functions vs without" % name)
    said = [x for x in r.err.splitlines() if "--python-functions" in x]
    check_eq(said, ["profwrap: --python-functions: %s is not supported (CPython 3.9 to 3.13 are); no Python "
                    "function is recorded in pid %d" % (name, rep["processes"][0]["pid"])],
             "what profwrap says of %s\n%s" % (name, r.describe()))
    check(not [x for x in rep["ranges"] if x["domain"] == "py"], "%s: py ranges: %r", name, rep["ranges"])
    note("%s: said unsupported in one line" % name)


def test():
    d = tmpdir("pyfn-")
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    specs_file = os.path.join(d, "functions.txt")
    with open(specs_file, "w") as f:
        f.write("# helpers, by a wildcard\n\n  __main__:helper_*  \n")
    versions = pythons()
    check(versions, "no CPython 3.9 or later found")
    for version, py in versions:
        test_version(version, py, prog, specs_file)

    others = unsupported_pythons()
    for name, py in others:
        test_unsupported(name, py)
    if not others:
        note("no PyPy or CPython before 3.9 found: the unsupported line is not checked")

    r = profwrap(["-q", "-o", "OUT-bad", "--python-functions=train_step", "--", sys.executable, "-c", "pass"])
    check_eq((r.rc, len(r.err.splitlines())), (2, 1), "a SPEC without MODULE: refused (exit, lines)\n" + r.describe())
    check("MODULE:QUALNAME" in r.err, "the refusal does not say what a SPEC is: %r", r.err)

    r = profwrap(["-q", "-o", "OUT-bad-torch", "--pytorch=autograd", "--", sys.executable, "-c", "pass"])
    check_eq((r.rc, len(r.err.splitlines())), (2, 1), "--pytorch=autograd refused (exit, lines)\n" + r.describe())
    check("autograd-nvtx or autograd-shapes-nvtx" in r.err, "the refusal does not name the modes: %r", r.err)

    r, rep = run_preload_only([sys.executable, "-I", prog], "OUT-preload",
                              extra_env={"PROFWRAP_PYTHON_FUNCTIONS": SPECS + ",@" + specs_file})
    check_eq(rows(rep), WANT, "preload-only mode with PROFWRAP_PYTHON_FUNCTIONS: py ranges {name: (count, parent)}")


if __name__ == "__main__":
    main(test)
