"""Files are named by the absolute path they had when opened. cwd_files writes a different f.txt in DIR/a, DIR/b,
DIR/c and DIR/d, each named "f.txt" relative to a working directory it changed with chdir (one of them in
another thread), fchdir and "..", and a g.txt in DIR/a and DIR/b through openat() on directory descriptors;
it reads DIR/a/f.txt back by its absolute path and c's as "./f.txt". Each file is one row of rank0.json,
rank0.txt and rank0.trace.json under its absolute path, with the bytes the file holds; no row keeps a relative
name. Before, the four f.txt were one row "f.txt" and the two g.txt one row "g.txt"."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    d = tmpdir("cwd-")
    r, rep = profile([workload("cwd_files"), d], "OUT")
    check_eq(r.out, "ok\n", "the workload's output")
    reread = {"a/f.txt", "c/f.txt"}
    want = {}
    for name in ("a/f.txt", "b/f.txt", "c/f.txt", "d/f.txt", "a/g.txt", "b/g.txt"):
        size = os.path.getsize(os.path.join(d, name))
        want[os.path.join(d, name)] = (1 + (name in reread), size, size if name in reread else 0)
    rows = {f["path"]: (f["opens"], f["write_bytes"], f["read_bytes"]) for f in rep["files"]
            if f["path"].startswith(d + "/") and not os.path.isdir(f["path"])}
    check_eq(rows, want, "rank0.json Files under DIR: (opens, written, read) per path")
    relative = [f["path"] for f in rep["files"] if not f["path"].startswith(("/", "pipe:", "socket:", "anon_inode:"))]
    check_eq(relative, [], "Files rows not named by an absolute path")

    trace = load_json("OUT/rank0.trace.json")
    written = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("name") == "write" and e["args"].get("path") in want:
            written[e["args"]["path"]] = written.get(e["args"]["path"], 0) + e["args"]["bytes"]
    check_eq(written, {p: w for p, (_, w, _) in want.items()}, "rank0.trace.json write slices: bytes per path")

    text = open("OUT/rank0.txt").read()
    for p, (_, w, rd) in want.items():
        row = re.search(r"^\| \S*%s +\| +\d+ \| +(\d+) B \| +\d+ \| +(\d+) B \|" % re.escape(p[-40:]), text, re.M)
        check(row is not None, "no Files row for %s in rank0.txt", p)
        check_eq((int(row.group(2)), int(row.group(1))), (w, rd), "rank0.txt Files row of %s: written, read" % p)


main(test)
