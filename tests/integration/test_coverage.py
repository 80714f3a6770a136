"""The coverage self-check: cat of a 4 MiB file to /dev/null moves every byte through wrapped read/write
calls, so the wrappers account for at least 95% of what the kernel counted and the text report has no
coverage warning; the file's read bytes are exact."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SIZE = 4 * 1048576


def test():
    cat = shutil.which("cat")
    if not cat:
        skip("cat not found")
    path = write_file("four-mib.bin", SIZE)
    # stdout to /dev/null, as `cat FILE > /dev/null` in a shell, without a shell.
    r = run_to_devnull([PROFWRAP, "-q", "-o", "OUT", "--", cat, path])
    check_eq(r, 0, "profwrap -- cat FILE > /dev/null exit status")
    rep = load_report("OUT")
    cov = rep["coverage"]
    note("coverage: %r" % cov)
    check(cov["kernel_bytes"] >= 2 * SIZE, "the kernel counted %d bytes, fewer than the %d cat moved",
          cov["kernel_bytes"], 2 * SIZE)
    check(cov["seen_bytes"] >= 2 * SIZE, "the wrappers saw %d bytes, fewer than the %d cat moved",
          cov["seen_bytes"], 2 * SIZE)
    check(cov["share"] >= 0.95, "coverage share %r < 0.95 (%r)", cov["share"], cov)
    check(cov["seen_bytes"] <= cov["kernel_bytes"], "the wrappers saw more bytes than the kernel counted: %r", cov)
    with open("OUT/rank0.txt") as f:
        text = f.read()
    warnings = [line for line in text.splitlines() if line.startswith("WARNING") and "kernel" in line]
    check_eq(warnings, [], "coverage warnings in rank0.txt")
    check("Coverage" in text, "rank0.txt has no Coverage section")
    f = need_file(rep, path)
    check_eq(f["read_bytes"], SIZE, "read_bytes of the file cat read")
    check_eq(f["write_bytes"], 0, "write_bytes of the file cat read")
    null = need_file(rep, "/dev/null")
    check_eq(null["write_bytes"], SIZE, "write_bytes to /dev/null (cat's stdout)")


def run_to_devnull(args):
    import subprocess
    with open(os.devnull, "wb") as null:
        p = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=null, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        note(p.stderr.decode("utf-8", "replace"))
    return p.returncode


main(test)
