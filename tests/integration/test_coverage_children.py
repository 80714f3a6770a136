"""Coverage for a program started by a shell: `sh -c 'cat FILE >/dev/null'` on a 4 MiB file.

Linux adds a reaped child's I/O counters (rchar/wchar) to its parent's /proc/PID/io, so the kernel side of
the check must not count a reaped child's bytes again in its parent: the share stays >= 0.95 and the report
has no coverage warning."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SIZE = 4 * 1048576


def test():
    if not shutil.which("cat") or not shutil.which("sh"):
        skip("cat or sh not found")
    path = write_file("four-mib.bin", SIZE)
    r, rep = profile(["sh", "-c", 'cat "$0" >/dev/null', path], "OUT")
    check_eq(need_file(rep, path)["read_bytes"], SIZE, "read_bytes of the file cat read")
    cov = rep["coverage"]
    note("coverage: %r" % cov)
    # cat moved SIZE in and SIZE out; the shells and the loader a few kB more.
    check(cov["kernel_bytes"] < 2 * SIZE + 1048576,
          "the kernel side of coverage counts %d bytes for a run that moved about %d: reaped children's "
          "bytes are counted again in their parent (%r)", cov["kernel_bytes"], 2 * SIZE, cov)
    check(cov["share"] >= 0.95, "coverage share %r < 0.95 for sh -c 'cat FILE >/dev/null' (%r)",
          cov["share"], cov)
    with open("OUT/rank0.txt") as f:
        warnings = [line for line in f.read().splitlines() if line.startswith("WARNING") and "kernel" in line]
    check_eq(warnings, [], "coverage warnings in rank0.txt")


main(test)
