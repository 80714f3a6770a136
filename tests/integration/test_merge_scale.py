"""profwrap merge on a synthetic job of 1,024 rank reports (bench/mkranks.py): each with a summary of 1,000
mpi collective entries and 8 phases, then 256 kB of other report keys that merge must not read (among them a
value nested 200 deep, which merge's reader would refuse: reading past the summary fails every file). One
rank is late in 95 % of the collectives.

Checks, against the figures mkranks.py computes with merge's rules: the straggler and its phase, the rows,
min/median/max of every column, the skew of the mpi collectives. Memory: the merge's peak RSS (ru_maxrss
of the merge process, from bench/timeit) stays under 64 MB, and merging 1,024 ranks takes less than 4 MB more than
merging 64 ranks of the same shape: what grows with the ranks is a row (~550 B) and a table row of
summary.txt (1.3 kB) per rank, ~1.8 MB for 960 more ranks; keeping the entry times of every rank
(ranks x collectives) would add at least 960 x 1000 x 8 B = 7.7 MB. The memory checks are skipped in a
sanitizer build (ASan keeps freed memory). No timing is checked: bench/run.sh measures it."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

sys.path.insert(0, os.path.join(REPO, "bench"))
import mkranks  # noqa: E402

MERGE_TIMEOUT = 90
RSS_BOUND_KB = 64 * 1024
RSS_GROWTH_BOUND_KB = 4 * 1024


def sanitized():
    """Whether the profwrap binary was built with ASan (make SAN=1)."""
    try:
        with open(PROFWRAP, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def timeit():
    """bench/timeit built here: it forks and execs from a small process, so the ru_maxrss it reports is the
    merge's own (a child forked from this Python process would start with Python's resident pages)."""
    with open(os.path.join(REPO, "bench", "timeit.c")) as f:
        source = f.read()
    return build_c("timeit", source, cflags=["-O2"])


def merge(tool, out):
    """Runs `profwrap merge OUT` under timeit; returns (rc, stderr text, ru_maxrss in kB of the merge)."""
    r = run([tool, "-n", "1", "-m", "--", PROFWRAP, "merge", out], timeout=MERGE_TIMEOUT)
    fields = dict(kv.split("=", 1) for kv in r.out.split() if "=" in kv)
    if r.rc != 0 or "status" not in fields:
        raise Fail("timeit failed\n" + r.describe())
    note("profwrap merge %s: %.2f s, peak RSS %s kB, peak RssAnon %s kB" % (
        out, float(fields["min_s"]), fields["maxrss_kb"], fields["maxanon_kb"]))
    return int(fields["status"]), r.err, int(fields["maxrss_kb"])


def check_summary(out, exp):
    s = load_json(os.path.join(out, "summary.json"))
    check_eq(s.get("format"), "profwrap-summary", "format")
    check_eq(s.get("version"), 2, "version")
    n = exp["nranks"]
    check_eq(len(s["ranks"]), n, "rows")
    check_eq(s["world_size"], n, "world_size")
    check_eq(s["missing_ranks"], [], "missing_ranks")
    check_eq(s["unreadable"], [], "unreadable files")
    check_eq([r["rank"] for r in s["ranks"]], list(range(n)), "rows in rank order")
    for row in s["ranks"]:
        fig = exp["figures"][row["rank"]]
        for col in mkranks.COLUMNS:
            if row[col] != fig[col]:
                raise Fail("rank %d %s: expected %d, got %d" % (row["rank"], col, fig[col], row[col]))
        check_eq(row["last_arrivals"], exp["last_count"][row["rank"]], "rank %d last_arrivals" % row["rank"])
    for col in mkranks.COLUMNS:
        got = s["rank_stats"][col]
        for which in ("min", "median", "max"):
            check_eq(got[which], exp["stats"][col][which], "%s %s" % (col, which))
    check(exp["straggler"] is not None, "mkranks made no straggler")
    check_eq(s["straggler"], exp["straggler"], "straggler")
    check_eq(s["straggler_reason"], "collectives", "straggler_reason")
    check_eq(s["straggler_phase"], exp["straggler_phase"], "straggler_phase")
    check_eq(s["straggler_phase"], "forward", "straggler_phase (mkranks' late phase)")
    skew = [d for d in s["collective_skew"] if d["domain"] == "mpi"]
    check_eq(len(skew), 1, "mpi skew entries")
    d = skew[0]
    check_eq(d["compared"], exp["compared"], "collectives compared")
    check_eq(d["median_spread_ns"], exp["median_spread"], "median spread")
    check_eq(d["max_spread_ns"], exp["max_spread"], "max spread")
    check_eq(d["max_spread_index"], exp["max_spread_index"], "max spread index")
    check_eq([(x["rank"], x["count"]) for x in d["last_arrivals"]], exp["top_last"], "last arrivals")
    with open(os.path.join(out, "summary.txt")) as f:
        text = f.read()
    lines = text.split("\n")
    check(all(len(line) < 120 for line in lines), "summary.txt has lines of 120 columns or more")
    check_eq(sum(1 for line in lines if line.startswith("| ") and not line.startswith("| Rank")), n,
             "table rows in summary.txt")
    check("Straggler: rank %d: the others waited" % exp["straggler"] in text, "no straggler line:\n%s",
          text[-3000:])
    check('phase "forward"' in text, "no straggler phase in summary.txt:\n%s", text[-3000:])
    # summary.html: a row per rank, the straggler's marked, the skew chart of the collectives compared
    page = os.path.join(out, "summary.html")
    with open(page) as f:
        html = f.read()
    check_eq(len(re.findall(r'<tr class="rank[^"]*" data-rank="\d+"', html)), n, "rank rows in summary.html")
    check_eq(re.findall(r'<tr class="rank straggler" data-rank="(\d+)"', html), [str(exp["straggler"])],
             "the straggler's row in summary.html")
    check_eq(re.findall(r'id="straggler" data-straggler="(-?\d+)"', html), [str(exp["straggler"])],
             "the straggler in summary.html")
    check_eq(re.findall(r'<svg class="skew" data-domain="mpi" data-compared="(\d+)"', html), [str(exp["compared"])],
             "the mpi skew chart in summary.html")
    check(os.path.getsize(page) <= 5 << 20, "summary.html of %d ranks is %d bytes (over 5 MB)", n,
          os.path.getsize(page))


def test_cli():
    r = profwrap(["merge"])
    check_eq(r.rc, 2, "profwrap merge without DIR: exit status\n" + r.describe())
    check_eq(r.err.strip(), "profwrap: usage: profwrap merge DIR", "profwrap merge without DIR: message")
    empty = tmpdir("empty-")
    r = profwrap(["merge", empty])
    check_eq(r.rc, 1, "profwrap merge EMPTY: exit status\n" + r.describe())
    check_eq(r.err, "profwrap: no rank<R>.json report in %s\n" % empty, "profwrap merge EMPTY: message")
    r = profwrap(["merge", os.path.join(empty, "nonexistent")])
    check_eq(r.rc, 1, "profwrap merge NONEXISTENT: exit status\n" + r.describe())
    check_eq(r.err.count("\n"), 1, "profwrap merge NONEXISTENT: one line: %r" % r.err)
    check_eq(r.out, "", "profwrap merge stdout")


def test():
    test_cli()
    tool = timeit()
    big = tmpdir("job1024-")
    small = tmpdir("job64-")
    t0 = time.monotonic()
    exp = mkranks.make_job(big, nranks=1024, ncoll=1000, tail_kb=256)
    exp_small = mkranks.make_job(small, nranks=64, ncoll=1000, tail_kb=256)
    note("generated in %.1f s" % (time.monotonic() - t0))
    rc, err, rss = merge(tool, big)
    check_eq(rc, 0, "profwrap merge exit status\n" + err)
    check_eq(err.strip(), "profwrap: summary of 1024 ranks in %s/summary.txt" % big, "profwrap merge message")
    check_summary(big, exp)
    rc, err, rss_small = merge(tool, small)
    check_eq(rc, 0, "profwrap merge (64 ranks) exit status\n" + err)
    check_summary(small, exp_small)
    if sanitized():
        note("sanitizer build: peak RSS %d kB (1,024 ranks), %d kB (64 ranks) not checked" % (rss, rss_small))
    else:
        check(rss < RSS_BOUND_KB, "peak RSS %d kB for 1,024 ranks, bound %d kB", rss, RSS_BOUND_KB)
        check(rss - rss_small < RSS_GROWTH_BOUND_KB,
              "peak RSS grows by %d kB from 64 to 1,024 ranks (%d -> %d kB), bound %d kB", rss - rss_small,
              rss_small, rss, RSS_GROWTH_BOUND_KB)


main(test)
