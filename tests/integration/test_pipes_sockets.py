"""Pipes and sockets are named and kept out of file I/O.

- A shell's command substitution: sh makes a pipe with pipe(), its child writes "hi" into it, the shell reads
  it back. The pipe is one row, named as /proc/PID/fd names it (pipe:[inode]): the parent's reads and the
  child's write (through the descriptor it inherited) land on it, 2 bytes each way.
- Python's socket.socketpair(): 5 bytes written on one end, read on the other; each end is a row
  (socket:[inode]).
- Time on them is not file I/O: the summary's io_ns (the Activity line's "file I/O") and stream_ns add up to
  the io, stdio and meta calls' time, stream_ns holds at least the pipe's time, and the Activity line shows
  "pipes and sockets"."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SOCKETS = """
import os, socket
a, b = socket.socketpair()
os.write(a.fileno(), b"hello")
print(os.read(b.fileno(), 5).decode())
"""

PIPE_ROW = re.compile(r"^pipe:\[\d+\]$")
SOCKET_ROW = re.compile(r"^socket:\[\d+\]$")


def file_io_identity(rep):
    """io_ns + stream_ns equals the io, stdio and meta calls' time."""
    total = sum(c["total_ns"] for c in rep["calls"] if c["domain"] in ("io", "stdio", "meta"))
    s = rep["summary"]
    check_eq(s["io_ns"] + rep["stream_ns"], total, "io_ns + stream_ns vs the io, stdio and meta calls' time")


def test():
    r, rep = profile(["sh", "-c", 'x=$(sleep 0.2; printf hi); echo "$x"'], "OUT")
    check_eq(r.out, "hi\n", "the shell's output")
    check(count(rep, "io", "pipe") >= 1, "no io.pipe call\n%s", describe_calls(rep))
    pipes = [f for f in rep["files"] if PIPE_ROW.match(f["path"]) and f["read_bytes"]]
    check_eq(len(pipes), 1, "pipe rows read from: %r" % [f for f in rep["files"] if PIPE_ROW.match(f["path"])])
    p = pipes[0]
    check_eq(p["read_bytes"], 2, "bytes the shell read from the pipe")
    check_eq(p["write_bytes"], 2, "bytes the child wrote into the same pipe")
    check(p["stream"] is True, "the pipe's row is not marked a stream: %r", p)
    file_io_identity(rep)
    check(rep["stream_ns"] >= p["time_ns"], "stream_ns %d below the pipe's time %d", rep["stream_ns"], p["time_ns"])
    with open(os.path.join("OUT", "rank0.txt")) as f:
        activity = [l for l in f if l.startswith("Activity:")]
    check(activity and "pipes and sockets" in activity[0], "Activity line: %r", activity)

    r, rep = profile([PYTHON, "-c", SOCKETS], "OUT2")
    check_eq(r.out, "hello\n", "the script's output")
    check(count(rep, "io", "socketpair") == 1, "io.socketpair calls\n%s", describe_calls(rep))
    ends = [f for f in rep["files"] if SOCKET_ROW.match(f["path"]) and (f["read_bytes"] or f["write_bytes"])]
    check_eq(sorted((f["read_bytes"], f["write_bytes"]) for f in ends), [(0, 5), (5, 0)],
             "bytes on the two ends of the socket pair: %r" % ends)
    check(all(f["stream"] for f in ends), "socket rows not marked streams: %r", ends)
    file_io_identity(rep)
    check(rep["stream_ns"] >= sum(f["time_ns"] for f in ends), "stream_ns %d below the sockets' time", rep["stream_ns"])


main(test)
