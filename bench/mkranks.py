#!/usr/bin/env python3
"""mkranks.py DIR [RANKS] [COLLECTIVES] [TAIL_KB]: writes a synthetic distributed job's per-rank reports into
DIR for `profwrap merge DIR` (bench/run.sh, tests/integration/test_merge_scale.py).

Each DIR/rank<R>.json holds a "summary" object (the schema merge.c reads: figures, 8 NVTX phases, COLLECTIVES
mpi collective entry times) followed by about TAIL_KB kB of other report keys that merge must not read: a
"calls" list and a "stacks" value nested 200 deep (valid JSON, but deeper than merge's reader accepts, so a
merge that parsed past the summary would reject every file). One rank (RANKS * 3 // 7) is late: it enters
95 % of the collectives last, so it spends the least time in them, and its "forward" phase is 1.2 s longer.

As a module: make_job(out_dir, ...) writes the files and returns what `profwrap merge` must find, computed
here with the same rules (see expected()). Deterministic for a given seed. Standard library only.
"""
import json
import os
import random
import sys

T0 = 1795000000123456789  # CLOCK_REALTIME at the job's start, above 2^53
MS = 1000000
S = 1000000000
PHASES = ["forward", "backward", "optimizer", "data", "allreduce", "eval", "log", "checkpoint"]
COLUMNS = ["wall_ns", "gpu_busy_ns", "kernel_ns", "collective_ns", "io_ns", "wait_ns", "busy_ns", "dropped",
           "processes", "events"]


