"""NVTX ranges, marks and names (profwrap as NVTX's injection library): the workload cuda_nvtx (mode ranges)
writes what it annotated to its own JSON file, and rank0.json, rank0.txt and rank0.trace.json must match.

Exact: the range rows (domain, name, depth, kind, count; "step <i>" x 20 folded into "step #" with folded
20), marks, the nvtx counters (ranges closed, unclosed, unmatched pops and ends, folded names), what NVTX
returned to the program (push: the 0-based level; pop: the level popped; an unmatched pop: negative; a start:
an id other than 0). Within a few per cent: the GPU time of the kernels launched inside each range (the fake
GPU's kernel durations). Within ranges: durations (at least the sleeps inside each occurrence, at most 50 ms
more), means consistent with totals. The text report has a "Phases" table with Lightning's column headers and
nested rows indented; the trace has the ranges as slices on their threads (cat "nvtx"), the cross-thread
"epoch" as an async slice, the marks as instants, the domain range's payload in its args.

Also: the workload run without profwrap behaves as NVTX without a tool says (push/pop return -2, start
returns 0), and profwrap leaves an NVTX_INJECTION64_PATH the user set alone."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROG = "cuda_nvtx"
STEPS = 20          # > 16 distinct "step <i>" names: folded into "step #"
FOLD_LIMIT = 16     # a digit-folded group with more distinct names than this is folded
NO_TOOL = -2        # NVTX_NO_PUSH_POP_TRACKING: what push/pop return with no tool attached
GPU_REL_TOL = 0.03
GPU_ABS_NS = 100
SLACK_NS = 50 * 1000 * 1000  # a range lasts at most its sleeps plus this (a busy machine)
ROW_KEYS = ("domain", "name", "depth", "kind", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "gpu_ns",
            "folded", "parent")
# Settings of the run that a test must not inherit from the shell.
UNSET = ("NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH", "PROFWRAP_CAPTURE_RANGE", "PROFWRAP_CAPTURE_COUNT",
         "PROFWRAP_DELAY", "PROFWRAP_DURATION", "PROFWRAP_SCHEDULE", "PROFWRAP_STEP_RANGE", "PROFWRAP_CUPTI",
         "FAKEGPU_NS_PER_BLOCK", "FAKEGPU_COPY_BW", "FAKEGPU_PAGEABLE_BW", "FAKEGPU_NCCL_BW", "FAKEGPU_DEVICES",
         "NVTX_DATA", "NVTX_STEP_DOMAIN")


def clean_env(extra=None):
    env = dict(os.environ)
    for k in UNSET:
        env.pop(k, None)
    env.update(extra or {})
    return env


def fold(name):
    return re.sub(r"[0-9]+", "#", name)


def expected_rows(truth):
    """The workload's exact-name rows, folded as the spec folds them: {(domain, name, depth, kind): row}, and
    the number of distinct names folded."""
    groups = {}
    for r in truth["ranges"]:
        groups.setdefault((r["domain"], fold(r["name"])), set()).add(r["name"])
    rows = {}
    for r in truth["ranges"]:
        g = (r["domain"], fold(r["name"]))
        folded = len(groups[g]) > FOLD_LIMIT
        key = (r["domain"], g[1] if folded else r["name"], r["depth"], r["kind"])
        e = rows.setdefault(key, {"count": 0, "folded": 0, "min_ns": r["min_ns"], "gpu_ns": 0})
        e["count"] += r["count"]
        e["folded"] += r["count"] if folded else 0
        e["min_ns"] = min(e["min_ns"], r["min_ns"])
        e["gpu_ns"] += r["gpu_ns"]
    folded_names = sum(len(names) for names in groups.values() if len(names) > FOLD_LIMIT)
    return rows, folded_names


def describe_ranges(rep):
    return "\n".join("  %r %r depth %s %s count %s total %s mean %s min %s max %s gpu %s folded %s" % (
        r.get("domain"), r.get("name"), r.get("depth"), r.get("kind"), r.get("count"), r.get("total_ns"),
        r.get("mean_ns"), r.get("min_ns"), r.get("max_ns"), r.get("gpu_ns"), r.get("folded"))
        for r in rep.get("ranges") or [])


def run_ranges(out, env=None, steps=STEPS):
    fakes_dir()
    prog = workload(PROG)
    truth_path = os.path.abspath("truth-%s.json" % out)
    r, rep = profile([prog, "ranges", truth_path, str(steps)], out, env=clean_env(env))
    truth = load_json(truth_path)
    return r, rep, truth


def check_returns(truth, profiled):
    """What NVTX returned to the program: with profwrap attached, the levels the spec says; without a tool,
    NVTX's own no-op values."""
    for key in ("push", "pop", "load_push", "load_pop", "domain_push", "domain_pop"):
        for expected, got, n in truth[key]:
            want = expected if profiled else NO_TOOL
            check(got == want, "%s: NVTX returned %d to %d call(s) that expected %d (%s)", key, got, n, want,
                  "profwrap attached: the 0-based level pushed or popped" if profiled else
                  "no tool attached: NVTX_NO_PUSH_POP_TRACKING")
    if profiled:
        check(truth["unmatched_pop_ret"] < 0, "nvtxRangePop with nothing open returned %r, not a negative value",
              truth["unmatched_pop_ret"])
        check(truth["epoch_id"] != 0, "nvtxRangeStartA returned 0 with profwrap attached (no range id)")
    else:
        check_eq(truth["unmatched_pop_ret"], NO_TOOL, "unmatched nvtxRangePop without a tool")
        check_eq(truth["epoch_id"], 0, "nvtxRangeStartA's id without a tool")


