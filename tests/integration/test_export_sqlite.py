"""`profwrap export sqlite DIR` as a user runs it after a run, read with Python's sqlite3 module through the
queries users write for Nsight Systems' exports (nsys's tables and columns), checked against the reports and
the workloads' own counts.

GPU: two ranks of tests/workloads/cuda_gpu_patterns overlap on the fake GPU (per NVTX "step", a compute kernel
launched with cudaLaunchKernel and an all-reduce whose NCCL kernel ncclAllReduce enqueues). Per rank: the
kernels' count and, per kernel, count and total time in a kernel summary (the shape of nsys's
cuda_gpu_kern_sum: CUPTI_ACTIVITY_KIND_KERNEL joined to StringIds) equal the report's kernels[]; every compute
kernel joins its cudaLaunchKernel in CUPTI_ACTIVITY_KIND_RUNTIME by correlationId and every NCCL kernel its
ncclAllReduce in PROFWRAP_CALLS; the runtime calls per name equal the report's; the GPU's idle time from the
gaps between kernels (a window query) equals gpus[].idle_ns; NVTX_EVENTS holds the steps as push/pop ranges;
TARGET_INFO_GPU the device as the report names it.

I/O: dd writes N blocks of 4096 bytes (its own "records out" says N): OSRT_API has N writes, PROFWRAP_CALLS
their bytes on the file's PROFWRAP_FILES row, and the file's figures are the report's.

CPU samples (--sample): PROFWRAP_SAMPLES has the report's count and CPU time, and each sample's stack is in
PROFWRAP_STACK_FRAMES.

The queries docs/tools.md and docs/EXPORT.md show: each runs without an error on every
database above and returns rows from at least one of them.

Errors: a directory with no raw traces, and an unknown format, fail with one line and a non-zero status."""
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

STEPS = 20

# The shape of nsys's kernel summary: per kernel name (demangled), total, count, min, max.
KERNEL_SUMMARY = """
WITH summary AS (
    SELECT str.value AS name, sum(k.end - k.start) AS total, count(*) AS num,
           min(k.end - k.start) AS min, max(k.end - k.start) AS max
    FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
    JOIN StringIds AS str ON str.id = k.demangledName
    GROUP BY 1
)
SELECT name, total, num, min, max FROM summary ORDER BY total DESC
"""

# Idle time between the GPU's kernels: a gap wherever a kernel starts after every earlier one ended.
IDLE_GAPS = """
SELECT sum(gap) FROM (
    SELECT start - max(end) OVER (ORDER BY start, end ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
    FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = ?
) WHERE gap > 0
"""


def connect(path):
    check(os.path.exists(path), "no %s after profwrap export sqlite", path)
    return sqlite3.connect(path)


def export(out):
    r = profwrap(["export", "sqlite", out])
    check_eq(r.rc, 0, "profwrap export sqlite %s\n%s" % (out, r.describe()))
    return r


