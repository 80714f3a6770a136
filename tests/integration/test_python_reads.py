"""Python reading whole files (open(p, 'rb').read()): each file's read_bytes equals its size exactly, and the
reads of the run add up (io.read bytes equal the sum of files' read_bytes plus unnamed reads: none here)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SIZES = {"one-mib.bin": 1048576, "three-kib.bin": 3072, "odd.bin": 123457, "empty.bin": 0}

READER = """
import sys
total = 0
for p in sys.argv[1:]:
    with open(p, 'rb') as f:
        total += len(f.read())
print(total)
"""


def test():
    data = tmpdir("data-")
    paths = {name: write_file(os.path.join(data, name), size, seed=i) for i, (name, size) in enumerate(SIZES.items())}
    r, rep = profile([PYTHON, "-c", READER] + list(paths.values()), "OUT")
    check_eq(r.out, "%d\n" % sum(SIZES.values()), "the reader's own total")
    for name, path in paths.items():
        f = need_file(rep, path)
        check_eq(f["read_bytes"], SIZES[name], "read_bytes of %s" % name)
        check_eq(f["opens"], 1, "opens of %s" % name)
        check_eq(f["writes"], 0, "writes of %s" % name)
        check_eq(f["write_bytes"], 0, "write_bytes of %s" % name)
    check_eq(len(processes(rep)), 1, "number of processes\n" + describe_processes(rep))
    check_eq(rep["dropped_events"], 0, "dropped_events")
    # Every byte the wrappers saw read is attributed to a file (python's own imports included).
    check_eq(sum(f["read_bytes"] for f in rep["files"]), nbytes(rep, "io", "read") + nbytes(rep, "stdio", "fread") +
             nbytes(rep, "stdio", "fgets") + nbytes(rep, "stdio", "getdelim"), "sum of files' read_bytes vs read calls' bytes")


main(test)