def check_ranges(rep, truth):
    ctx = "\nranges:\n" + describe_ranges(rep)
    ranges = rep.get("ranges")
    check(isinstance(ranges, list), "rank0.json has no \"ranges\" list (keys: %r)", sorted(rep))
    want, folded_names = expected_rows(truth)
    got = {}
    for r in ranges:
        for k in ROW_KEYS:
            check(k in r, "a ranges[] row without %r: %r", k, r)
        key = (r["domain"], r["name"], r["depth"], r["kind"])
        check(key not in got, "two ranges[] rows for %r%s", key, ctx)
        got[key] = r
    check_eq(sorted(got), sorted(want), "ranges[] rows (domain, name, depth, kind)" + ctx)
    # A tree in order: each row after its parent (one level up), siblings by total time, largest first.
    for i, r in enumerate(ranges):
        p = r["parent"]
        if p is None:
            check_eq(r["depth"], 0, "depth of the top row %r" % r["name"] + ctx)
        else:
            check(0 <= p < i and ranges[p]["depth"] == r["depth"] - 1, "row %d (%r): parent %r is not an earlier row "
                  "one level up%s", i, r["name"], p, ctx)
    for p in set(r["parent"] for r in ranges):
        totals = [r["total_ns"] for r in ranges if r["parent"] == p]
        check_eq(totals, sorted(totals, reverse=True), "total_ns order of the rows under %r" % p + ctx)
    def parent_name(name):
        p = next(r["parent"] for r in ranges if r["name"] == name)
        return ranges[p]["name"] if p is not None else None
    for child, parent in (("forward", "step #"), ("backward", "step #"), ("grad", "backward"), ("step #", None)):
        check_eq(parent_name(child), parent, "the parent of %r" % child + ctx)
    for key, w in want.items():
        r = got[key]
        what = "range %r" % (key,)
        check_eq(r["count"], w["count"], "count of " + what + ctx)
        check_eq(r["folded"], w["folded"], "folded of " + what + ctx)
        check(abs(r["mean_ns"] - r["total_ns"] / r["count"]) <= 1, "%s: mean_ns %r is not total_ns / count (%r / %r)",
              what, r["mean_ns"], r["total_ns"], r["count"])
        check(r["min_ns"] <= r["mean_ns"] <= r["max_ns"], "%s: min %r <= mean %r <= max %r does not hold", what,
              r["min_ns"], r["mean_ns"], r["max_ns"])
        check_range(r["min_ns"], w["min_ns"], w["min_ns"] + SLACK_NS,
                    "%s min_ns (its sleeps: %d ns)" % (what, w["min_ns"]))
        if key[3] == "push":
            check_range(r["max_ns"], w["min_ns"], w["min_ns"] + SLACK_NS, what + " max_ns")
        if key[1] == "epoch":
            continue  # started on one thread and ended on another: which thread's launches count is open
        tol = max(w["gpu_ns"] * GPU_REL_TOL, GPU_ABS_NS * max(w["count"], 1))
        check_range(r["gpu_ns"], w["gpu_ns"] - tol, w["gpu_ns"] + tol,
                    "%s gpu_ns (kernels launched inside it, by the fake GPU's durations)" % what)
    step = got[("", "step #", 0, "push")]
    fwd = got[("", "forward", 1, "push")]
    check_range(fwd["mean_ns"], 2 * 1000 * 1000, 50 * 1000 * 1000, "forward mean_ns (a 2 ms sleep)")
    epoch = got[("", "epoch", 0, "start")]
    check(epoch["total_ns"] >= step["total_ns"], "the epoch (%d ns) is shorter than the steps it holds (%d ns)",
          epoch["total_ns"], step["total_ns"])
    inner = sum(got[("", n, 1, "push")]["total_ns"] for n in ("forward", "backward"))
    check(step["total_ns"] >= inner, "steps (%d ns) are shorter than the forward and backward ranges inside them "
          "(%d ns)", step["total_ns"], inner)
    check(got[("", "backward", 1, "push")]["total_ns"] >= got[("", "grad", 2, "push")]["total_ns"],
          "backward is shorter than the grad ranges inside it%s", ctx)

    marks = rep.get("marks")
    check(isinstance(marks, list), "rank0.json has no \"marks\" list")
    check_eq(sorted((m.get("domain"), m.get("name"), m.get("count")) for m in marks),
             sorted((m["domain"], m["name"], m["count"]) for m in truth["marks"]), "marks (domain, name, count)")

    nvtx = rep.get("nvtx")
    check(isinstance(nvtx, dict), "rank0.json has no \"nvtx\" object")
    check_eq({k: nvtx.get(k) for k in ("ranges", "unclosed", "unmatched_pops", "unmatched_ends", "folded_names")},
             {"ranges": truth["closed"], "unclosed": 0, "unmatched_pops": 1, "unmatched_ends": 0,
              "folded_names": folded_names}, "nvtx counters")

    cap = rep.get("capture")
    check(isinstance(cap, dict), "rank0.json has no \"capture\" object")
    check_eq(cap.get("mode"), "full", "capture.mode without capture options")
    check_eq(cap.get("settings"), "", "capture.settings without capture options")
    check_eq(cap.get("captured_ns"), rep["wall_ns"], "capture.captured_ns in mode full (the rank's wall time)")
    return got


