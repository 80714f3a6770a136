""""What to fix first" for programs without GPU calls, on Python programs built to trigger each rule and on
ones built not to:

- startup_bound: 0.6 s of imports and loading (sleeps in place of a slow file system) before 8 steps of
  50 ms, a function named with --python-functions; the same program without --python-functions has no step
  to measure from (no finding), and one whose 40 steps start at once has none.
- checkpoint_bound: 6 checkpoints of 32 MiB (fsync'ed) between short sleeps, saved over one ckpt.pt (6 saves
  of one file, not one file of 201 MB: issue 32) or to ckpt-N.pt (6 files); the same bytes written to
  data-N.txt make no checkpoint finding.
- input_bound: two multiprocessing workers read 16 MiB of files while the main thread waits on their queue;
  the same files read by the main thread itself make none.
- worker_startup: 4 epochs, each starting 2 workers that take 0.15 s (a sleep) before their first read; the
  same 2 workers kept for all 4 epochs make none."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

STARTUP = r"""
import json, decimal, email.parser, http.client, xml.dom.minidom, sqlite3, argparse, time, sys
time.sleep(float(sys.argv[1]))
def step(i):
    time.sleep(0.05)
for i in range(int(sys.argv[2])):
    step(i)
"""

CHECKPOINT = r"""
import os, sys, time
d, name = sys.argv[1], sys.argv[2]
block = b"w" * (32 << 20)
for i in range(6):
    time.sleep(0.005)
    with open(os.path.join(d, name.replace("N", str(i))), "wb") as f:
        f.write(block)
        f.flush()
        os.fsync(f.fileno())
"""

INPUT = r"""
import multiprocessing as mp, os, sys, time
d, mode = sys.argv[1], sys.argv[2]
files = [os.path.join(d, "shard-%d.bin" % i) for i in range(16)]
def work(paths, q):
    for p in paths:
        with open(p, "rb") as f:
            n = len(f.read())
        time.sleep(0.03)
        q.put(n)
if __name__ == "__main__":
    if mode == "workers":
        q = mp.Queue()
        ws = [mp.Process(target=work, args=(files[k::2], q)) for k in range(2)]
        for w in ws:
            w.start()
        total = sum(q.get() for _ in files)
        for w in ws:
            w.join()
    else:
        total = 0
        for p in files:
            with open(p, "rb") as f:
                total += len(f.read())
            time.sleep(0.015)
    print(total)
"""


EPOCHS = r"""
import multiprocessing as mp, os, sys, time
d, mode = sys.argv[1], sys.argv[2]
files = [os.path.join(d, "shard-%d.bin" % i) for i in range(16)]
def work(q_in, q_out):
    time.sleep(0.15)
    for p in iter(q_in.get, None):
        with open(p, "rb") as f:
            q_out.put(len(f.read()))
def start():
    qs, q_out = [mp.Queue(), mp.Queue()], mp.Queue()
    ws = [mp.Process(target=work, args=(q, q_out)) for q in qs]
    for w in ws:
        w.start()
    return qs, q_out, ws
def stop(qs, ws):
    for q in qs:
        q.put(None)
    for w in ws:
        w.join()
if __name__ == "__main__":
    mp.set_start_method("fork")
    total = 0
    kept = start() if mode == "persistent" else None
    for epoch in range(4):
        qs, q_out, ws = kept or start()
        for i, p in enumerate(files[epoch * 4:(epoch + 1) * 4]):
            qs[i % 2].put(p)  # each worker its own share
        total += sum(q_out.get() for _ in range(4))
        if not kept:
            stop(qs, ws)
    if kept:
        stop(kept[0], kept[2])
    print(total)