def check_gpu():
    profile_overlap_ranks("OUT", STEPS)
    e = export("OUT")
    check("wrote 3 databases in OUT" in e.err, "export's message: %r", e.err)
    for rank in (0, 1):
        rep = load_report("OUT", rank)
        db = connect("OUT/rank%d.sqlite" % rank)
        what = "rank %d: " % rank
        gpu = rep["gpus"][0]
        check_eq(db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0], gpu["kernels"],
                 what + "kernels in CUPTI_ACTIVITY_KIND_KERNEL against gpus[].kernels")

        # per kernel, by its name as the report keys it (CUPTI's: mangled when the compiler mangled it)
        ours = {}
        for name, n, total in db.execute(
                "SELECT coalesce(m.value, d.value), count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                " JOIN StringIds d ON d.id = k.demangledName LEFT JOIN StringIds m ON m.id = k.mangledName"
                " GROUP BY 1"):
            ours[name] = (n, total)
        theirs = {k["name"]: (k["count"], k["total_ns"]) for k in rep["kernels"]}
        check_eq(ours, theirs, what + "per kernel (count, total ns) against kernels[]")
        summary = db.execute(KERNEL_SUMMARY).fetchall()
        plain = demangled([k["name"] for k in rep["kernels"]])
        check_eq(sorted((name, total, n) for name, total, n, _, _ in summary),
                 sorted((plain[k["name"]], k["total_ns"], k["count"]) for k in rep["kernels"]),
                 what + "the kernel summary (demangled names)")
        short = dict(db.execute("SELECT d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d"
                                " ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName"))
        check_eq(sorted(short.values()), ["ncclDevKernel_AllReduce_Sum_f32_RING_LL", "overlap_kernel"],
                 what + "shortName")

        # the call that enqueued each kernel
        launched = db.execute(
            "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
            " ON r.correlationId = k.correlationId JOIN StringIds s ON s.id = r.nameId GROUP BY 1").fetchall()
        check_eq(launched, [("cudaLaunchKernel", STEPS)], what + "kernels joined to their runtime call")
        by_call = db.execute(
            "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PROFWRAP_CALLS c"
            " ON c.correlationId = k.correlationId JOIN StringIds s ON s.id = c.nameId GROUP BY 1 ORDER BY 1"
        ).fetchall()
        check_eq(by_call, [("cudaLaunchKernel", STEPS), ("ncclAllReduce", STEPS)],
                 what + "kernels joined to the library call that enqueued them")
        runtime = dict(db.execute("SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s"
                                  " ON s.id = r.nameId GROUP BY 1"))
        check_eq(runtime, {c["name"]: c["count"] for c in rep["calls"] if c["domain"] == "cudart"},
                 what + "CUDA runtime calls per name against calls[]")

        idle = db.execute(IDLE_GAPS, (gpu["device"],)).fetchone()[0]
        check_eq(idle, gpu["idle_ns"], what + "GPU idle ns from the gaps between kernels against gpus[].idle_ns")

        steps = db.execute("SELECT count(*), min(end - start) FROM NVTX_EVENTS WHERE eventType = 59"
                           " AND text = 'step'").fetchone()
        check_eq(steps[0], STEPS, what + "NVTX push/pop ranges 'step'")
        check(steps[1] > 0, "%sa step with no duration: %r", what, steps)
        check_eq(db.execute("SELECT name, smCount FROM TARGET_INFO_GPU").fetchall(), [(gpu["name"], gpu["sms"])],
                 what + "TARGET_INFO_GPU")
        check_eq(db.execute("SELECT value FROM PROFWRAP_META WHERE name = 'rank'").fetchone()[0], rank,
                 what + "PROFWRAP_META rank")
        # a thread's globalTid is nsys's: pid << 24 | tid
        pids = {p["pid"] for p in rep["processes"]}
        tids = db.execute("SELECT DISTINCT globalTid >> 24 FROM PROFWRAP_CALLS").fetchall()
        check_eq({t[0] for t in tids}, pids, what + "the pids in globalTid")
        db.close()


def check_io():
    n = 300
    data = os.path.abspath("dd-data")
    r, rep = profile(["dd", "if=/dev/zero", "of=" + data, "bs=4096", "count=%d" % n], "IO", quiet=True)
    m = re.search(r"^(\d+)\+0 records out", r.err, re.M)
    check(m and int(m.group(1)) == n, "dd's own count: %r", r.err)
    export("IO")
    db = connect("IO/rank0.sqlite")
    writes = db.execute(
        "SELECT count(*), sum(c.bytes) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId"
        " JOIN PROFWRAP_CALLS c ON c.start = o.start AND c.globalTid = o.globalTid AND c.nameId = o.nameId"
        " JOIN PROFWRAP_FILES f ON f.id = c.fileId WHERE s.value = 'write' AND f.path = ?", (data,)).fetchone()
    check_eq(writes, (n, n * 4096), "dd's writes on its output file (count, bytes)")
    f = need_file(rep, data)
    row = db.execute("SELECT writes, writeBytes, timeNs, opens FROM PROFWRAP_FILES WHERE path = ?",
                     (data,)).fetchone()
    check_eq(row, (f["writes"], f["write_bytes"], f["time_ns"], f["opens"]), "PROFWRAP_FILES against files[]")
    for c in rep["calls"]:
        got = db.execute("SELECT count(*) FROM PROFWRAP_CALLS c JOIN StringIds s ON s.id = c.nameId"
                         " JOIN PROFWRAP_DOMAINS d ON d.id = c.domainId WHERE s.value = ? AND d.name = ?",
                         (c["name"], c["domain"])).fetchone()[0]
        check_eq(got, c["count"], "PROFWRAP_CALLS %s/%s against calls[]" % (c["domain"], c["name"]))
    db.close()


