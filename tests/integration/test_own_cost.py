"""What profwrap itself cost: rank0.txt's header line "profwrap's own cost: X (Y % of wall): N records x Z ns, S
stacks (T), CUPTI overhead U; /dev/shm held at most V (one process)", rank0.json's profwrap_cost and the
summary's profwrap_cost_ns.

Exact, against the raw traces and the workloads' own counts: iomix (3 threads) with --stack-threshold=0 takes
a stack for every wrapped call it made, and for nothing else; iomix with fork children and --stacks=off: no
stacks and no stack time, and each process (the children too) measured what a record costs (a PW_K_COST record
each); in both, the records counted are every record the raw traces hold; cuda_train on the fake CUDA
libraries: the CUPTI overhead is the sum of the durations of the overhead records in its raw trace.
In every case the total is the sum of the parts, and the text line says the same figures as the JSON (to its 3
significant figures). The times themselves are not judged."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
COST_LINE = re.compile(r"^profwrap's own cost: (\S+ \S+) \((\S+) % of wall\): (\d+) records x (\S+) ns, (\d+) stacks "
                       r"\((\S+ \S+)\), CUPTI overhead (\S+ \S+); /dev/shm held at most (\S+ \S+) \(one process\)$",
                       re.M)
BYTE_UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}


def raw_truth(out):
    """Over the raw traces of OUT (read through profwrap dump): records, records with a stack, record-cost
    records, and the summed durations (ns) of the CUPTI overhead records."""
    records = stacked = costs = overhead_ns = 0
    for path in glob.glob(os.path.join(out, "raw", "*.pwt")):
        for d in raw_records(path):
            records += 1
            stacked += d["stack"] is not None
            costs += d["event"] == "record cost"
            if d["event"] == "CUPTI overhead":
                overhead_ns += d["t1"] - d["t0"]
    return {"records": records, "stacked": stacked, "costs": costs, "overhead_ns": overhead_ns}


def duration_ns(text):
    value, unit = text.split()
    return float(value) * UNITS[unit]


def check_close(shown, ns, what):
    """A duration the text shows with 3 significant figures against the JSON's exact ns."""
    check(abs(duration_ns(shown) - ns) <= max(0.5, ns * 0.005), "%s: the text says %s, the JSON %d ns", what, shown,
          ns)


def check_cost(out, rep):
    """The parts add up, the text says what the JSON says, the summary carries the total. Returns the JSON's."""
    c = rep["profwrap_cost"]
    check_eq(c["total_ns"], c["records_ns"] + c["stacks_ns"] + c["cupti_overhead_ns"],
             "total_ns vs records_ns + stacks_ns + cupti_overhead_ns (%r)" % c)
    check(abs(c["records_ns"] - c["records"] * c["record_ns"]) <= c["records"] * 0.005 + 1,
          "records_ns %d vs records %d x record_ns %s", c["records_ns"], c["records"], c["record_ns"])
    check(abs(c["wall_share"] - c["total_ns"] / rep["wall_ns"]) <= 1e-6, "wall_share %r vs total / wall_ns %r",
          c["wall_share"], c["total_ns"] / rep["wall_ns"])
    with open(os.path.join(out, "rank0.txt")) as f:
        text = f.read()
    header = text[:text.index("\n\n", text.index("\n\n") + 2)]
    lines = COST_LINE.findall(header)
    check_eq(len(lines), 1, "cost lines in rank0.txt's header:\n" + header)
    total, share, records, per, stacks, stacks_t, cupti, shm = lines[0]
    check_close(total, c["total_ns"], "total")
    check_eq(int(records), c["records"], "records in the text")
    check(abs(float(per) - c["record_ns"]) <= 0.05 + c["record_ns"] * 0.005, "ns per record: text %s, JSON %s",
          per, c["record_ns"])
    check_eq(int(stacks), c["stacks"], "stacks in the text")
    check_close(stacks_t, c["stacks_ns"], "stacks' time")
    check_close(cupti, c["cupti_overhead_ns"], "CUPTI overhead")
    value, unit = shm.split()
    check(abs(float(value) * BYTE_UNITS[unit] - c["shm_peak_bytes"]) <= c["shm_peak_bytes"] * 0.005,
          "/dev/shm held at most: the text says %s, the JSON %d", shm, c["shm_peak_bytes"])
    # at least the segment's header page and one step of a lane: what every recorded process holds
    check(c["shm_peak_bytes"] >= 4096 + 65536, "shm_peak_bytes %d", c["shm_peak_bytes"])
    check(any(p["pid"] == c["shm_peak_pid"] for p in rep["processes"]), "shm_peak_pid %d is no process of the "
          "report", c["shm_peak_pid"])
    check(abs(float(share) - c["wall_share"] * 100) <= 0.0005 + c["wall_share"] * 0.5,
          "share of wall: text %s %%, JSON %r", share, c["wall_share"])
    check_eq(rep["summary"]["profwrap_cost_ns"], c["total_ns"], "summary.profwrap_cost_ns")
    summary = load_json(os.path.join(out, "summary.json"))
    check_eq(summary["ranks"][0]["profwrap_cost_ns"], c["total_ns"], "summary.json's row: profwrap_cost_ns")
    return c


