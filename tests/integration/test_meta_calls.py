"""File metadata calls from Python: os.stat, os.lstat, os.stat with dir_fd, os.access and os.listdir of known
files, each a known number of times. The report counts them in the Calls table (meta.stat, meta.lstat,
meta.fstatat, meta.access, meta.opendir, meta.readdir) and per file, exactly: a file's `stats` is the
successful stat-family and access calls that named it, a directory's `opens` its listings and `dir_reads`
its readdir calls (its entries, "." and "..", and the end). A path that does not exist is counted as an
error and gets no row."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

STATS, LSTATS, AT_STATS, ACCESSES, LISTINGS, MISSING = 1000, 100, 50, 20, 10, 7
ENTRIES = 6

SCRIPT = """
import os, sys
stat_me, lstat_me, access_me, listed, missing = sys.argv[1:6]
for _ in range(%d):
    os.stat(stat_me)
for _ in range(%d):
    os.lstat(lstat_me)
fd = os.open(listed, os.O_RDONLY)
for _ in range(%d):
    os.stat("entry-0", dir_fd=fd)
os.close(fd)
for _ in range(%d):
    os.access(access_me, os.R_OK)
names = 0
for _ in range(%d):
    names += len(os.listdir(listed))
for _ in range(%d):
    try:
        os.stat(missing)
    except FileNotFoundError:
        pass
print(names)
""" % (STATS, LSTATS, AT_STATS, ACCESSES, LISTINGS, MISSING)


def test():
    data = tmpdir("meta-")
    stat_me = write_file(os.path.join(data, "stat-me"), 10)
    lstat_me = write_file(os.path.join(data, "lstat-me"), 10)
    access_me = write_file(os.path.join(data, "access-me"), 10)
    listed = os.path.join(data, "listed")
    os.mkdir(listed)
    for i in range(ENTRIES):
        write_file(os.path.join(listed, "entry-%d" % i), i)
    missing = os.path.join(data, "no-such-file")
    r, rep = profile([PYTHON, "-c", SCRIPT, stat_me, lstat_me, access_me, listed, missing], "OUT")
    check_eq(r.out, "%d\n" % (LISTINGS * ENTRIES), "the script's own count of names listed")

    check_eq(need_file(rep, stat_me)["stats"], STATS, "stats of the file os.stat named")
    check_eq(need_file(rep, lstat_me)["stats"], LSTATS, "stats of the file os.lstat named")
    check_eq(need_file(rep, access_me)["stats"], ACCESSES, "stats of the file os.access named")
    check_eq(need_file(rep, os.path.join(listed, "entry-0"))["stats"], AT_STATS,
             "stats of the file os.stat named relative to a directory descriptor")
    d = need_file(rep, listed)
    check_eq(d["opens"], LISTINGS + 1, "opens of the listed directory (its listings and one os.open)")
    check_eq(d["dir_reads"], LISTINGS * (ENTRIES + 3), "readdir calls on the listed directory")
    check(d["meta_ns"] > 0 and d["meta_ns"] <= d["time_ns"], "the directory's meta_ns %d within its time_ns %d",
          d["meta_ns"], d["time_ns"])
    check(file_entry(rep, missing) is None, "a row for the path that does not exist")

    # the program's own calls, plus the interpreter's (its imports stat and list directories too)
    check(count(rep, "meta", "stat") >= STATS + MISSING, "meta.stat counted %d\n%s", count(rep, "meta", "stat"),
          describe_calls(rep))
    check(call(rep, "meta", "stat")["errors"] >= MISSING, "meta.stat errors: %r", call(rep, "meta", "stat"))
    check(count(rep, "meta", "lstat") >= LSTATS, "meta.lstat counted %d", count(rep, "meta", "lstat"))
    check(count(rep, "meta", "fstatat") >= AT_STATS, "meta.fstatat counted %d", count(rep, "meta", "fstatat"))
    check(count(rep, "meta", "access") >= ACCESSES, "meta.access counted %d", count(rep, "meta", "access"))
    check(count(rep, "meta", "opendir") >= LISTINGS, "meta.opendir counted %d", count(rep, "meta", "opendir"))
    check(count(rep, "meta", "closedir") == count(rep, "meta", "opendir"), "closedir %d vs opendir %d",
          count(rep, "meta", "closedir"), count(rep, "meta", "opendir"))
    check(count(rep, "meta", "readdir") >= LISTINGS * (ENTRIES + 3), "meta.readdir counted %d",
          count(rep, "meta", "readdir"))
    check_eq(rep["dropped_events"], 0, "dropped_events")

    with open(os.path.join("OUT", "rank0.txt")) as f:
        text = f.read()
    check("| meta.stat " in text, "no meta.stat row in rank0.txt's Calls table")
    check("Stats | Dir reads" in text, "no Stats and Dir reads columns in rank0.txt's Files table")

    # --trace without meta records none of them
    _, rep = profile([PYTHON, "-c", SCRIPT, stat_me, lstat_me, access_me, listed, missing], "OUT-io",
                     opts=["--trace=io,stdio,process"])
    check_eq(sum(c["count"] for c in rep["calls"] if c["domain"] == "meta"), 0, "meta calls under --trace=io,stdio,process")


main(test)