def check_samples():
    r, rep = profile([workload("cpu_spin"), "arith", "300"], "SAMPLES", opts=["--sample=997"])
    export("SAMPLES")
    db = connect("SAMPLES/rank0.sqlite")
    s = rep["samples"]
    check(s["count"] > 0, "no samples in the report: %r", s)
    check_eq(db.execute("SELECT count(*), sum(cpuNs) FROM PROFWRAP_SAMPLES").fetchone(), (s["count"], s["cpu_ns"]),
             "PROFWRAP_SAMPLES (count, CPU ns) against samples")
    orphans = db.execute("SELECT count(*) FROM PROFWRAP_SAMPLES WHERE stackId IS NOT NULL AND stackId NOT IN"
                         " (SELECT stackId FROM PROFWRAP_STACK_FRAMES)").fetchone()[0]
    check_eq(orphans, 0, "samples whose stack has no frames")
    spin = db.execute("SELECT count(DISTINCT p.rowid) FROM PROFWRAP_SAMPLES p JOIN PROFWRAP_STACK_FRAMES f"
                      " ON f.stackId = p.stackId WHERE f.function = 'spin_arith_on'").fetchone()[0]
    check(spin * 2 > s["count"], "samples in spin_arith_on: %d of %d", spin, s["count"])
    db.close()


def check_errors():
    os.mkdir("EMPTY")
    r = profwrap(["export", "sqlite", "EMPTY"])
    lines = r.err.strip().splitlines()
    check(r.rc != 0 and len(lines) == 1 and lines[0].startswith("profwrap: cannot read EMPTY/raw"),
          "export of a directory with no raw traces\n%s", r.describe())
    r = profwrap(["export", "parquet", "IO"])
    check(r.rc != 0 and r.err.strip() == "profwrap: usage: profwrap export sqlite DIR",
          "export in an unknown format\n%s", r.describe())


def doc_queries():
    """The SQL statements (a "-- " comment line, then the statement up to its ';') of docs/tools.md and of
    docs/EXPORT.md's "Queries"."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    found = []
    for name, start, end in ((os.path.join("docs", "tools.md"), "# Use with other tools", "\n# "),
                             (os.path.join("docs", "EXPORT.md"), "## Queries", "\n## ")):
        with open(os.path.join(root, name)) as f:
            text = f.read()
        at = text.index(start)
        stop = text.find(end, at + len(start))
        section = text[at:stop if stop >= 0 else len(text)]
        for m in re.finditer(r"^\s*-- ([^\n]*)\n(.*?;)", section, re.M | re.S):
            found.append(("%s: %s" % (name, m.group(1)), m.group(2)))
    return found


def check_doc_queries(paths):
    queries = doc_queries()
    check(len(queries) >= 8, "the documents' queries: found %d", len(queries))
    dbs = [connect(p) for p in paths]
    for what, sql in queries:
        rows = 0
        for path, db in zip(paths, dbs):
            try:
                rows += len(db.execute(sql).fetchall())
            except sqlite3.Error as e:
                raise Fail("%s fails on %s: %s\n%s" % (what, path, e, sql))
        check(rows > 0, "%s returns no row on %s\n%s", what, ", ".join(paths), sql)
    for db in dbs:
        db.close()


def test():
    check_io()
    check_samples()
    check_errors()
    check_gpu()
    check_doc_queries(["OUT/rank0.sqlite", "IO/rank0.sqlite", "SAMPLES/rank0.sqlite"])


if __name__ == "__main__":
    main(test)