def cells(line):
    return line.split("|")[1:-1]


def check_text(out, rep, got, truth):
    with open(os.path.join(out, "rank0.txt"), "rb") as f:
        text = f.read().decode("utf-8")
    header = text[:text.find("\n\n", text.find("Dropped:"))]
    check("Capture:" not in header, "rank0.txt's header has a Capture line in a run without capture control")
    at = text.find("Phases")
    check(at >= 0, "rank0.txt has no \"Phases\" section")
    lines = text[at:].split("\n")
    table = []
    for line in lines[1:]:
        if not line.strip():
            break
        if line.startswith("|"):
            table.append(line)
    check(len(table) >= 2, "the Phases section has no table: %r", "\n".join(lines[:10]))
    head = [c.strip() for c in cells(table[0])]
    ctx = "\n" + "\n".join(lines[:len(table) + 6])
    for i, want in enumerate(("Action", "Mean duration", "Num calls", "Total time", "Percentage", "GPU time")):
        check(i < len(head) and head[i].startswith(want), "Phases column %d: expected %r, got %r%s", i + 1, want,
              head[i] if i < len(head) else None, ctx)
    check_eq(cells(table[1])[0].strip(), "Total", "the Phases table's first row" + ctx)
    rows = {}
    for line in table[2:]:
        c = cells(line)
        name = c[0].rstrip()
        rows[name.strip()] = (len(name) - len(name.lstrip(" ")) - 1, c)
    ncol = head.index(next(h for h in head if h.startswith("Num calls")))
    for name, depth, count in (("step #", 0, STEPS), ("forward", 1, STEPS), ("backward", 1, STEPS),
                               ("grad", 2, STEPS), ("epoch", 0, 1), ("mydomain:registered op", 0, 3),
                               # the text report shows bytes past ASCII as '?' (the JSON keeps the UTF-8)
                               ("wide ??n??code", 0, 1), ("load", 0, 10), ("ex range", 0, 1)):
        check(name in rows, "the Phases table has no row %r%s", name, ctx)
        check_eq(rows[name][0] - rows["step #"][0], 2 * depth, "indentation of %r in Phases (2 per depth)%s" % (
            name, ctx))
        check_eq(rows[name][1][ncol].strip().replace(",", ""), str(count), "Num calls of %r in Phases" % name)