def run_iomix(out, forks, opts):
    data = tmpdir("iomix-data-")
    r, rep = profile([workload("iomix"), data, "3", "20", "4096", "2", str(forks)], out, opts)
    truth = json.loads(r.out.strip().splitlines()[-1])
    check_eq(rep["dropped_events"], 0, "dropped_events")
    check_eq(total_calls(rep), truth["calls"], "calls counted vs the calls iomix made")
    return rep, truth


def check_records(out, rep, nprocs):
    """Every record of the raw traces counted, each process's cost measured. Returns the raw traces' figures."""
    raw = raw_truth(out)
    c = rep["profwrap_cost"]
    check_eq(len(rep["processes"]), nprocs, "processes\n" + describe_processes(rep))
    check_eq(c["records"], raw["records"], "records vs the records of the raw traces")
    check_eq(raw["costs"], nprocs, "record-cost records in the raw traces (one per process)")
    check_eq(c["records_measured"], c["records"], "records of processes that measured their cost")
    check(c["record_ns"] > 0, "no cost measured for a record: %r", c)
    return raw


def test_iomix_stacks():
    # no fork children: a fork made while another thread is inside libunwind can leave the child waiting on
    # libunwind's lock (a limit of stacks, not of what they cost)
    rep, truth = run_iomix("OUT", 0, ["--stack-threshold=0"])
    c = check_cost("OUT", rep)
    raw = check_records("OUT", rep, 1)
    check_eq(rep["stacks"]["dropped"], 0, "stacks dropped")
    check_eq(c["stacks"], raw["stacked"], "stacks vs the records that carry one in the raw trace")
    check_eq(c["stacks"], truth["calls"], "stacks vs the wrapped calls iomix made (a stack each)")
    check(c["stacks_ns"] > 0, "stacks taken in no time: %r", c)
    check_eq(c["cupti_overhead_ns"], 0, "CUPTI overhead of a program without CUDA")


def test_iomix_no_stacks():
    rep, truth = run_iomix("OUT-nostacks", 2, ["--stacks=off"])
    c = check_cost("OUT-nostacks", rep)
    check_records("OUT-nostacks", rep, 3)
    check_eq((c["stacks"], c["stacks_ns"]), (0, 0), "stacks and their time with --stacks=off")


def test_cupti_overhead():
    fakes_dir()
    r, rep = profile([workload("cuda_train"), "--steps", "5"], "OUT-gpu")
    raw = raw_truth("OUT-gpu")
    c = check_cost("OUT-gpu", rep)
    check(raw["overhead_ns"] > 0, "the fake CUPTI wrote no overhead record: nothing to check")
    check_eq(c["cupti_overhead_ns"], raw["overhead_ns"], "CUPTI overhead vs its records' durations in the raw trace")
    check_eq(c["records"], raw["records"], "records vs the records of the raw trace (activity records too)")
    check_eq(raw["costs"], len(rep["processes"]), "record-cost records in the raw trace (one per process)")


def test():
    test_iomix_stacks()
    test_iomix_no_stacks()
    test_cupti_overhead()


main(test)
