"""--python-functions and names that hold a lone surrogate (issue 32, item 8), which have no UTF-8: a function
renamed by code.replace to odd_\\udc80 (called 7 times) and one defined in a module named mod\\udc81 by exec
(3 times) are ranges named as repr() writes them, __main__.odd_\\udc80 and mod\\udc81.g, which SPECs name the
same way (fnmatch's backslash escaped); beside them odd_plain (5, by a wildcard) and odd_\u00e9 (2, a UTF-8
name) as before. Exact counts in rank0.json, the text's Phases, rank0.html and the trace, each file valid
UTF-8 (JSON parsed), with every CPython 3.9+ found; the program prints the same with and without profwrap."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403
from test_python_functions import pythons  # noqa: E402

PROGRAM = r"""
import sys

def odd():
    return 1

def odd_plain():
    return 2

def odd_é():
    return 3

names = {"co_name": "odd_\udc80"}
if sys.version_info >= (3, 11):
    names["co_qualname"] = "odd_\udc80"
odd.__code__ = odd.__code__.replace(**names)
ns = {"__name__": "mod\udc81"}
exec("def g():\n    return 4\n", ns)
total = sum(odd() for _ in range(7)) + sum(odd_plain() for _ in range(5))
total += sum(odd_é() for _ in range(2)) + sum(ns["g"]() for _ in range(3))
print(total, ascii(odd.__code__.co_name), ascii(ns["__name__"]))
"""

SPECS = r"__main__:odd_\\udc80,__main__:odd_p*,__main__:odd_é,mod\\udc81:g"
WANT = {r"__main__.odd_\udc80": 7, "__main__.odd_plain": 5, "__main__.odd_\u00e9": 2, r"mod\udc81.g": 3}


def read_utf8(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Fail("%s is not valid UTF-8: %s" % (path, e))


def test_version(version, py, prog):
    plain = run([py, "-I", prog], timeout=60)
    check_eq((plain.rc, plain.out), (0, "35 'odd_\\udc80' 'mod\\udc81'\n"),
             "the program without profwrap (%s)\n%s" % (version, plain.describe()))
    out = "OUT-%s" % version
    r, rep = profile([py, "-I", prog], out, ["--python-functions=" + SPECS], timeout=60)
    check_eq(r.out, plain.out, "what the program printed, %s, under --python-functions vs without" % version)
    got = {x["name"]: x["count"] for x in rep["ranges"] if x["domain"] == "py"}
    check_eq(got, WANT, "Python %s: py ranges {name: count} in rank0.json" % version)

    text = read_utf8(os.path.join(out, "rank0.txt"))
    for name, n in WANT.items():
        shown = "".join(c if c.isascii() else "?" * len(c.encode()) for c in name)  # the text's tables: ASCII
        row = [x for x in text.splitlines() if x.startswith("| py:%s " % shown)]
        check_eq([x.split("|")[3].strip() for x in row], [str(n)], "Python %s: rank0.txt's Phases row of %s (calls)"
                 % (version, name))
    html = read_utf8(os.path.join(out, "rank0.html"))
    for name in WANT:
        check('data-name="py:%s"' % name in html, "Python %s: no Phases row for %s in rank0.html", version, name)
    trace = json.loads(read_utf8(os.path.join(out, "rank0.trace.json")))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    slices = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") in WANT:
            slices[e["name"]] = slices.get(e["name"], 0) + 1
    check_eq(slices, WANT, "Python %s: the trace's slices {name: count}" % version)
    note("Python %s: %s" % (version, ", ".join("%s %d" % kv for kv in sorted(got.items()))))


def test():
    d = tmpdir("pysur-")
    prog = os.path.join(d, "prog.py")
    with open(prog, "w", encoding="utf-8") as f:
        f.write(PROGRAM)
    versions = pythons()
    check(versions, "no CPython 3.9 or later found")
    for version, py in versions:
        test_version(version, py, prog)


if __name__ == "__main__":
    main(test)
