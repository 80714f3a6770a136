"""What the GPU ran, from CUPTI's activity records (the fake libcupti over the fake device): the workload
cuda_gpu_patterns prints its own ground truth as `expect` lines, and the report's JSON must match it.

Exact where the fake's figures are exact: kernel names, counts, devices and the streams they ran on, kernels
tied to their launching call, copies' bytes and memory kinds, idle gap counts. Within a few per cent where
they are times: kernel durations (grid blocks x FAKEGPU_NS_PER_BLOCK), busy time, bandwidths. Within a range
where the host's timing is involved: idle50's busy share (0.45..0.55), launch latency and queue depth bounds.

Runs: multi (two threads, two streams, on two devices and on one), idle50, balanced, pageable and pinned
copies, collective (NCCL's kernels), and multi again with no libcupti reachable (PROFWRAP_CUPTI pointing
nowhere): the program's output and exit status are unchanged, the GPU call tables are there, the activity
status is "no_cupti", and stderr says so once; and multi with a driver that cannot serve CUPTI (the toolkit's
stub libcuda.so.1 first on LD_LIBRARY_PATH, a driver older than the runtime): the same, status
"driver_unusable", and CUPTI never touched.

The helpers (run_mode, check_report) are shared with test_gpu_findings.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PATTERNS = "cuda_gpu_patterns"
# Durations from the fake are exact; CUPTI's timestamps go through the profiler's clock handling.
REL_TOL = 0.03
ABS_TOL_NS = 100
FINDING_IDS = ("input_bound", "sync_bound", "launch_bound", "cpu_bound", "pageable_memcpy", "small_memcpy",
               "collective_bound")
# The fakes' settings are the workload's ground truth: runs see the defaults unless a test sets one.
FAKE_DEFAULTS = {"FAKEGPU_NS_PER_BLOCK": None, "FAKEGPU_COPY_BW": None, "FAKEGPU_PAGEABLE_BW": None,
                 "FAKEGPU_NCCL_BW": None, "FAKEGPU_DEVICES": None}


def near(actual, expected, what, rel=REL_TOL, abs_ns=ABS_TOL_NS):
    """Fails unless actual is within rel (fraction) or abs_ns of expected."""
    tol = max(abs(expected) * rel, abs_ns)
    check_range(actual, expected - tol, expected + tol, what)


def fake_cupti():
    """The fake libcupti; its absence is a failure (the activity tests are what it is for)."""
    path = os.path.join(fakes_dir(), "libcupti.so.13")
    if not os.path.exists(path):
        raise Fail("no fake libcupti.so.13 in %s: GPU activity cannot be recorded" % FAKES)
    return path


def clean_env(extra=None):
    env = dict(os.environ)
    for k in FAKE_DEFAULTS:
        env.pop(k, None)
    env.pop("PROFWRAP_CUPTI", None)
    env.update(extra or {})
    return env


def run_mode(mode, args=(), env=None, out=None, **kw):
    """Runs `profwrap -q -o OUT -- cuda_gpu_patterns MODE ARGS` with the fakes' default settings plus env, and
    returns (Result, report, expect lines, OUT). libcupti is found as profwrap finds it by default: the fake
    one next to the fake libcudart."""
    fakes_dir()
    fake_cupti()
    prog = workload(PATTERNS)
    out = out or "OUT-" + "-".join([mode] + [a.lstrip("-") for a in args])
    r, rep = profile([prog, mode] + list(args), out, env=clean_env(env), **kw)
    expect = parse_expect(r.out)
    check(expect and expect[-1] == ["mode", mode], "%s %s printed no `expect mode` line last\n%s", PATTERNS, mode,
          r.describe())
    return r, rep, expect, out


def expects(expect, what):
    """The expect lines of one kind, without their first word."""
    return [e[1:] for e in expect if e[0] == what]


def one(expect, what, default=None):
    rows = expects(expect, what)
    return rows[0] if rows else default


def by_device(rows):
    return {int(r[0]): r[1:] for r in rows}


def root_pid(rep):
    """The pid of the workload's first process (a forked loader is a child of it)."""
    procs = processes(rep, PATTERNS)
    pids = {p["pid"] for p in procs}
    roots = [p["pid"] for p in procs if p["ppid"] not in pids]
    check_eq(len(roots), 1, "processes of %s that no other started\n%s" % (PATTERNS, describe_processes(rep)))
    return roots[0]


