"""Preload-only mode (LD_PRELOAD and PROFWRAP_OUTPUT by hand, no CLI): the first process starts a detached
collector, which writes the reports after the run; the figures match those of the same run under the CLI,
and the children of a shell are all followed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

READER = """
import sys
with open(sys.argv[1], 'rb') as f:
    n = len(f.read())
with open(sys.argv[1], 'rb') as f:
    while f.read(4096):
        pass
print(n)
"""
SIZE = 200003
SCRIPT = 'ls / >/dev/null; sh -c "exit 4"; (exit 2); cat "$0" >/dev/null; exit 0'


def ends(rep):
    """(argv, image, how, exit_code) of every process, sorted: what two runs of one command must share."""
    return sorted((p["argv"], p["image"], p["how"], p["exit_code"]) for p in rep["processes"])


def test_reader():
    path = write_file("data.bin", SIZE)
    cmd = [PYTHON, "-c", READER, path]
    try:
        r, rep = run_preload_only(cmd, "OUT-preload")
    finally:
        remove_preload_session("OUT-preload")
    check_eq(r.rc, 0, "exit status in preload-only mode\n" + r.describe())
    check_eq(r.out, "%d\n" % SIZE, "the reader's output in preload-only mode")
    check_eq(r.err, "", "stderr in preload-only mode")
    cr, crep = profile(cmd, "OUT-cli")
    check_eq(cr.out, r.out, "the reader's output under the CLI")

    f, cf = need_file(rep, path), need_file(crep, path)
    check_eq(f["read_bytes"], 2 * SIZE, "read_bytes of %s in preload-only mode" % path)
    check_eq(cf["read_bytes"], 2 * SIZE, "read_bytes of %s under the CLI" % path)
    check_eq((f["opens"], f["reads"]), (cf["opens"], cf["reads"]), "(opens, reads) of the file: preload-only vs CLI")
    check_eq(len(rep["processes"]), len(crep["processes"]), "process count: preload-only vs CLI")
    check_eq(len(rep["processes"]), 1, "process count\n" + describe_processes(rep))
    check_eq(ends(rep), ends(crep), "processes: preload-only vs CLI")
    check_eq(rep["dropped_events"], 0, "dropped_events in preload-only mode")


def test_shell():
    cmd = ["sh", "-c", SCRIPT, write_file("cat-me.bin", 5000)]
    try:
        r, rep = run_preload_only(cmd, "OUT-sh-preload")
    finally:
        remove_preload_session("OUT-sh-preload")
    check_eq(r.rc, 0, "exit status of the shell in preload-only mode\n" + r.describe())
    cr, crep = profile(cmd, "OUT-sh-cli")
    ctx = "\npreload-only:\n%s\nCLI:\n%s" % (describe_processes(rep), describe_processes(crep))
    # top shell, subshell (a fork), sh, ls, cat (the shell starts commands with vfork: one image each)
    check_eq(len(rep["processes"]), 5, "processes[] entries in preload-only mode" + ctx)
    check_eq(ends(rep), ends(crep), "processes: preload-only vs CLI" + ctx)
    finals = sorted((p["argv"].split(" ")[0], p["exit_code"]) for p in rep["processes"] if p["how"] == "exited")
    check_eq(finals, sorted([("sh", 0), ("sh", 2), ("sh", 4), ("ls", 0), ("cat", 0)]),
             "(program, exit_code) of the processes that exited" + ctx)
    cat = [p for p in rep["processes"] if p["argv"].startswith("cat ")]
    check_eq(len(cat), 1, "cat images" + ctx)
    f = need_file(rep, cmd[3])
    check_eq(f["read_bytes"], 5000, "read_bytes of the file cat read (preload-only)")


def test():
    test_reader()
    test_shell()


main(test)