def tail_text(kb):
    """About kb kB of report keys after the summary (the same text for every rank)."""
    call = {"domain": "io", "name": "read", "count": 123456, "total_ns": 987654321, "bytes": 1 << 30,
            "median_ns": 4567, "path": "/data/shard-0001.bin \"quoted\" [brackets] {braces}"}
    one = json.dumps(call, separators=(",", ":"))
    n = max(1, kb * 1024 // (len(one) + 1))
    deep = "[" * 200 + "]" * 200
    return ',"calls":[' + ",".join([one] * n) + '],"stacks":' + deep + ',"files":[]'


def median(v):
    """merge.c's median: the middle value, the mean of the middle two (rounded down) for an even count."""
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def make_job(out_dir, nranks=1024, ncoll=1000, tail_kb=256, seed=1, late=None):
    """Writes out_dir/rank<R>.json for R in 0..nranks-1 and returns expected(...)'s dict."""
    rnd = random.Random(seed)
    late = nranks * 3 // 7 if late is None else late
    tail = tail_text(tail_kb)
    # When collective k is called: every 5 ms; each rank enters it 0-50 us after, the late rank 200 us after
    # in 95 % of them.
    when = [k * 5 * MS + rnd.randrange(1000) for k in range(ncoll)]
    late_at = [rnd.random() < 0.95 for _ in range(ncoll)]
    ranks = []
    for r in range(nranks):
        start = T0 + rnd.randrange(2 * MS)  # the rank's own start on its own clock
        entries = []
        for k in range(ncoll):
            at = T0 + 10 * MS + when[k] + rnd.randrange(50000) + (200000 if r == late and late_at[k] else 0)
            entries.append(at - start)
        fig = {
            "wall_ns": 6 * S + rnd.randrange(S),
            "gpu_busy_ns": 40 * S + rnd.randrange(5 * S),
            "kernel_ns": 35 * S + rnd.randrange(5 * S),
            "collective_ns": (2 * S if r == late else 8 * S) + rnd.randrange(S),
            "io_ns": rnd.randrange(2 * S),
            "wait_ns": rnd.randrange(3 * S),
            "busy_ns": 50 * S + rnd.randrange(S),
            "dropped": rnd.randrange(3) * rnd.randrange(1000),
            "processes": 1 + rnd.randrange(4),
            "events": 1000000 + rnd.randrange(1000000),
        }
        phases = {}
        for i, name in enumerate(PHASES):
            phases[name] = (8 - i) * S + rnd.randrange(100 * MS)
        if r == late:
            phases["forward"] += 1200 * MS
        if r % 5 == 0:
            del phases["checkpoint"]  # some ranks lack a phase: they count 0 for it
        plist = [{"name": n, "ns": v} for n, v in sorted(phases.items(), key=lambda kv: -kv[1])]
        summary = {"rank": r, "host": "node%d" % (r // 8), "world_size": nranks, "command": "python train.py",
                   "start_realtime_ns": start}
        summary.update(fig)
        summary["top_calls"] = "nccl.ncclAllReduce 7.80 s, io.read 1.20 s, cudart.cudaStreamSynchronize 300 ms"
        summary["phases"] = plist
        summary["collectives"] = [{"domain": "mpi", "entries_ns": entries, "truncated": False}]
        with open(os.path.join(out_dir, "rank%d.json" % r), "w") as f:
            f.write('{"format":"profwrap-report","version":2,"summary":')
            f.write(json.dumps(summary, separators=(",", ":")))
            f.write(tail)
            f.write("}\n")
        ranks.append({"rank": r, "start": start, "entries": entries, "fig": fig, "phases": phases})
    return expected(ranks)


def expected(ranks):
    """What merge must report, by merge.c's rules: per collective the spread and the last rank (the lowest on
    ties), the straggler (last in >= max(0.5, min(0.75, 1.5/n)) of >= 3 compared), its phase (largest excess
    over the median of the others, 0 for a rank without the phase), min/median/max per column."""
    n = len(ranks)
    ncoll = min(len(r["entries"]) for r in ranks)
    last_count = [0] * n
    spreads = []
    max_spread, max_index = -1, None
    for k in range(ncoll):
        lo, hi, who = None, None, None
        for i, r in enumerate(ranks):
            t = r["start"] + r["entries"][k]
            lo = t if lo is None or t < lo else lo
            if hi is None or t > hi:
                hi, who = t, i
        spreads.append(hi - lo)
        if hi - lo > max_spread:
            max_spread, max_index = hi - lo, k
        last_count[who] += 1
    best = max(range(n), key=lambda i: (last_count[i], -i))
    need = max(0.5, min(0.75, 1.5 / n))
    straggler = ranks[best]["rank"] if n > 1 and ncoll >= 3 and last_count[best] >= need * ncoll else None
    phase = None
    if straggler is not None:
        mine = ranks[best]["phases"]
        top_excess = 0
        for name, ns in sorted(mine.items(), key=lambda kv: -kv[1]):
            med = median([r["phases"].get(name, 0) for i, r in enumerate(ranks) if i != best])
            if ns > med and ns - med > top_excess:
                top_excess, phase = ns - med, name
    stats = {}
    for c in COLUMNS:
        v = [r["fig"][c] for r in ranks]
        stats[c] = {"min": min(v), "median": median(v), "max": max(v)}
    order = sorted(range(n), key=lambda i: (-last_count[i], ranks[i]["rank"]))
    return {
        "nranks": n,
        "straggler": straggler,
        "straggler_phase": phase,
        "last_count": {ranks[i]["rank"]: last_count[i] for i in range(n)},
        "top_last": [(ranks[i]["rank"], last_count[i]) for i in order[:3] if last_count[i]],
        "compared": ncoll,
        "median_spread": median(spreads) if spreads else 0,
        "max_spread": max_spread if spreads else 0,
        "max_spread_index": max_index,
        "stats": stats,
        "figures": {r["rank"]: r["fig"] for r in ranks},
    }


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: mkranks.py DIR [RANKS] [COLLECTIVES] [TAIL_KB]\n")
        return 2
    out = argv[1]
    nranks = int(argv[2]) if len(argv) > 2 else 1024
    ncoll = int(argv[3]) if len(argv) > 3 else 1000
    tail_kb = int(argv[4]) if len(argv) > 4 else 256
    os.makedirs(out, exist_ok=True)
    exp = make_job(out, nranks, ncoll, tail_kb)
    print("mkranks: %d rank files in %s; straggler rank %s, phase %s" % (nranks, out, exp["straggler"],
                                                                          exp["straggler_phase"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
