"""`profwrap report DIR` on raw traces that were cut, damaged, written by a newer profwrap, or are no traces at
all (design property 5). For each bad file profwrap prints exactly one line naming the file and, where there
is one, the byte offset ("OUT/raw/NAME: chunk at offset 4096 overruns the file (cut short): read up to there",
"OUT/raw/NAME: format version 9 is newer than this profwrap (2): skipped"); renders the reports from what is
valid and exits 0 when something was rendered; never crashes or hangs.

Exactness: a trace cut inside a chunk (or whose chunk claims more bytes than the file holds) gives the very
report of the same trace cut at that chunk's start, which gives no line at all (a collector stopped there
leaves such a file); a skipped trace leaves the report of the other traces alone; and the calls of a report
are the sum of those of its traces read apart."""
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

RAW_VERSION = 2  # collector/lib/rawfile.h
HEADER = 16      # magic, version, header size


def read(path):
    with open(path, "rb") as f:
        return f.read()


def copy_run(src, dst, skip=(), replace=None):
    """dst/raw with src's traces, less those named in skip; replace: {name: bytes} written instead."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(os.path.join(dst, "raw"))
    for name in os.listdir(os.path.join(src, "raw")):
        if name in skip:
            continue
        if replace and name in replace:
            with open(os.path.join(dst, "raw", name), "wb") as f:
                f.write(replace[name])
        else:
            shutil.copy(os.path.join(src, "raw", name), os.path.join(dst, "raw", name))
    return dst


def report(out, what, expect_rc=0):
    """Runs profwrap report OUT: (its stderr lines without the closing one, rank0.json or None)."""
    r = profwrap(["report", out], timeout=60)
    check_eq(r.rc, expect_rc, "profwrap report (%s)\n%s" % (what, r.describe()))
    for bad in ("Sanitizer", "runtime error", "Traceback"):
        check(bad not in r.err, "profwrap report (%s) crashed:\n%s", what, r.err)
    lines = r.err.splitlines()
    if expect_rc == 0:
        check(lines and lines[-1].startswith("profwrap: wrote reports for "), "%s: no closing line: %r", what, r.err)
        return lines[:-1], load_report(out)
    return lines, None


def said(lines, out, name, what):
    """The lines must be exactly one, "profwrap: OUT/raw/NAME: WHAT"."""
    want = "profwrap: %s/raw/%s: %s" % (out, name, what)
    check_eq(lines, [want], "what profwrap report said")


def calls(rep):
    return {(c["domain"], c["name"]): (c["count"], c["bytes"], c["errors"]) for c in rep["calls"]}


def add_calls(a, b):
    out = dict(a)
    for k, (n, nb, e) in b.items():
        n0, b0, e0 = out.get(k, (0, 0, 0))
        out[k] = (n0 + n, b0 + nb, e0 + e)
    return out


def same_report(got, want, what):
    """The rank reports agree on everything the traces decide (the command comes from the session file)."""
    for key in ("processes", "calls", "files", "libraries", "events", "dropped_events", "records_refused",
                "start_ns", "end_ns", "wall_ns"):
        check_eq(got.get(key), want.get(key), "%s: %s" % (what, key))


def test_cuts(victim, body, others):
    """The victim cut at every chunk's start and inside every chunk, and with every chunk claiming 4 GiB."""
    prev_events = -1
    for i, (off, typ, n) in enumerate(raw_chunks(os.path.join("OUT", "raw", victim))):
        boundary = copy_run("OUT", "CUT", replace={victim: body[:off]})
        lines, at_start = report(boundary, "%s cut at chunk %d's start, offset %d" % (victim, i, off))
        if i == 0:  # the PROC chunk: without it, nothing of the file
            said(lines, boundary, victim, "cut short at offset 16, before the process description: skipped")
            same_report(at_start, others, "the trace cut before its process description")
        else:
            check_eq(lines, [], "lines for a trace cut at chunk %d's start (offset %d)" % (i, off))
            mine = [p for p in at_start["processes"] if p not in others["processes"]]
            check_eq(len(mine), 1, "the victim's processes when cut at offset %d" % off)
            check(mine[0]["events"] >= prev_events, "events fell from %d to %d when cut at %d", prev_events,
                  mine[0]["events"], off)
            prev_events = mine[0]["events"]
        for cut, how in ((off + 5, "inside the chunk header"), (off + 8 + n // 2, "inside the payload")):
            mid = copy_run("OUT", "MID", replace={victim: body[:cut]})
            lines, rep = report(mid, "%s cut at %d, %s of chunk %d" % (victim, cut, how, i))
            if i == 0:
                said(lines, mid, victim, "the process description at offset 16 overruns the file (cut short): "
                     "skipped" if cut >= HEADER + 8 else "cut short at offset %d, before the process description: "
                     "skipped" % cut)
            else:
                said(lines, mid, victim, "chunk at offset %d overruns the file (cut short): read up to there" % off)
            same_report(rep, at_start, "cut at %d (%s of chunk %d) against cut at its start" % (cut, how, i))
        if i > 0:
            huge = bytearray(body)
            struct.pack_into("<I", huge, off + 4, 0xfffffff0)
            big = copy_run("OUT", "HUGE", replace={victim: bytes(huge)})
            lines, rep = report(big, "%s chunk %d claiming 4 GiB" % (victim, i))
            said(lines, big, victim, "chunk at offset %d overruns the file (cut short): read up to there" % off)
            same_report(rep, at_start, "chunk %d claiming 4 GiB against the file cut there" % i)
    for cut, what in ((0, "empty file: skipped"),
                      (9, "cut short at offset 9, inside the 16-byte file header: skipped")):
        d = copy_run("OUT", "HEAD", replace={victim: body[:cut]})
        lines, rep = report(d, "%s cut at %d" % (victim, cut))
        said(lines, d, victim, what)
        same_report(rep, others, "the victim cut at %d" % cut)
    for d in ("CUT", "MID", "HUGE", "HEAD"):
        shutil.rmtree(d)


def test_versions(victim, body, others):
    for version, what in ((9, "format version 9 is newer than this profwrap (2): skipped"),
                          (RAW_VERSION + 1, "format version 3 is newer than this profwrap (2): skipped"),
                          (1, "format version 1 is older than this profwrap reads (2): skipped")):
        b = bytearray(body)
        struct.pack_into("<I", b, 8, version)
        d = copy_run("OUT", "VERSION", replace={victim: bytes(b)})
        lines, rep = report(d, "%s of version %d" % (victim, version))
        said(lines, d, victim, what)
        same_report(rep, others, "beside a trace of version %d" % version)
        shutil.rmtree(d)


def test_not_traces(orig):
    """Files named like traces that are none: each said once, the report the original's."""
    bad = {
        "0-zeros-1.pwt": "not a profwrap raw trace (bad magic at offset 0): skipped",
        "0-empty-2.pwt": "empty file: skipped",
        "0-dir-3.pwt": "a directory: skipped",
        "0-dangling-4.pwt": "No such file or directory: skipped",
        "0-fifo-5.pwt": "not a regular file: skipped",
    }
    if os.geteuid() != 0:  # root reads a file of mode 000
        bad["0-unreadable-6.pwt"] = "Permission denied: skipped"

    def plant(d, name):
        path = os.path.join(d, "raw", name)
        if "zeros" in name:
            with open(path, "wb") as f:
                f.write(bytes(4096))
        elif "empty" in name:
            open(path, "wb").close()
        elif "dir" in name:
            os.mkdir(path)
        elif "dangling" in name:
            os.symlink("/nonexistent/profwrap-trace.pwt", path)
        elif "fifo" in name:
            os.mkfifo(path)  # no writer: opening it to read would block
        else:
            with open(path, "wb") as f:
                f.write(read(os.path.join("OUT", "raw", sorted(os.listdir("OUT/raw"))[0])))
            os.chmod(path, 0)

    for name, what in sorted(bad.items()):
        d = copy_run("OUT", "NOT")
        plant(d, name)
        lines, rep = report(d, name)
        said(lines, d, name, what)
        same_report(rep, orig, "beside %s" % name)
        shutil.rmtree(d)
    # all of them at once: one line each, in name order
    d = copy_run("OUT", "ALL")
    for name in bad:
        plant(d, name)
    os.mkfifo(os.path.join(d, "raw", "session-0-h-9.txt"))  # passed over without a word (and without waiting)
    lines, rep = report(d, "all the bad files at once")
    check_eq(lines, ["profwrap: %s/raw/%s: %s" % (d, n, bad[n]) for n in sorted(bad)], "the lines for every bad file")
    same_report(rep, orig, "beside every bad file")
    # nothing valid: exit 1, every file named, then why
    for name in os.listdir(os.path.join(d, "raw")):
        if not name.startswith("0-") and name.endswith(".pwt"):
            os.unlink(os.path.join(d, "raw", name))
    lines, _ = report(d, "bad files only", expect_rc=1)
    check_eq(lines, ["profwrap: %s/raw/%s: %s" % (d, n, bad[n]) for n in sorted(bad)] +
             ["profwrap: no readable raw trace in %s/raw" % d], "the lines when no file is readable")
    shutil.rmtree(d)


def test():
    profile(["sh", "-c", 'ls / >/dev/null; cat /etc/hostname >/dev/null; sh -c "exit 3"; exit 0'], "OUT")
    names = sorted(n for n in os.listdir("OUT/raw") if n.endswith(".pwt"))
    check(len(names) >= 3, "traces: %r", names)
    lines, orig = report("OUT", "the run as it was")
    check_eq(lines, [], "lines for whole traces")
    victim = max(names, key=lambda n: len(raw_chunks(os.path.join("OUT", "raw", n))))
    body = read(os.path.join("OUT", "raw", victim))
    lines, others = report(copy_run("OUT", "OTHERS", skip=(victim,)), "without " + victim)
    lines, alone = report(copy_run("OUT", "ALONE", skip=[n for n in names if n != victim]), victim + " alone")
    # the calls of the whole are those of its parts
    check_eq(calls(orig), add_calls(calls(others), calls(alone)), "calls of the run against its traces apart")
    test_cuts(victim, body, others)
    test_versions(victim, body, others)
    test_not_traces(orig)


main(test)