def describe_kernels(rep):
    return "\n".join("  %s dev %s stream %s count %s total %s min %s max %s mean %s" % (
        k.get("name"), k.get("device"), k.get("stream"), k.get("count"), k.get("total_ns"), k.get("min_ns"),
        k.get("max_ns"), k.get("mean_ns")) for k in rep.get("kernels", []))


def is_nccl(name):
    return "nccl" in name.lower()


# ---- the checks every run of the workload gets ----

def check_activity_status(rep, ctx):
    act = rep.get("gpu_activity")
    check(isinstance(act, dict), "no gpu_activity object in rank0.json%s", ctx)
    check_eq(act.get("status"), "recording", "gpu_activity.status" + ctx)
    check_eq(act.get("dropped"), 0, "gpu_activity.dropped" + ctx)
    check_eq(rep["dropped_events"], 0, "dropped_events" + ctx)
    return act


def check_kernels(rep, expect, ctx):
    """kernels[]: one row per expected name, on its device and stream, with its count and durations; NCCL's
    work as collective kernels; nothing else. Returns {(device, label): ns} of the streams' kernel time."""
    kernels = rep.get("kernels")
    check(isinstance(kernels, list), "no kernels[] in rank0.json%s", ctx)
    ctx = ctx + "\nkernels:\n" + describe_kernels(rep)
    want = expects(expect, "kernel")
    coll = one(expect, "collective_kernels")
    names = {w[0] for w in want}
    for k in kernels:
        check(k["name"] in names or (coll and is_nccl(k["name"])), "a kernel the workload did not launch: %r%s",
              k["name"], ctx)
    stream_of = {}  # (device, label) -> the report's stream
    per_stream = {}
    for name, cnt, ns, dev, label in want:
        cnt, ns, dev = int(cnt), int(ns), int(dev)
        rows = [k for k in kernels if k["name"] == name]
        check_eq(len(rows), 1, "kernels[] rows named %s (one device, one stream)%s" % (name, ctx))
        k = rows[0]
        check_eq(k["device"], dev, "device of %s%s" % (name, ctx))
        check_eq(k["count"], cnt, "count of %s%s" % (name, ctx))
        for f in ("min_ns", "max_ns", "mean_ns"):
            near(k[f], ns, "%s of %s (%d ns: grid blocks x ns per block)%s" % (f, name, ns, ctx))
        near(k["total_ns"], cnt * ns, "total_ns of %s%s" % (name, ctx), abs_ns=ABS_TOL_NS * cnt)
        key = (dev, label)
        if key in stream_of:
            check_eq(k["stream"], stream_of[key], "stream of %s (the same stream as the other %r kernels)%s" % (
                name, label, ctx))
        stream_of[key] = k["stream"]
        per_stream[key] = per_stream.get(key, 0) + cnt * ns
    # Different streams of one device are told apart.
    for (dev, label), s in stream_of.items():
        for (dev2, label2), s2 in stream_of.items():
            if dev == dev2 and label != label2:
                check(s != s2, "streams %r and %r of device %d are both reported as stream %r%s", label, label2,
                      dev, s, ctx)
    if coll:
        cnt, ns = int(coll[0]), int(coll[1])
        rows = [k for k in kernels if is_nccl(k["name"])]
        check(rows, "no NCCL kernel in kernels[]%s", ctx)
        check_eq(sum(k["count"] for k in rows), cnt, "count of NCCL kernels" + ctx)
        for k in rows:
            check_eq(k["device"], 0, "device of %s%s" % (k["name"], ctx))
            for f in ("min_ns", "max_ns", "mean_ns"):
                near(k[f], ns, "%s of %s (bytes / FAKEGPU_NCCL_BW)%s" % (f, k["name"], ctx))
        # NCCL runs on the stream of the workload's other kernels ("s").
        if (0, "s") in stream_of:
            for k in rows:
                check_eq(k["stream"], stream_of[(0, "s")], "stream of %s%s" % (k["name"], ctx))
        per_stream[(0, "s")] = per_stream.get((0, "s"), 0) + cnt * ns
    elif not want:
        check_eq(kernels, [], "kernels[] of a run without kernels" + ctx)
    return per_stream


