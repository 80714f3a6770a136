"""One file for one read in every output. fd_handoff's main thread opens f0, f1, f2 (1000, 2000, 3000 bytes)
one after the other on the same descriptor number and another thread reads each to its end through it (100
bytes a read, and one at the end that returns 0). The threads' records reach the collector in separate
batches, so the descriptor must be bound by time: rank0.json's Files, rank0.txt's Files table and every read
slice of rank0.trace.json name the file each read was on, with the workload's own figures."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SIZES = [1000, 2000, 3000]


def test():
    data = tmpdir("data-")
    r, rep = profile([workload("fd_handoff"), data], "OUT")
    check(re.match(r"fd \d+ files 3\n$", r.out), "the workload's output: %r", r.out)
    paths = [os.path.join(data, "f%d" % i) for i in range(len(SIZES))]
    want = {p: (size // 100 + 1, size) for p, size in zip(paths, SIZES)}

    files = {f["path"]: (f["reads"], f["read_bytes"]) for f in rep["files"] if f["path"] in want}
    check_eq(files, want, "rank0.json files: (reads, read bytes) per file")

    trace = load_json("OUT/rank0.trace.json")
    seen = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("name") == "read" and e["args"].get("path") in want:
            n, b = seen.get(e["args"]["path"], (0, 0))
            seen[e["args"]["path"]] = (n + 1, b + e["args"]["bytes"])
    check_eq(seen, want, "rank0.trace.json read slices: (count, bytes) per path")
    unnamed = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name") == "read"
               and e["args"].get("fd") == 3 and "path" not in e["args"]]
    check_eq(len(unnamed), 0, "read slices on fd 3 without a path")

    text = open("OUT/rank0.txt").read()
    for p, (reads, size) in want.items():
        # the table keeps a long path's end
        row = re.search(r"^\| \S*%s +\| +(\d+) \| +([0-9.]+ kB) \|" % re.escape(p[-40:]), text, re.M)
        check(row is not None, "no Files row for %s in rank0.txt", p)
        check_eq((int(row.group(1)), row.group(2)), (reads, "%.2f kB" % (size / 1000.0)),
                 "rank0.txt Files row of %s: reads, read" % p)


main(test)