def check_trace(out, rep, truth):
    t = load_json(os.path.join(out, "rank0.trace.json"))
    ev = [e for e in t["traceEvents"] if e.get("cat") == "user_annotation"]  # Kineto's category for them
    check(ev, "no events of cat \"user_annotation\" (NVTX ranges) in rank0.trace.json")
    pid = truth["pid"]
    slices = [e for e in ev if e.get("ph") == "X"]

    def named(pred):
        return [e for e in slices if pred(e["name"])]

    steps = named(lambda n: re.fullmatch(r"step (\d+|#)", n) is not None)
    for name, n in (("forward", STEPS), ("backward", STEPS), ("grad", STEPS)):
        s = named(lambda x, name=name: x == name)
        check_eq(len(s), n, "X slices named %r (cat nvtx) in the trace" % name)
        check(all(e["pid"] == pid and e["tid"] == pid for e in s), "%r slices not on the main thread's track", name)
    check_eq(len(steps), STEPS, "X slices named \"step <i>\" or \"step #\" in the trace")
    for f in named(lambda x: x == "forward"):
        check(f["dur"] >= 2000, "a forward slice shorter than its 2 ms sleep: %r", f)
        check(any(s["tid"] == f["tid"] and s["ts"] <= f["ts"] and f["ts"] + f["dur"] <= s["ts"] + s["dur"]
                  for s in steps), "a forward slice inside no step slice: %r", f)
    loads = named(lambda x: x == "load")
    check_eq(len(loads), 10, "X slices named \"load\"")
    check(all(e["tid"] != pid for e in loads), "load slices on the main thread's track (they are the loader's)")
    dom = named(lambda x: x.endswith("registered op"))
    check_eq(len(dom), 3, "slices of mydomain's registered string")
    args = json.dumps(dom[0].get("args"))
    check("42" in args, "the domain range's int64 payload 42 is not in its trace args: %s", args)
    check("io category" in args or "7" in args, "the domain range's category (7, \"io category\") is not in its "
          "trace args: %s", args)
    epoch = [e for e in ev if e["name"] == "epoch"]
    check(epoch and all(e.get("ph") in ("b", "e", "S", "F", "n") for e in epoch),
          "the start/end range \"epoch\" is not an async slice: %r", epoch)
    marks = [e for e in ev if e.get("name") == "checkpoint" and e.get("ph") in ("i", "I")]
    check_eq(len(marks), [m for m in truth["marks"] if m["name"] == "checkpoint"][0]["count"],
             "instants named \"checkpoint\" (marks)")
    names = [e.get("args", {}).get("name") for e in t["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") == pid]
    if not any("loader" in (n or "") for n in names):
        note("note: no thread of the trace is named \"loader\" (nvtxNameOsThreadA); thread names: %r" % names)


def test_profiled():
    r, rep, truth = run_ranges("OUT")
    check_eq(r.out, "cuda_nvtx ranges: %d steps\n" % STEPS, "the workload's stdout under profwrap")
    check_returns(truth, True)
    act = rep.get("gpu_activity") or {}
    check_eq(act.get("status"), "recording", "gpu_activity.status (the fake libcupti)")
    check_eq(rep["dropped_events"], 0, "dropped_events")
    check_eq(count(rep, "cudart", "cudaLaunchKernel"), 2 * STEPS, "cudart.cudaLaunchKernel count")
    got = check_ranges(rep, truth)
    check_text("OUT", rep, got, truth)
    check_trace("OUT", rep, truth)


def test_unprofiled():
    # The same program without profwrap: NVTX finds no tool and returns its no-op values.
    fakes_dir()
    prog = workload(PROG)
    env = clean_env()
    env.pop("LD_PRELOAD", None)
    truth_path = os.path.abspath("truth-plain.json")
    r = run([prog, "ranges", truth_path, str(STEPS)], env=env)
    check_eq(r.rc, 0, "exit status of cuda_nvtx ranges without profwrap\n" + r.describe())
    check_eq(r.out, "cuda_nvtx ranges: %d steps\n" % STEPS, "stdout without profwrap")
    check_returns(load_json(truth_path), False)


def test_user_injection():
    # An NVTX_INJECTION64_PATH the user set is theirs: profwrap does not replace it. This one cannot be
    # loaded, so NVTX runs with no tool, the program is unharmed and no range is recorded.
    r, rep, truth = run_ranges("OUT-user", env={"NVTX_INJECTION64_PATH": os.path.abspath("no-such-tool.so")},
                               steps=3)
    check_returns(truth, False)
    check(not rep.get("ranges"), "ranges[] when the user's NVTX_INJECTION64_PATH names another tool: %r",
          rep.get("ranges"))
    check(not rep.get("marks"), "marks[] when the user's NVTX_INJECTION64_PATH names another tool: %r",
          rep.get("marks"))
    check_eq(count(rep, "cudart", "cudaLaunchKernel"), 6, "cudart.cudaLaunchKernel count (still recorded)")


def test():
    import time
    import traceback
    failures = []
    for t in (test_profiled, test_unprofiled, test_user_injection):
        t0 = time.monotonic()
        try:
            t()
            note("ok %s (%.1f s)" % (t.__name__, time.monotonic() - t0))
        except Fail as e:
            note("FAIL %s: %s" % (t.__name__, e))
            failures.append(t.__name__)
        except Exception:
            note("FAIL %s: unexpected exception\n%s" % (t.__name__, traceback.format_exc()))
            failures.append(t.__name__)
    if failures:
        raise Fail("%d of 3 failed: %s" % (len(failures), ", ".join(failures)))


main(test)