"""


def script(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def ids(rep):
    return [f["id"] for f in rep["findings"]]


def finding(rep, fid):
    got = [f for f in rep["findings"] if f["id"] == fid]
    check(got, "no %s finding: %r", fid, rep["findings"])
    return got[0]


def checkpoint_rows(rep, f, names):
    """The files named (rank0.json's files), after checking that checkpoint_bound's share is the time in calls on
    them of wall time."""
    rows = [x for x in rep["files"] if os.path.basename(x["path"]) in names]
    check_eq(len(rows), len(names), "files rows of %r" % (names,))
    share = sum(x["time_ns"] for x in rows) / rep["wall_ns"]
    check_range(f["share"], share - 1e-4, share + 1e-4, "checkpoint_bound's share (4 decimals)")
    return rows


def test():
    d = tmpdir("host-")
    py = [sys.executable, "-I"]

    start = script(d, "startup.py", STARTUP)
    r, rep = profile(py + [start, "0.6", "8"], "OUT-startup", ["--python-functions=__main__:step"])
    f = finding(rep, "startup_bound")
    check(f["share"] >= 0.5, "startup_bound's share %r: 0.6 s of about 1 s", f["share"])
    check("before the first range (py:__main__.step)" in f["evidence"], "evidence: %r", f["evidence"])
    r, rep = profile(py + [start, "0.6", "8"], "OUT-startup-nostep")
    check("startup_bound" not in ids(rep), "startup_bound without a step: %r", rep["findings"])
    # 2 s of steps: Python's own start (slower under sanitizers) stays well under 25 %
    r, rep = profile(py + [start, "0", "40"], "OUT-startup-quick", ["--python-functions=__main__:step"])
    check("startup_bound" not in ids(rep), "startup_bound when the steps start at once: %r", rep["findings"])

    ckpt = script(d, "checkpoint.py", CHECKPOINT)
    r, rep = profile(py + [ckpt, d, "ckpt.pt"], "OUT-ckpt-rewritten")
    f = finding(rep, "checkpoint_bound")
    saves = "6 checkpoint saves to %s (33.6 MB each, 201 MB in all) took " % os.path.join(d, "ckpt.pt")
    check(f["evidence"].startswith(saves), "evidence: %r", f["evidence"])
    check(" in calls on it; the longest save took " in f["evidence"], "evidence: %r", f["evidence"])
    check_eq([(x["opens"], x["write_bytes"]) for x in checkpoint_rows(rep, f, ["ckpt.pt"])], [(6, 6 << 25),],
             "ckpt.pt's opens and bytes")
    r, rep = profile(py + [ckpt, d, "ckpt-N.pt"], "OUT-ckpt-files")
    f = finding(rep, "checkpoint_bound")
    check(f["evidence"].startswith("6 checkpoint saves to 6 files (33.6 MB each, 201 MB in all) took "),
          "evidence: %r", f["evidence"])
    check(" in calls on them; the longest save took " in f["evidence"], "evidence: %r", f["evidence"])
    rows = checkpoint_rows(rep, f, ["ckpt-%d.pt" % i for i in range(6)])
    # one save each: the longest save is the file with the most time in calls on it
    longest = max(rows, key=lambda x: x["time_ns"])["path"]
    check(f["evidence"].endswith(" (%s)." % longest), "evidence: %r, the longest save %s", f["evidence"], longest)
    r, rep = profile(py + [ckpt, d, "data-N.txt"], "OUT-data")
    check("checkpoint_bound" not in ids(rep), "checkpoint_bound for data files: %r", rep["findings"])

    for i in range(16):
        with open(os.path.join(d, "shard-%d.bin" % i), "wb") as f:
            f.write(b"d" * (1 << 20))
    inp = script(d, "input.py", INPUT)
    r, rep = profile(py + [inp, d, "workers"], "OUT-input")
    check_eq(r.out, "%d\n" % (16 << 20), "the input workload's output")
    f = finding(rep, "input_bound")
    check("while 2 child processes read 16.8 MB" in f["evidence"], "evidence: %r", f["evidence"])
    r, rep = profile(py + [inp, d, "main"], "OUT-input-main")
    check("input_bound" not in ids(rep), "input_bound when the main thread reads: %r", rep["findings"])

    epochs = script(d, "epochs.py", EPOCHS)
    r, rep = profile(py + [epochs, d, "per-epoch"], "OUT-epochs")
    check_eq(r.out, "%d\n" % (16 << 20), "the epochs workload's output")
    f = finding(rep, "worker_startup")
    check("started 8 worker processes in 4 rounds of up to 2" in f["evidence"], "evidence: %r", f["evidence"])
    r, rep = profile(py + [epochs, d, "persistent"], "OUT-epochs-kept")
    check("worker_startup" not in ids(rep), "worker_startup with persistent workers: %r", rep["findings"])


if __name__ == "__main__":
    main(test)