def check_linked(act, expect, ctx):
    n = int(one(expect, "kernels")[0])
    check_eq(act.get("kernels"), n, "gpu_activity.kernels" + ctx)
    check_eq(act.get("kernels_linked"), n, "gpu_activity.kernels_linked (kernels tied to the call that enqueued "
             "them)" + ctx)
    check_eq(act.get("kernels_unlinked"), 0, "gpu_activity.kernels_unlinked" + ctx)
    if n > 0:
        check(act.get("records", 0) >= n, "gpu_activity.records %r < %d kernels%s", act.get("records"), n, ctx)


def check_memcpy(rep, expect, ctx):
    """gpu_memcpy[]: the workload's one kind of copy, bytes and count exact, bandwidth the fake's. Returns
    the copies' GPU time, or 0."""
    rows = rep.get("gpu_memcpy")
    check(isinstance(rows, list), "no gpu_memcpy[] in rank0.json%s", ctx)
    ctx = ctx + "\ngpu_memcpy: %r" % rows
    m = one(expect, "memcpy")
    if m is None:
        check_eq(rows, [], "gpu_memcpy[] of a run without copies" + ctx)
        return 0
    dir_, src, dst, cnt, nbytes_, gbps = m[0], m[1], m[2], int(m[3]), int(m[4]), float(m[5])
    match = [c for c in rows if (c["dir"], c["src"], c["dst"]) == (dir_, src, dst)]
    check_eq(len(match), 1, "gpu_memcpy rows %s %s -> %s" % (dir_, src, dst) + ctx)
    c = match[0]
    check_eq((c["count"], c["bytes"]), (cnt, nbytes_), "gpu_memcpy %s %s->%s (count, bytes)" % (dir_, src, dst) + ctx)
    check_eq(len(rows), 1, "gpu_memcpy rows (the workload makes one kind of copy)" + ctx)
    check_eq(c["device"], 0, "gpu_memcpy device" + ctx)
    ns_each = max(1, int(nbytes_ // cnt * 1e9 / (gbps * 1e9)))
    near(c["total_ns"], cnt * ns_each, "gpu_memcpy total_ns (bytes / the fake's bandwidth)" + ctx, abs_ns=cnt * 2)
    if ns_each > 1000:  # bandwidths of copies shorter than a microsecond say nothing
        near(c["gbps"], gbps, "gpu_memcpy gbps" + ctx, rel=0.05)
    return cnt * ns_each


def check_gpus(rep, expect, per_stream, copy_ns, ctx):
    """gpus[]: one row per device that ran something; kernel time exact, busy time the union, idle the rest."""
    gpus = rep.get("gpus")
    check(isinstance(gpus, list), "no gpus[] in rank0.json%s", ctx)
    ctx = ctx + "\ngpus: %r" % gpus
    kern = {d: int(v[0]) for d, v in by_device(expects(expect, "kernel_ns")).items()}
    devices = {d for d, ns in kern.items() if ns > 0} | ({0} if copy_ns else set())
    check_eq(sorted(g["device"] for g in gpus), sorted(devices), "devices in gpus[]" + ctx)
    gaps = by_device(expects(expect, "idle_gaps"))
    share = by_device(expects(expect, "busy_share"))
    q_most = by_device(expects(expect, "queue_depth_max_at_most"))
    q_least = by_device(expects(expect, "queue_depth_max_at_least"))
    lat_p50 = by_device(expects(expect, "launch_latency_p50_at_most"))
    lat_max = by_device(expects(expect, "launch_latency_max_at_least"))
    for g in gpus:
        d = g["device"]
        what = "gpus[device %d]" % d
        check(isinstance(g.get("name"), str) and g["name"], "%s has no name%s", what, ctx)
        near(g["kernel_ns"], kern.get(d, 0), what + ".kernel_ns (the kernels' durations)" + ctx,
             abs_ns=ABS_TOL_NS * int(one(expect, "kernels")[0]) + ABS_TOL_NS)
        near(g["memcpy_ns"], copy_ns, what + ".memcpy_ns" + ctx, abs_ns=ABS_TOL_NS)
        check_eq(g["memset_ns"], 0, what + ".memset_ns (the workload sets no memory)" + ctx)
        work = g["kernel_ns"] + g["memcpy_ns"] + g["memset_ns"]
        # busy = the union of the work's intervals: no more than their sum, no less than one stream's.
        check(g["busy_ns"] <= work + ABS_TOL_NS, "%s.busy_ns %d > kernel + memcpy + memset %d%s", what,
              g["busy_ns"], work, ctx)
        streams = [ns for (dev, _), ns in per_stream.items() if dev == d]
        if streams:
            check(g["busy_ns"] >= max(streams) * (1 - REL_TOL), "%s.busy_ns %d < the busiest stream's %d%s", what,
                  g["busy_ns"], max(streams), ctx)
        if len(streams) <= 1:  # one stream: nothing overlaps
            near(g["busy_ns"], work, what + ".busy_ns (one stream: the work's sum)" + ctx,
                 abs_ns=ABS_TOL_NS * max(1, int(one(expect, "kernels")[0])))
        check(g["span_ns"] >= g["busy_ns"], "%s.span_ns %d < busy_ns %d%s", what, g["span_ns"], g["busy_ns"], ctx)
        near(g["idle_ns"], g["span_ns"] - g["busy_ns"], what + ".idle_ns (span - busy)" + ctx, rel=0.001,
             abs_ns=1000)
        check(0 <= g["longest_idle_ns"] <= g["idle_ns"], "%s.longest_idle_ns %d outside [0, idle_ns %d]%s", what,
              g["longest_idle_ns"], g["idle_ns"], ctx)
        check((g["idle_gaps"] == 0) == (g["longest_idle_ns"] == 0), "%s: %d idle gaps, the longest %d ns%s", what,
              g["idle_gaps"], g["longest_idle_ns"], ctx)
        if d in gaps:
            check_eq(g["idle_gaps"], int(gaps[d][0]), what + ".idle_gaps" + ctx)
        if d in share:
            want = float(share[d][0])
            check_range(g["busy_ns"] / g["span_ns"], want - 0.05, want + 0.05, what + " busy_ns / span_ns" + ctx)
        for f in ("launch_latency_mean_ns", "launch_latency_p50_ns", "launch_latency_max_ns", "queue_depth_mean",
                  "queue_depth_max"):
            check(g[f] >= 0, "%s.%s is %r%s", what, f, g[f], ctx)
        check(g["launch_latency_p50_ns"] <= g["launch_latency_max_ns"], "%s launch latency p50 > max%s", what, ctx)
        check(g["launch_latency_mean_ns"] <= g["launch_latency_max_ns"], "%s launch latency mean > max%s", what, ctx)
        check(g["queue_depth_mean"] <= g["queue_depth_max"], "%s queue depth mean > max%s", what, ctx)
        if d in q_most:
            check(g["queue_depth_max"] <= int(q_most[d][0]), "%s.queue_depth_max %r > %s%s", what,
                  g["queue_depth_max"], q_most[d][0], ctx)
        if d in q_least:
            check(g["queue_depth_max"] >= int(q_least[d][0]), "%s.queue_depth_max %r < %s%s", what,
                  g["queue_depth_max"], q_least[d][0], ctx)
        if d in lat_p50:
            check(g["launch_latency_p50_ns"] <= int(lat_p50[d][0]), "%s.launch_latency_p50_ns %r > %s%s", what,
                  g["launch_latency_p50_ns"], lat_p50[d][0], ctx)
        if d in lat_max:
            check(g["launch_latency_max_ns"] >= int(lat_max[d][0]), "%s.launch_latency_max_ns %r < %s%s", what,
                  g["launch_latency_max_ns"], lat_max[d][0], ctx)
    # Kernel launches, by the devices' count, when no library enqueued any of the kernels.
    if one(expect, "collective_kernels") is None:
        check_eq(sum(g["launches"] for g in gpus), int(one(expect, "launches")[0]), "launches over gpus[]" + ctx)
    return {g["device"]: g for g in gpus}


def gap_call_ns(gap, name):
    """ns the gap's thread spent in calls named name (with or without a domain prefix)."""
    return sum(c["ns"] for c in gap.get("cpu", []) if c["call"] == name or c["call"].endswith("." + name))


def check_gaps(rep, expect, gpus, ctx):
    """gpu_gaps[]: the longest gaps, on the host's clock, each at least the CPU work between launches; most
    of the class the workload is built for, with the thread that launched the next work and what it did."""
    gaps = rep.get("gpu_gaps")
    check(isinstance(gaps, list), "no gpu_gaps[] in rank0.json%s", ctx)
    ctx = ctx + "\ngpu_gaps: %r" % gaps[:12]
    for d, g in gpus.items():
        mine = [x for x in gaps if x["device"] == d]
        if g["idle_gaps"] == 0:
            check_eq(mine, [], "gpu_gaps of device %d, which had no idle gap" % d + ctx)
            continue
        check(mine, "no gpu_gaps entry for device %d (%d idle gaps)%s", d, g["idle_gaps"], ctx)
        check(len(mine) <= g["idle_gaps"], "%d gpu_gaps entries for %d idle gaps%s", len(mine), g["idle_gaps"], ctx)
        check_eq(max(x["duration_ns"] for x in mine), g["longest_idle_ns"],
                 "the longest gap of device %d vs longest_idle_ns" % d + ctx)
    for x in gaps:
        check(x["duration_ns"] > 0, "a gap of %r ns%s", x["duration_ns"], ctx)
        check(rep["start_ns"] <= x["start_ns"] and x["start_ns"] + x["duration_ns"] <= rep["end_ns"],
              "gap at %d + %d ns outside the run [%d, %d] (GPU times on another clock?)%s", x["start_ns"],
              x["duration_ns"], rep["start_ns"], rep["end_ns"], ctx)
        check(x["class"] in ("sync", "input", "sleep", "launch", "cpu"), "gap class %r%s", x["class"], ctx)
    for d, ns in by_device(expects(expect, "gap_min_ns")).items():
        check(gpus[d]["idle_ns"] >= gpus[d]["idle_gaps"] * int(ns[0]), "device %d idle for %d ns in %d gaps, each "
              "at least %s ns by design%s", d, gpus[d]["idle_ns"], gpus[d]["idle_gaps"], ns[0], ctx)
        for x in gaps:
            if x["device"] == d:
                check(x["duration_ns"] >= int(ns[0]), "a gap of %d ns on device %d, shorter than the CPU work "
                      "between launches (%s ns)%s", x["duration_ns"], d, ns[0], ctx)
    cls = one(expect, "gap_class")
    if cls is None:
        return
    cls = cls[0]
    # All of the idle time, not only the longest gaps, is of the class the workload is built for.
    for d, g in gpus.items():
        cause = g.get("idle_by_cause")
        check(isinstance(cause, dict), "no idle_by_cause in gpus[device %d]%s", d, ctx)
        near(sum(cause.values()), g["idle_ns"], "device %d idle_by_cause summed vs idle_ns" % d + ctx, rel=0.001,
             abs_ns=1000)
        check(cause.get(cls, 0) >= 0.8 * g["idle_ns"], "device %d idle %d ns, only %r of it %r%s", d, g["idle_ns"],
              cause.get(cls), cls, ctx)
    ours = [x for x in gaps if x["class"] == cls]
    check(len(ours) >= 0.8 * len(gaps), "only %d of %d gaps are %r%s", len(ours), len(gaps), cls, ctx)
    pid = root_pid(rep)
    for x in ours:
        check_eq(x["thread"], pid, "thread of a %r gap (the main thread launches)" % cls + ctx)
    call = one(expect, "gap_call")
    if call is None:
        return
    for x in ours:
        ns = gap_call_ns(x, call[0])
        if cls == "sync":
            check(ns > 0, "a sync gap without %s in its cpu[]: %r%s", call[0], x, ctx)
        else:
            check(ns >= 0.5 * x["duration_ns"], "an %r gap of %d ns with %d ns in %s (the rule needs >= 50 %%)%s",
                  cls, x["duration_ns"], ns, call[0], ctx)


def check_findings(rep, expect, out, ctx):
    """findings[]: those the workload is built to trigger, with at least their designed share; none of those it
    is built not to; the text report's "What to fix first" names them."""
    findings = rep.get("findings")
    check(isinstance(findings, list), "no findings[] in rank0.json%s", ctx)
    ctx = ctx + "\nfindings: %r" % findings
    ids = [f["id"] for f in findings]
    check_eq(len(ids), len(set(ids)), "findings listed twice" + ctx)
    for f in findings:
        check(f["id"] in FINDING_IDS, "unknown finding id %r%s", f["id"], ctx)
        check(0 < f["share"] <= 1, "finding %s share %r outside (0, 1]%s", f["id"], f["share"], ctx)
        check(isinstance(f.get("evidence"), str) and f["evidence"].strip(), "finding %s without evidence%s", f["id"],
              ctx)
        check(isinstance(f.get("advice"), str) and f["advice"].strip(), "finding %s without advice%s", f["id"], ctx)
    by_id = {f["id"]: f for f in findings}
    for fid, least in expects(expect, "finding"):
        check(fid in by_id, "no %s finding%s", fid, ctx)
        check(by_id[fid]["share"] >= float(least), "finding %s share %r < %s by design%s", fid, by_id[fid]["share"],
              least, ctx)
    for (fid,) in expects(expect, "no_finding"):
        check(fid not in by_id, "a %s finding on a workload built not to have one%s", fid, ctx)
    if expects(expect, "no_findings"):
        check_eq(findings, [], "findings of a workload built to have none" + ctx)
    if findings:
        text = open(os.path.join(out, "rank0.txt")).read()
        at = text.find("What to fix first")
        check(at >= 0, "rank0.txt has findings but no \"What to fix first\" section%s", ctx)
        section = text[at:].lower()
        for fid in ids:
            check(any(v in section for v in (fid, fid.replace("_", " "), fid.replace("_", "-"))),
                  "\"What to fix first\" does not name %s:\n%s", fid, text[at:at + 2000])
    return by_id


def check_report(r, rep, expect, out, ctx=""):
    """Every check the workload's expect lines allow."""
    ctx = ctx or "\n(%s)" % " ".join(r.args)
    act = check_activity_status(rep, ctx)
    per_stream = check_kernels(rep, expect, ctx)
    check_linked(act, expect, ctx)
    copy_ns = check_memcpy(rep, expect, ctx)
    gpus = check_gpus(rep, expect, per_stream, copy_ns, ctx)
    check_gaps(rep, expect, gpus, ctx)
    findings = check_findings(rep, expect, out, ctx)
    # The call tables agree with the activity: each launch call made one kernel.
    check_eq(count(rep, "cudart", "cudaLaunchKernel"), int(one(expect, "launches")[0]),
             "cudart.cudaLaunchKernel count" + ctx)
    return gpus, findings


# ---- the runs ----

def test_multi():
    for ndev in (2, 1):
        r, rep, expect, out = run_mode("multi", env={"FAKEGPU_DEVICES": str(ndev)}, out="OUT-multi-%d" % ndev)
        ctx = "\n(multi on %d devices)" % ndev
        gpus, _ = check_report(r, rep, expect, out, ctx)
        check_eq(sorted(gpus), list(range(ndev)), "devices with work" + ctx)
        check_eq(len(rep["kernels"]), 5, "kernels[] rows" + ctx)


def test_idle50():
    r, rep, expect, out = run_mode("idle50")
    gpus, findings = check_report(r, rep, expect, out)
    g = gpus[0]
    # Half of the span idle, every gap a synchronisation's: the sync_bound share is about the idle time.
    check(findings["sync_bound"]["share"] * rep["wall_ns"] <= g["idle_ns"] * 1.01 + 1000,
          "sync_bound share %r of wall %d is more than the idle time %d", findings["sync_bound"]["share"],
          rep["wall_ns"], g["idle_ns"])


def test_balanced():
    r, rep, expect, out = run_mode("balanced")
    gpus, _ = check_report(r, rep, expect, out)
    check_eq(gpus[0]["idle_ns"], 0, "idle_ns of a queue that never ran dry")


def test_copies():
    for mode in ("pageable", "pinned"):
        r, rep, expect, out = run_mode(mode)
        check_report(r, rep, expect, out)
    # copies between two devices arrive as CUPTI's MEMCPY2 records, not MEMCPY
    r, rep, expect, out = run_mode("peer", env={"FAKEGPU_DEVICES": "2"})
    check_report(r, rep, expect, out)


def test_collective():
    r, rep, expect, out = run_mode("collective")
    check_report(r, rep, expect, out)


def test_no_cupti():
    """No libcupti: the program runs as without profwrap, the calls are recorded, the activity is not."""
    fakes_dir()
    prog = workload(PATTERNS)
    env = clean_env({"FAKEGPU_DEVICES": "2"})
    cmd = [prog, "multi", "--exit", "3"]
    plain = run(cmd, env=env)
    check_eq(plain.rc, 3, "exit status of %s without profwrap\n%s" % (" ".join(cmd), plain.describe()))
    env["PROFWRAP_CUPTI"] = "/nonexistent/libcupti.so"
    r, rep = profile(cmd, "OUT-without", quiet=False, expect_rc=3, env=env)
    ctx = "\n(no libcupti)\n" + r.describe()
    check_eq(r.out_bytes, plain.out_bytes, "the program's output under profwrap without libcupti vs without profwrap")
    said = [line for line in r.err.splitlines() if "cupti" in line.lower()]
    check_eq(len(said), 1, "lines about CUPTI on stderr" + ctx)
    act = rep.get("gpu_activity")
    check(isinstance(act, dict), "no gpu_activity object in rank0.json%s", ctx)
    check_eq(act.get("status"), "no_cupti", "gpu_activity.status" + ctx)
    check(not act.get("records"), "gpu_activity.records %r without CUPTI%s", act.get("records"), ctx)
    check(not rep.get("kernels"), "kernels[] without CUPTI: %r%s", rep.get("kernels"), ctx)
    check(not rep.get("gpu_gaps"), "gpu_gaps[] without CUPTI: %r%s", rep.get("gpu_gaps"), ctx)
    # The GPU call tables are all there.
    expect = parse_expect(r.out)
    check_eq(count(rep, "cudart", "cudaLaunchKernel"), int(one(expect, "launches")[0]),
             "cudart.cudaLaunchKernel count" + ctx)
    launched = {k["name"]: k["launches"] for k in rep["kernels_launched"]}
    check_eq(launched, {e[0]: int(e[1]) for e in expects(expect, "kernel")}, "kernels_launched" + ctx)
    check_eq(count(rep, "cudart", "cudaStreamCreateWithFlags"), 2, "cudart.cudaStreamCreateWithFlags count" + ctx)
    check_eq(sorted(d["id"] for d in rep["devices"]), [0, 1], "devices" + ctx)


def test_unusable_driver():
    """A driver that cannot serve CUPTI: the toolkit's stub libcuda.so.1 first on LD_LIBRARY_PATH (build
    containers do this), or a driver older than the runtime. CUPTI is never called (its first call crashes over
    either), the program runs as without profwrap, stderr says why once, and the report too."""
    fakes_dir()
    prog = workload(PATTERNS)
    stub = os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so")
    cases = [("old", {"FAKECUDA_DRIVER_VERSION": "12080"}, 0, "older than the CUDA 13 runtime")]
    if os.path.exists(stub):
        os.makedirs("stub", exist_ok=True)
        os.symlink(stub, os.path.join("stub", "libcuda.so.1"))
        cases.append(("stub", {"LD_LIBRARY_PATH": os.path.abspath("stub")}, 34, "stub library"))
    else:
        note("no toolkit stub driver at %s: only the older driver is tried" % stub)
    for name, extra, code, why in cases:
        env = clean_env({"FAKEGPU_DEVICES": "2"})
        env.update(extra)
        cmd = [prog, "multi", "--exit", "3"]
        plain = run(cmd, env=env)
        check_eq(plain.rc, 3, "exit status of %s without profwrap\n%s" % (" ".join(cmd), plain.describe()))
        r, rep = profile(cmd, "OUT-" + name, quiet=False, expect_rc=3, env=env)
        ctx = "\n(%s driver)\n%s" % (name, r.describe())
        check_eq(r.out_bytes, plain.out_bytes, "the program's output under profwrap with the %s driver" % name)
        said = [line for line in r.err.splitlines() if "driver" in line]
        check(len(said) == 1 and why in said[0], "stderr about the driver: %r%s", said, ctx)
        act = rep["gpu_activity"]
        check_eq(act["status"], "driver_unusable", "gpu_activity.status" + ctx)
        check_eq(act["error_code"], code, "gpu_activity.error_code (cuDriverGetVersion's)" + ctx)
        check(why in (act["not_recorded_why"] or ""), "not_recorded_why %r%s", act["not_recorded_why"], ctx)
        check(act["cupti_path"] is None and not act["records"], "CUPTI was touched: %r%s", act, ctx)
        if name == "old":
            check_eq(act["driver_version"], 12080, "gpu_activity.driver_version" + ctx)
        launched = sum(k["launches"] for k in rep["kernels_launched"])
        check_eq(launched, int(one(parse_expect(r.out), "launches")[0]), "launches recorded" + ctx)
        with open(os.path.join("OUT-" + name, "rank0.txt")) as f:
            check(why in f.read(), "rank0.txt does not say why GPU activity is off (%s)", why)


def test():
    test_multi()
    test_idle50()
    test_balanced()
    test_copies()
    test_collective()
    test_no_cupti()


if __name__ == "__main__":
    main(test)
