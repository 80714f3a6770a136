"""Library loads: Python importing a C extension and loading libraries with ctypes shows each in
libraries[] with its load time; a failed load is counted as a failure. (RUNPATH searches:
test_dlopen_runpath.py.)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

LOADER = """
import ctypes, importlib.util, sys
spec = importlib.util.find_spec("_ctypes")
print(spec.origin)
ctypes.CDLL("libm.so.6")
try:
    ctypes.CDLL("libprofwrap-no-such-library.so.7")
except OSError:
    print("failed as expected")
"""


def lib_entry(rep, pred, what):
    found = [l for l in rep["libraries"] if pred(l["path"])]
    check(len(found) == 1, "libraries[] entries for %s: %r (all: %r)", what, found,
          [l["path"] for l in rep["libraries"]])
    return found[0]


def test_python():
    r, rep = profile([PYTHON, "-c", LOADER], "OUT")
    lines = r.out.splitlines()
    ext = lines[0]
    if not ext.endswith(".so"):
        skip("_ctypes is not an extension module on this python (%s)" % ext)
    check_eq(lines[1:], ["failed as expected"], "the loader's output")
    e = lib_entry(rep, lambda p: p == ext, ext)
    check_eq((e["loads"], e["failures"]), (1, 0), "(loads, failures) of %s" % ext)
    check(e["load_ns"] > 0, "load_ns of %s is %r", ext, e["load_ns"])
    m = lib_entry(rep, lambda p: "libm.so" in p, "libm")
    check_eq((m["loads"], m["failures"]), (1, 0), "(loads, failures) of libm")
    check(m["load_ns"] > 0, "load_ns of libm is %r", m["load_ns"])
    bad = lib_entry(rep, lambda p: "libprofwrap-no-such-library" in p, "the missing library")
    check_eq((bad["loads"], bad["failures"]), (1, 1), "(loads, failures) of the missing library")
    dl = call(rep, "dl", "dlopen")
    check(dl is not None, "no dl.dlopen calls\n%s", describe_calls(rep))
    check_eq(dl["count"], sum(l["loads"] for l in rep["libraries"]), "dlopen count vs libraries' loads")
    check_eq(dl["errors"], sum(l["failures"] for l in rep["libraries"]), "dlopen errors vs libraries' failures")


def test():
    test_python()


main(test)
