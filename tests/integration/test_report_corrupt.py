"""The reader of raw traces against damaged input (design property 5: garbage gives an error or a skipped
record, never a crash): traces with random bytes changed, and traces whose clock calibration pairs hold
extreme values, and a trace padded with zeros as a crash can leave one. The report must still be written (exit 0) and nothing may crash; the sanitizer build
(make SAN=1) turns undefined behaviour in the reader into a failure here. A CLOCK chunk with an extreme pair
(e.g. ticks 1, ns near 2^63) once overflowed a signed addition in pw_clock_to_ns()."""
import os
import random
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


def read(path):
    with open(path, "rb") as f:
        return f.read()


def copy_run(src, dst):
    os.makedirs(os.path.join(dst, "raw"))
    for name in os.listdir(os.path.join(src, "raw")):
        shutil.copy(os.path.join(src, "raw", name), os.path.join(dst, "raw", name))
    return dst


def report_ok(out, what, orig):
    r = profwrap(["report", out], timeout=60)
    check_eq(r.rc, 0, "profwrap report (%s)\n%s" % (what, r.describe()))
    for bad in ("Sanitizer", "runtime error", "Traceback"):
        check(bad not in r.err, "profwrap report (%s) crashed:\n%s", what, r.err)
    rep = load_report(out)
    check(len(rep["processes"]) >= len(orig["processes"]) - 1, "%s: processes lost beside the damaged trace\n%s",
          what, describe_processes(rep))
    load_json(os.path.join(out, "rank0.trace.json"))
    return rep


def test_clock_pairs(orig, victim):
    path = os.path.join("OUT", "raw", victim)
    body = read(path)
    clocks = [(off, n) for off, typ, n in raw_chunks(path) if typ == "clock" and n >= 16]
    check(len(clocks) >= 2, "%s has %d CLOCK chunks", victim, len(clocks))
    pairs = [(1, INT64_MAX - 1000), (0, UINT64_MAX), (UINT64_MAX, 0), (UINT64_MAX, UINT64_MAX), (1, 1 << 62),
             (UINT64_MAX - 5, INT64_MAX)]
    for i, (ticks, ns) in enumerate(pairs):
        for which in (0, len(clocks) - 1):
            out = copy_run("OUT", "CLOCK-%d-%d" % (i, which))
            b = bytearray(body)
            struct.pack_into("<QQ", b, clocks[which][0] + 8, ticks, ns)
            with open(os.path.join(out, "raw", victim), "wb") as f:
                f.write(bytes(b))
            report_ok(out, "clock pair ticks %#x ns %#x in CLOCK chunk %d" % (ticks, ns, which), orig)
            shutil.rmtree(out)


def test_random(orig):
    names = sorted(n for n in os.listdir("OUT/raw") if n.endswith(".pwt"))
    for seed in range(40):
        rnd = random.Random(seed)
        out = copy_run("OUT", "RANDOM-%d" % seed)
        victim = os.path.join(out, "raw", names[seed % len(names)])
        b = bytearray(read(victim))
        for _ in range(1 + seed % 40):
            b[rnd.randrange(16, len(b))] = rnd.getrandbits(8)
        if seed % 4 == 3:
            b = b[:rnd.randrange(16, len(b))]
        with open(victim, "wb") as f:
            f.write(bytes(b))
        report_ok(out, "random damage, seed %d" % seed, orig)
        shutil.rmtree(out)


def test_zero_tail(orig, victim):
    """1 GiB of zeros (sparse) after the last chunk: one line names them, every record before them is read."""
    out = copy_run("OUT", "ZEROS")
    path = os.path.join(out, "raw", victim)
    size = os.path.getsize(path)
    os.truncate(path, size + (1 << 30))
    rep = report_ok(out, "a zero tail", orig)
    r = profwrap(["report", out])
    lines = [x for x in r.err.splitlines() if victim in x]
    check_eq(lines, ["profwrap: %s: zeros from offset %d to the end (%d bytes, as a crash can leave a file): read up "
                     "to there" % (path, size, 1 << 30)], "what profwrap report says of the zero tail")
    check_eq((rep["events"], len(rep["processes"])), (orig["events"], len(orig["processes"])),
             "(events, processes) with the zero tail")
    shutil.rmtree(out)


def test():
    r, orig = profile(["sh", "-c", 'ls / >/dev/null; sh -c "exit 3"; exit 0'], "OUT")
    names = sorted(n for n in os.listdir("OUT/raw") if n.endswith(".pwt"))
    victim = max(names, key=lambda n: os.path.getsize(os.path.join("OUT", "raw", n)))
    test_random(orig)
    test_clock_pairs(orig, victim)
    test_zero_tail(orig, victim)


main(test)
