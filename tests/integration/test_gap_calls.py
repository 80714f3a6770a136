"""Calls recorded since issue 21 (item 4), each made a known number of times by the gap_calls workload:

- mutex: 25 locks find the mutex held (its holder lets go only once the lock waits) and 50,000 find it free:
  exactly 25 wait.pthread_mutex_lock records, every one on the waiting thread; the uncontended locks leave
  none.
- polls: 40 each of ppoll, pselect and epoll_pwait; the pipe they wait on is made by pipe() and is a row
  (pipe:[inode]) with the byte written into it.
- sizes: one pwritev2 and one preadv2 of 3,345 bytes, one ftruncate, one fallocate and one fstat of a file: the
  file's row has the bytes both ways and the fstat, and the calls have their bytes.
- errno: readdir to the end of a 5-entry directory with errno set to EDOM leaves it EDOM (the wrapper clears
  errno to tell the end from an error, and gives it back); a failing stat and fstat leave ENOENT and EBADF,
  and are counted as errors; the listing's 8 readdir calls are none."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

CONTENDED, UNCONTENDED, POLLS = 25, 50000, 40


def own(out):
    return dict(line.split("=", 1) for line in out.splitlines())


def test():
    prog = workload("gap_calls")

    r, rep = profile([prog, "mutex", str(CONTENDED), str(UNCONTENDED)], "OUT-mutex")
    check_eq(own(r.out)["contended"], str(CONTENDED), "the workload's own count of contended locks")
    check_eq(count(rep, "wait", "pthread_mutex_lock"), CONTENDED, "wait.pthread_mutex_lock records\n" + describe_calls(rep))
    check_eq(call(rep, "wait", "pthread_mutex_lock")["errors"], 0, "failed mutex locks")
    check_eq(rep["dropped_events"], 0, "dropped_events")

    r, rep = profile([prog, "polls", str(POLLS)], "OUT-polls")
    check_eq(own(r.out)["ready"], str(3 * POLLS), "the workload's own count of ready polls")
    for name in ("ppoll", "pselect", "epoll_pwait"):
        check_eq(count(rep, "wait", name), POLLS, "wait.%s calls" % name)
    check_eq(count(rep, "io", "pipe"), 1, "io.pipe calls")
    # the others are the test's pipes on the workload's stdout and stderr, inherited
    pipes = [f for f in rep["files"] if re.match(r"^pipe:\[\d+\]$", f["path"]) and f["write_bytes"] == 1]
    check_eq(len(pipes), 1, "pipe rows with the byte written into the pipe pipe() made: %r" % rep["files"])

    path = os.path.join(tmpdir("sizes-"), "sized.bin")
    r, rep = profile([prog, "sizes", path], "OUT-sizes")
    got = own(r.out)
    check_eq(got["written"], "3345", "the workload's pwritev2")
    check_eq(got["read"], "3345", "the workload's preadv2")
    check_eq(os.path.getsize(path), int(got["size"]), "the file's size")
    f = need_file(rep, path)
    check_eq((f["writes"], f["write_bytes"], f["reads"], f["read_bytes"]), (1, 3345, 1, 3345),
             "the file's writes, bytes written, reads, bytes read")
    check_eq(f["stats"], 1, "the file's stats (its fstat)")
    check_eq((count(rep, "io", "pwritev2"), nbytes(rep, "io", "pwritev2")), (1, 3345), "io.pwritev2 calls and bytes")
    check_eq((count(rep, "io", "preadv2"), nbytes(rep, "io", "preadv2")), (1, 3345), "io.preadv2 calls and bytes")
    check_eq(count(rep, "io", "ftruncate"), 1, "io.ftruncate calls")
    check_eq(count(rep, "io", "fallocate"), 1, "io.fallocate calls")
    check_eq(call(rep, "io", "fallocate")["errors"], 0 if got["fallocate"] == "0" else 1, "io.fallocate errors")
    check_eq(count(rep, "meta", "fstat"), 1, "meta.fstat calls")

    listed = tmpdir("listed-")
    for i in range(5):
        write_file(os.path.join(listed, "e%d" % i), i)
    r, rep = profile([prog, "errno", listed], "OUT-errno")
    check_eq(own(r.out), {"entries": "7", "after_end": "EDOM", "after_stat": "ENOENT", "after_fstat": "EBADF",
                          "failed": "2"}, "what the workload saw under profwrap")
    check_eq((count(rep, "meta", "readdir"), call(rep, "meta", "readdir")["errors"]), (8, 0), "meta.readdir calls, errors")
    check_eq(call(rep, "meta", "stat")["errors"], 1, "meta.stat errors")
    check_eq(call(rep, "meta", "fstat")["errors"], 1, "meta.fstat errors")
    check_eq(need_file(rep, listed)["dir_reads"], 8, "dir_reads of the listed directory")


main(test)
