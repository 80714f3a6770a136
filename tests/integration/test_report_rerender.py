"""`profwrap report OUT` re-renders a run from OUT/raw byte for byte; a missing directory is refused with
one line; a truncated raw trace renders as far as it is whole; a garbage one is reported in one line while the
other traces still render. (Damaged traces in bulk: test_report_corrupt.py.)"""
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

REPORTS = ["rank0.json", "rank0.txt", "rank0.trace.json", "summary.json", "summary.txt"]
SCRIPT = 'ls / >/dev/null; sh -c "exit 3"; cat "$0" >/dev/null; exit 0'


def read(path):
    with open(path, "rb") as f:
        return f.read()


def copy_run(src, dst):
    """A copy of run src with its raw traces only (no reports)."""
    os.makedirs(os.path.join(dst, "raw"))
    for name in os.listdir(os.path.join(src, "raw")):
        shutil.copy(os.path.join(src, "raw", name), os.path.join(dst, "raw", name))
    return dst


def report(out, what):
    r = profwrap(["report", out], timeout=60)
    check(0 <= r.rc < 126, "profwrap report %s (%s) crashed: exit %r\n%s", out, what, r.rc, r.describe())
    check("Traceback" not in r.err and "Sanitizer" not in r.err and "runtime error" not in r.err,
          "profwrap report (%s) printed a crash report:\n%s", what, r.err)
    return r


def pwt_files(out):
    return sorted(n for n in os.listdir(os.path.join(out, "raw")) if n.endswith(".pwt"))


def test_rerender():
    data = write_file("input.bin", 70000)
    r, rep = profile(["sh", "-c", SCRIPT, data], "OUT")
    saved = {name: read(os.path.join("OUT", name)) for name in REPORTS}
    for name in REPORTS:
        os.unlink(os.path.join("OUT", name))
    r = report("OUT", "re-render")
    check_eq(r.rc, 0, "profwrap report OUT exit status\n" + r.describe())
    check_eq(r.out, "", "profwrap report OUT stdout")
    for name in REPORTS:
        check(os.path.exists(os.path.join("OUT", name)), "profwrap report did not write %s", name)
        check(read(os.path.join("OUT", name)) == saved[name], "re-rendered %s differs from the original", name)
    # And again over the reports it just wrote.
    r = report("OUT", "second re-render")
    check_eq(r.rc, 0, "second profwrap report OUT exit status\n" + r.describe())
    for name in REPORTS:
        check(read(os.path.join("OUT", name)) == saved[name], "re-rendered %s differs from the original (2nd)", name)
    return rep


def test_missing():
    for bad in ("/nonexistent", os.path.abspath("empty-dir"), os.path.abspath("no-traces")):
        if bad.endswith("empty-dir"):
            os.makedirs(bad)
        elif bad.endswith("no-traces"):
            os.makedirs(os.path.join(bad, "raw"))
        r = report(bad, "missing")
        check(r.rc != 0, "profwrap report %s succeeded" % bad)
        lines = r.err.splitlines()
        check_eq(len(lines), 1, "stderr lines of profwrap report %s: %r" % (bad, r.err))
        check_eq(r.out, "", "stdout of profwrap report %s" % bad)
    r = profwrap(["report"])
    check(r.rc != 0, "profwrap report with no directory succeeded")


def test_truncated(orig):
    out = copy_run("OUT", "TRUNC")
    # The largest trace (ls's image), cut in half: its end record is lost, what was whole before stays.
    names = pwt_files(out)
    victim = max(names, key=lambda n: os.path.getsize(os.path.join(out, "raw", n)))
    path = os.path.join(out, "raw", victim)
    body = read(path)
    with open(path, "wb") as f:
        f.write(body[:len(body) // 2])
    r = report(out, "truncated")
    check_eq(r.rc, 0, "profwrap report with a truncated trace\n" + r.describe())
    rep = load_report(out)
    check_eq(len(rep["processes"]), len(orig["processes"]), "processes with a truncated trace\n" +
             describe_processes(rep))
    changed = [p for p, o in zip(rep["processes"], orig["processes"]) if p != o]
    check_eq(len(changed), 1, "processes that differ after truncating %s\n%s" % (victim, describe_processes(rep)))
    check_eq(changed[0]["how"], "unknown", "how of the process whose trace lost its end")
    before = [o for o in orig["processes"] if (o["pid"], o["image"]) == (changed[0]["pid"], changed[0]["image"])]
    check_eq(len(before), 1, "the damaged process in the original report")
    check(changed[0]["events"] <= before[0]["events"], "more events after truncation: %d > %d",
          changed[0]["events"], before[0]["events"])
    check(rep["events"] <= orig["events"], "more events after truncation: %d > %d", rep["events"], orig["events"])


def test_garbage(orig):
    out = copy_run("OUT", "GARBAGE")
    rnd = random.Random(1234)
    with open(os.path.join(out, "raw", "0-4194000.pwt"), "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(5000)))
    r = report(out, "garbage")
    check_eq(r.rc, 0, "profwrap report with a garbage trace beside good ones\n" + r.describe())
    about = [line for line in r.err.splitlines() if "0-4194000.pwt" in line]
    check_eq(len(about), 1, "stderr lines naming the garbage trace: %r" % r.err)
    rep = load_report(out)
    check_eq(rep["processes"], orig["processes"], "processes with a garbage trace beside the good ones")
    check_eq(rep["calls"], orig["calls"], "calls with a garbage trace beside the good ones")

    # Only garbage: an error, in one line per file, and no report.
    only = os.path.abspath("ONLY-GARBAGE")
    os.makedirs(os.path.join(only, "raw"))
    with open(os.path.join(only, "raw", "0-1.pwt"), "wb") as f:
        f.write(b"\0" * 3)
    r = report(only, "only garbage")
    check(r.rc != 0, "profwrap report of garbage only succeeded\n" + r.describe())


def test():
    orig = test_rerender()
    test_missing()
    test_truncated(orig)
    test_garbage(orig)


main(test)
