"""dd from /dev/zero to a file: 64 reads and 64 writes of 1 MiB each, on the right files (in the report and
in the trace), one process."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

MIB = 1048576
COUNT = 64


def test():
    dd = shutil.which("dd")
    if not dd:
        skip("dd not found")
    target = os.path.abspath("data.bin")
    r, rep = profile([dd, "if=/dev/zero", "of=" + target, "bs=1M", "count=%d" % COUNT], "OUT")
    check_eq(r.rc, 0, "profwrap exit status")
    check_eq(os.path.getsize(target), COUNT * MIB, "size of the file dd wrote")

    check_eq(nbytes(rep, "io", "read"), COUNT * MIB, "io.read bytes")
    check_eq(nbytes(rep, "io", "write"), COUNT * MIB, "io.write bytes")

    zero = need_file(rep, "/dev/zero")
    check_eq(zero["read_bytes"], COUNT * MIB, "/dev/zero read_bytes")
    check_eq(zero["reads"], COUNT, "/dev/zero reads")
    check_eq(zero["writes"], 0, "/dev/zero writes")
    out = need_file(rep, target)
    check_eq(out["write_bytes"], COUNT * MIB, "%s write_bytes" % target)
    check_eq(out["writes"], COUNT, "%s writes" % target)
    check_eq(out["read_bytes"], 0, "%s read_bytes" % target)

    procs = processes(rep)
    check_eq(len(procs), 1, "number of processes\n" + describe_processes(rep))
    p = procs[0]
    check_eq(p["how"], "exited", "how dd ended")
    check_eq(p["exit_code"], 0, "dd exit_code")
    check_eq(p["signal"], 0, "dd signal")
    check_eq(p["exe"], os.path.realpath(dd), "dd exe")
    check_eq(rep["dropped_events"], 0, "dropped_events")
    check_eq(rep["events"], total_calls(rep), "events == sum of calls counts")

    # The trace names the same files: dd reads /dev/zero through a dup2'd stdin.
    trace = load_json("OUT/rank0.trace.json")
    paths = {}
    for ev in trace["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("name") in ("read", "write"):
            key = (ev["name"], ev.get("args", {}).get("path"))
            paths[key] = paths.get(key, 0) + 1
    check_eq(paths, {("read", "/dev/zero"): COUNT, ("write", target): COUNT}, "(call, path) of the trace's reads and writes")


main(test)
