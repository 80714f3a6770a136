"""Bursts of process starts: every process is in the report. A shell runs 16 background loops of 20
`echo $i | tr 0-9 a-j | wc -c` pipelines (320 tr and 320 wc at up to 32 at once), xargs -P 8 runs cat on 400
files, and Python starts 160 subprocesses from 16 threads. Each process's connection waits for room in the
collector's backlog instead of giving up (a build lost 130 of 320 before), so the counts are exact, none is
unrecorded, and each workload's own output is what it is without profwrap."""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

LOOPS = 'for j in $(seq 16); do ( for i in $(seq 20); do echo $i | tr 0-9 a-j | wc -c; done ) & done; wait'

SUBPROCESSES = """
import subprocess, sys, threading
def work():
    for i in range(10):
        subprocess.run([sys.argv[1], "burst"])
threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done")
"""


def commands(rep):
    """How many processes ran each command (the first word of the last image's argv), and how each ended."""
    names = collections.Counter(os.path.basename(p["argv"].split(" ")[0]) for p in processes(rep) if p["argv"])
    return names, collections.Counter(p["how"] for p in processes(rep))


def check_all_recorded(rep, name, want, what):
    names, hows = commands(rep)
    check_eq(names[name], want, "%s processes in the report (%s)" % (name, what))
    check_eq(hows["unrecorded"], 0, "processes named unrecorded (%s)" % what)
    check(not rep["incomplete"], "%s: report incomplete: %s", what, rep["incomplete_reason"])


def test():
    for tool in ("sh", "tr", "wc", "seq", "xargs", "cat", "true"):
        if not shutil.which(tool):
            skip("%s not found" % tool)

    r, rep = profile(["sh", "-c", LOOPS], "OUT1")
    check_eq(sorted(r.out.split()), sorted(str(len(str(i)) + 1) for i in range(1, 21) for _ in range(16)),
             "wc's counts")
    for name in ("tr", "wc"):
        check_all_recorded(rep, name, 320, "16 loops of 20 pipelines")

    files = tmpdir("files-")
    for i in range(400):
        write_file(os.path.join(files, "f%03d" % i), 100 + i, seed=i)
    r, rep = profile(["sh", "-c", "ls %s/* | xargs -P 8 -n 1 cat | wc -c" % files], "OUT2")
    check_eq(int(r.out), sum(100 + i for i in range(400)), "bytes cat wrote")
    check_all_recorded(rep, "cat", 400, "xargs -P 8 over 400 files")

    r, rep = profile([PYTHON, "-c", SUBPROCESSES, shutil.which("true")], "OUT3")
    check_eq(r.out.strip(), "done", "the script's output")
    check_all_recorded(rep, "true", 160, "160 subprocesses from 16 threads")


main(test)
