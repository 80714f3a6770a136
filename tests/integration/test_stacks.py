"""Call stacks (--stacks, --stack-threshold, --sample): the workloads cuda_stacks (C, linked against the fake
CUDA libraries) and py_stacks.py make their calls from known functions at lines marked in their source
("@name" comments, read from the source here, never hard-coded), and print what they made as one line of JSON.

Exact: which calls have stacks and how many (a usleep(3000) always lasts past the 100 us threshold; a
cudaStreamSynchronize, cudaDeviceSynchronize, cudaMalloc, cudaFree or synchronous cudaMemcpy gets a stack
whatever its duration; usleep(0), cudaMemcpyAsync and cudaLaunchKernel get one only when they last the
threshold, and the workload counts those that may have by its own clock, which brackets the profiler's); the
innermost frame of the program's own code (function, file, line of the marker) and its caller; the call
counts in the text report's "Top call sites"; what a stripped copy of the program shows (no function, no
file, line 0, its own path as the module, `cuda_stacks+0x<offset>` with the offset inside the function the
unstripped program's symbol table gives, the same counts); 64 native frames of a 100-deep recursion, all 40
frames of a 40-deep one; Python frames (function, file, line, module "python") of a call made with the GIL
released (deferred) and with it held, on the thread that made it; the sampling period; folded sample lines
weighing the CPU time their samples stand for (samples.stacks[].cpu_ns, to the microsecond per line); the
stacks counters; bad option values refused before the target starts.
Within ranges (time): the folded wait lines' microseconds and the callsites' total_ns against the sleeps;
the share of CPU samples spin_here gets (> 60 %, more than twice spin_other's for 5 times its CPU)."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROG = "cuda_stacks"
C_SRC = os.path.join(REPO, "tests", "workloads", "cuda_stacks.c")
PY_SRC = os.path.join(REPO, "tests", "workloads", "py_stacks.py")
N1, N2, N3, N4, N5 = 10, 6, 200, 7, 5
THRESHOLD_US = 100              # the default --stack-threshold
SLOW_US = 3000                  # each marked usleep / time.sleep
SLACK_US = 50 * 1000            # a sleep lasts at most this much more than asked (a busy machine)
MAX_NATIVE = 64                 # PW_STACK_MAX_NATIVE
SAMPLE_HZ = 200
SPIN_HERE_MS, SPIN_OTHER_MS = 500, 100
# What time.sleep calls (CPython 3.11+: clock_nanosleep; older: select).
PY_SLEEP_CALLS = ("clock_nanosleep", "nanosleep", "select")
# Settings of the run that a test must not inherit from the shell.
UNSET = ("PROFWRAP_STACKS", "PROFWRAP_STACK_THRESHOLD", "PROFWRAP_SAMPLE", "PROFWRAP_CAPTURE_RANGE",
         "PROFWRAP_CAPTURE_COUNT", "PROFWRAP_DELAY", "PROFWRAP_DURATION", "PROFWRAP_SCHEDULE",
         "PROFWRAP_STEP_RANGE", "FAKEGPU_NS_PER_BLOCK", "FAKEGPU_COPY_BW", "FAKEGPU_PAGEABLE_BW",
         "FAKEGPU_DEVICES", "PYTHONPROFILEIMPORTTIME")

# The calls of cuda_stacks' mode calls, by marker: (call, the function that makes it, by kind). "by kind":
# the call gets a stack whatever its duration; else only when it lasts the threshold.
C_MARKS = {
    "sleep_a": ("usleep", "sleep_a", False),
    "sleep_b": ("usleep", "sleep_b", False),
    "fast": ("usleep", "fast", False),
    "sync_stream": ("cudaStreamSynchronize", "sync_here", True),
    "sync_device": ("cudaDeviceSynchronize", "sync_here", True),
    "malloc": ("cudaMalloc", "alloc_here", True),
    "free": ("cudaFree", "alloc_here", True),
    "memcpy": ("cudaMemcpy", "copy_here", True),
    "memcpy_async": ("cudaMemcpyAsync", "copy_here", False),
    "copy_sync": ("cudaStreamSynchronize", "copy_here", True),
    "launch": ("cudaLaunchKernel", "launch_here", False),
    "setup_malloc": ("cudaMalloc", "mode_calls", True),
    "final_sync": ("cudaStreamSynchronize", "mode_calls", True),
    "setup_free": ("cudaFree", "mode_calls", True),
}


def clean_env(extra=None):
    env = dict(os.environ)
    for k in UNSET:
        env.pop(k, None)
    env.update(extra or {})
    return env


def markers(path):
    """{name: line} of the "@name" marker comments of a source file (C: /* @name */, Python: # @name)."""
    found = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            for m in re.finditer(r"(?:/\*|#) @(\w+)(?: \*/)?\s*$", line):
                check(m.group(1) not in found, "marker @%s twice in %s", m.group(1), path)
                found[m.group(1)] = i
    check(found, "no @markers in %s", path)
    return found


C_LINES = None
PY_LINES = None


def c_line(mark):
    global C_LINES
    if C_LINES is None:
        C_LINES = markers(C_SRC)
    check(mark in C_LINES, "no marker @%s in %s", mark, C_SRC)
    return C_LINES[mark]


def py_line(mark):
    global PY_LINES
    if PY_LINES is None:
        PY_LINES = markers(PY_SRC)
    check(mark in PY_LINES, "no marker @%s in %s", mark, PY_SRC)
    return PY_LINES[mark]


def truth_of(r):
    lines = [x for x in r.out.splitlines() if x.startswith("{")]
    check(len(lines) == 1, "the workload printed no JSON line of its ground truth\n%s", r.describe())
    try:
        return json.loads(lines[0])
    except ValueError as e:
        raise Fail("the workload's ground truth is not JSON (%s): %r" % (e, lines[0]))


def run_c(out, args, opts=(), env=None, prog=None):
    fakes_dir()
    prog = prog or workload(PROG)
    r, rep = profile([prog] + [str(a) for a in args], out, opts=opts, env=clean_env(env))
    return r, rep, truth_of(r)


def run_py(out, args, opts=(), env=None):
    r, rep = profile([PYTHON, PY_SRC] + [str(a) for a in args], out, opts=opts, env=clean_env(env))
    return r, rep, truth_of(r)


def fstr(f):
    if f.get("function") is None and f.get("file") is None:
        return "%s+0x%x" % (os.path.basename(f.get("module") or "?"), f.get("offset") or 0)
    return "%s (%s:%s)%s" % (f.get("function"), os.path.basename(f.get("file") or "?"), f.get("line"),
                            " [py]" if f.get("module") == "python" else "")


def describe_callsites(rep, limit=40):
    rows = []
    for c in (rep.get("callsites") or [])[:limit]:
        rows.append("  %s count %s total_ns %s: %s" % (c.get("call"), c.get("count"), c.get("total_ns"),
                                                       " <- ".join(fstr(f) for f in c.get("frames", [])[:8])))
    return "\ncallsites:\n" + "\n".join(rows)


def callsites(rep):
    cs = rep.get("callsites")
    check(isinstance(cs, list), "rank0.json has no \"callsites\" list (keys: %r)", sorted(rep))
    for c in cs:
        for k in ("call", "frames", "count", "total_ns"):
            check(k in c, "a callsites[] entry without %r: %r", k, c)
        for f in c["frames"]:
            for k in ("function", "file", "line", "module"):
                check(k in f, "a frame without %r: %r", k, f)
    totals = [c["total_ns"] for c in cs]
    check_eq(totals, sorted(totals, reverse=True), "callsites[] order (total_ns, descending)")
    return cs


def own_frame(c, module):
    """The innermost frame of c in module (the program's own code), with its index, or (None, -1)."""
    for i, f in enumerate(c["frames"]):
        if f.get("module") == module:
            return f, i
    return None, -1


def stacks_counters(rep):
    s = rep.get("stacks")
    check(isinstance(s, dict), "rank0.json has no \"stacks\" object")
    for k in ("captured", "dropped", "samples_skipped"):
        check(isinstance(s.get(k), int) and s[k] >= 0, "stacks.%s is not a count: %r", k, s.get(k))
    return s


def bounds(mark, truth, threshold_us):
    """(lo, hi): how many of the calls at mark may have a stack."""
    call, func, by_kind = C_MARKS[mark]
    n = truth["calls"][mark]
    if by_kind or threshold_us == 0:
        return n, n
    over = truth["over"][mark]
    lo = n if mark in ("sleep_a", "sleep_b") and threshold_us <= SLOW_US else 0
    return lo, over


def check_c_sites(rep, truth, module, threshold_us):
    """Every callsite of the calls mode is one of the marked calls, each marker's count within its bounds.
    Returns {mark: [callsites]}."""
    cs = callsites(rep)
    ctx = describe_callsites(rep)
    by_mark = {m: [] for m in C_MARKS}
    where = {}
    for m, (call, func, _) in C_MARKS.items():
        where[(call, func, c_line(m))] = m
    marked_calls = set(call for call, _, _ in C_MARKS.values())
    for c in cs:
        if c["call"] not in marked_calls:
            # the program's other calls (cudaStreamCreate, printf's write): a stack when they last the threshold
            continue
        f, i = own_frame(c, module)
        check(f is not None, "a callsite with no frame of the program (%s): %s%s", module,
              " <- ".join(fstr(x) for x in c["frames"]), ctx)
        key = (c["call"], f["function"], f["line"])
        check(key in where, "a %s callsite at %s, which is none of the marked calls%s", c["call"], fstr(f), ctx)
        check(f["file"] is not None and f["file"].endswith("cuda_stacks.c"),
              "the frame of %s names file %r, not cuda_stacks.c", key, f["file"])
        by_mark[where[key]].append(c)
    for m, sites in by_mark.items():
        lo, hi = bounds(m, truth, threshold_us)
        got = sum(c["count"] for c in sites)
        check(lo <= got <= hi, "calls with a stack at @%s (%s in %s, line %d): expected %s, got %d "
              "(threshold %d us; the workload made %d such calls, %d of them lasting the threshold by its clock)%s",
              m, C_MARKS[m][0], C_MARKS[m][1], c_line(m), lo if lo == hi else "%d..%d" % (lo, hi), got,
              threshold_us, truth["calls"][m], truth["over"].get(m, truth["calls"][m]), ctx)
    return by_mark


# ---- C: calls ----

CALLS_CACHE = {}


def calls_run():
    if "r" not in CALLS_CACHE:
        CALLS_CACHE["r"] = run_c("OUT-calls", ["calls", N1, N2, N3, N4, N5])
    return CALLS_CACHE["r"]


def test_calls():
    r, rep, truth = calls_run()
    module = workload(PROG)
    check_eq(truth["threshold_us"], THRESHOLD_US, "the workload's threshold")
    check_eq(count(rep, "wait", "usleep"), N1 + N2 + N3, "wait.usleep count (every call recorded)")
    by_mark = check_c_sites(rep, truth, module, THRESHOLD_US)
    ctx = describe_callsites(rep)
    # The slow sleeps: exact counts, the marker's line (the call, not the line after it), the caller.
    for m, n in (("sleep_a", N1), ("sleep_b", N2)):
        got = sum(c["count"] for c in by_mark[m])
        check_eq(got, n, "usleep calls with a stack in %s" % m)
        for c in by_mark[m]:
            f, i = own_frame(c, module)
            check(i + 1 < len(c["frames"]), "the %s callsite has no caller frame%s", m, ctx)
            caller = c["frames"][i + 1]
            check_eq((caller["function"], caller["line"]), ("mode_calls", c_line("call_" + m)),
                     "the caller of %s (function, line of @call_%s)" % (m, m) + ctx)
            check(any(x["function"] == "main" for x in c["frames"][i + 2:]), "no frame of main outside %s%s", m,
                  ctx)
        total = sum(c["total_ns"] for c in by_mark[m])
        check_range(total, n * SLOW_US * 1000, n * (SLOW_US + SLACK_US) * 1000, "total_ns of %s's usleep calls" % m)
    usleeps = [c for c in callsites(rep) if c["call"] == "usleep"]
    check(sum(c["count"] for c in usleeps) <= N1 + N2 + truth["over"]["fast"],
          "usleep calls with a stack: more than the %d slow ones and the %d fast ones that lasted %d us%s",
          N1 + N2, truth["over"]["fast"], THRESHOLD_US, ctx)
    s = stacks_counters(rep)
    check_eq(s["dropped"], 0, "stacks.dropped")
    check_eq(s["captured"], sum(c["count"] for c in callsites(rep)), "stacks.captured (the calls with a stack)")
    samples = rep.get("samples")
    check(isinstance(samples, dict) and samples.get("count") == 0,
          "samples without --sample: expected count 0, got %r", samples)
    check_text_calls("OUT-calls", rep)
    check_folded_calls("OUT-calls", rep, by_mark, module)
    check_trace_calls("OUT-calls", truth)


def table_rows(text, title):
    """The rows of the table after the line starting with title, as lists of stripped cells (raw first cell
    kept as the last item)."""
    at = text.find("\n" + title)
    check(at >= 0, "rank0.txt has no %r section", title)
    rows = []
    started = False
    for line in text[at + 1:].split("\n")[1:]:
        if line.startswith("|"):
            started = True
            cells = line.split("|")[1:-1]
            rows.append([x.strip() for x in cells] + [cells[0]])
        elif started and not line.startswith("-"):
            break
    return rows, text[at:at + 3000]


def check_text_calls(out, rep):
    with open(os.path.join(out, "rank0.txt"), "rb") as f:
        text = f.read().decode("utf-8")
    rows, ctx = table_rows(text, "Top call sites")
    check(len(rows) > 2, "the Top call sites table has no rows:\n%s", ctx)
    ncol = next(i for i, h in enumerate(rows[0]) if h.startswith("Num calls"))
    group = None
    seen = {}
    for row in rows[1:]:
        name = row[0]
        if not row[-1].startswith("  "):
            group = name
            continue
        for m in ("sleep_a", "sleep_b"):
            if name.startswith("%s (cuda_stacks.c:%d)" % (m, c_line(m))):
                seen[m] = (group, row[ncol].replace(",", ""))
    for m, n in (("sleep_a", N1), ("sleep_b", N2)):
        check(m in seen, "Top call sites has no row \"%s (cuda_stacks.c:%d) ...\":\n%s", m, c_line(m), ctx)
        check_eq(seen[m], ("wait.usleep", str(n)), "the %s row of Top call sites (its call, Num calls)" % m)
    check_eq(rows[1][0], "wait.usleep", "the first call of Top call sites (the most time)\n" + ctx)


def folded_lines(out):
    path = os.path.join(out, "rank0.folded")
    check(os.path.exists(path), "no %s", path)
    lines = []
    with open(path, "rb") as f:
        for line in f.read().decode("utf-8").splitlines():
            m = re.fullmatch(r"(.*) (\d+)", line)
            check(m is not None, "a rank0.folded line that is not 'STACK N': %r", line)
            lines.append((m.group(1).split(";"), int(m.group(2))))
    return lines


def check_folded_calls(out, rep, by_mark, module):
    lines = folded_lines(out)
    check(all(fr[0] in ("wait", "cpu") for fr, _ in lines), "a folded line that starts with neither wait nor cpu")
    check(not any(fr[0] == "cpu" for fr, _ in lines), "cpu lines in rank0.folded without --sample")
    for m in ("sleep_a", "sleep_b"):
        want = "%s (cuda_stacks.c:%d)" % (m, c_line(m))
        mine = [(fr, n) for fr, n in lines if fr[0] == "wait" and fr[-1] == "[usleep]" and fr[-2] == want]
        check(mine, "no folded line wait;...;%s;[usleep] N", want)
        for fr, _ in mine:
            check("mode_calls (cuda_stacks.c:%d)" % c_line("call_" + m) == fr[-3],
                  "the frame outside %s in a folded line: %r", want, fr[-3])
        us = sum(n for _, n in mine)
        total_ns = sum(c["total_ns"] for c in by_mark[m])
        check(abs(us - total_ns / 1000.0) <= len(mine), "folded microseconds of %s (%d) against its callsites' "
              "total_ns %d", want, us, total_ns)
        n = N1 if m == "sleep_a" else N2
        check_range(us, n * SLOW_US, n * (SLOW_US + SLACK_US), "folded microseconds of %s" % want)
    syncs = [fr for fr, _ in lines if fr[-1] == "[cudaDeviceSynchronize]"]
    check(syncs and all(fr[-2] == "sync_here (cuda_stacks.c:%d)" % c_line("sync_device") for fr in syncs),
          "folded lines of cudaDeviceSynchronize: %r", syncs)


def check_trace_calls(out, truth):
    t = load_json(os.path.join(out, "rank0.trace.json"))
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("pid") == truth["pid"]]
    us = [e for e in ev if e.get("name") == "usleep"]
    check_eq(len(us), N1 + N2 + N3, "usleep slices in the trace")
    want = {m: "%s (cuda_stacks.c:%d)" % (m, c_line(m)) for m in ("sleep_a", "sleep_b", "fast")}
    got = {m: 0 for m in want}
    for e in us:
        st = (e.get("args") or {}).get("stack")
        if e["dur"] >= SLOW_US:
            check(isinstance(st, list) and st, "a %.0f us usleep slice without args.stack: %r", e["dur"], e)
        if st is None:
            check(e["dur"] < THRESHOLD_US + 1, "a %.1f us usleep slice (over the threshold) without a stack: %r",
                  e["dur"], e)
            continue
        check(all(isinstance(x, str) for x in st), "args.stack is not a list of strings: %r", st)
        m = next((k for k, v in want.items() if st[0] == v), None)
        check(m is not None, "a usleep slice's stack starts with %r, none of %r", st[0], sorted(want.values()))
        got[m] += 1
    check_eq((got["sleep_a"], got["sleep_b"]), (N1, N2), "usleep slices with a stack from sleep_a, sleep_b")
    check(got["fast"] <= truth["over"]["fast"], "%d usleep(0) slices with a stack; the workload counted %d over "
          "the threshold", got["fast"], truth["over"]["fast"])
    ds = [e for e in ev if e.get("name") == "cudaDeviceSynchronize"]
    check_eq(len(ds), N4, "cudaDeviceSynchronize slices")
    for e in ds:
        st = (e.get("args") or {}).get("stack")
        check(st and st[0] == "sync_here (cuda_stacks.c:%d)" % c_line("sync_device"),
              "a cudaDeviceSynchronize slice's stack: %r", st)


def test_no_profiler_frames():
    """The profiler's own frames are never the program's (pw_main, the wrapper of main, included), and a
    frame outside any compile unit (_start) claims no source line."""
    r, rep, truth = calls_run()
    ctx = describe_callsites(rep)
    for c in callsites(rep):
        for f in c["frames"]:
            check(os.path.basename(f.get("module") or "") != "libprofwrap.so",
                  "a frame of the profiler itself in the program's stack: %s (module %s)%s", fstr(f), f["module"], ctx)
            if f["function"] == "_start":
                check(f["file"] is None and f["line"] == 0, "_start (crt1.o, no debug information) is given a "
                      "source line: %s%s", fstr(f), ctx)


def test_threshold_zero():
    r, rep, truth = run_c("OUT-zero", ["calls", N1, N2, N3, N4, N5, 0], opts=["--stack-threshold=0"])
    by_mark = check_c_sites(rep, truth, workload(PROG), 0)
    usleeps = sum(c["count"] for c in callsites(rep) if c["call"] == "usleep")
    check_eq(usleeps, N1 + N2 + N3, "usleep calls with a stack at --stack-threshold=0")
    check_eq(sum(c["count"] for c in by_mark["fast"]), N3, "usleep(0) calls with a stack at --stack-threshold=0")
    check_eq(sum(c["count"] for c in by_mark["launch"]), N5, "cudaLaunchKernel calls with a stack at 0")


def test_threshold_env_bare():
    # A bare number is microseconds: 1000 is 1 ms (the 3 ms sleeps have stacks, usleep(0) has none).
    r, rep, truth = run_c("OUT-1ms", ["calls", N1, N2, N3, N4, N5, 1000], env={"PROFWRAP_STACK_THRESHOLD": "1000"})
    check_c_sites(rep, truth, workload(PROG), 1000)


def test_stacks_off():
    r, rep, truth = run_c("OUT-off", ["calls", N1, N2, N3, N4, N5], opts=["--stacks=off"])
    check_eq(count(rep, "wait", "usleep"), N1 + N2 + N3, "wait.usleep count with --stacks=off")
    check_eq(count(rep, "cudart", "cudaDeviceSynchronize"), N4, "cudaDeviceSynchronize count with --stacks=off")
    check(not rep.get("callsites"), "callsites with --stacks=off: %s", describe_callsites(rep))
    check_eq(stacks_counters(rep)["captured"], 0, "stacks.captured with --stacks=off")
    check(not os.path.exists(os.path.join("OUT-off", "rank0.folded")), "rank0.folded written with --stacks=off")
    t = load_json(os.path.join("OUT-off", "rank0.trace.json"))
    check(not any("stack" in (e.get("args") or {}) for e in t["traceEvents"]),
          "trace events with args.stack with --stacks=off")


def test_bad_values():
    fakes_dir()
    prog = workload(PROG)
    for opt in ("--stack-threshold=abc", "--stack-threshold=-1", "--stack-threshold=5x", "--sample=-5",
                "--sample=abc", "--stacks=maybe", "--stacks="):
        out = "OUT-bad"
        marker = os.path.abspath("started")
        r = profwrap(["-q", "-o", out, opt, "--", "/bin/sh", "-c", "touch %s; %s calls 1 1 1 1 1" % (marker, prog)],
                     env=clean_env())
        check(r.rc != 0, "%s: profwrap exited 0\n%s", opt, r.describe())
        err = r.err.strip().splitlines()
        check(len(err) == 1 and err[0].startswith("profwrap:") and opt.split("=")[0] in err[0],
              "%s: expected one line 'profwrap: %s ...' on stderr, got %r", opt, opt.split("=")[0], r.err)
        check(not os.path.exists(marker), "%s: the target was started", opt)
        check(not os.path.exists(os.path.join(out, "rank0.json")), "%s: a report was written", opt)
        check_eq(r.out, "", "%s: stdout" % opt)


# ---- C: a stripped copy ----

def symbols(path):
    """{name: (start, end, local)} of the program's functions (nm)."""
    nm = shutil.which("nm")
    if not nm:
        raise Skip("no nm")
    p = subprocess.run([nm, "-S", "--defined-only", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    syms = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            syms[parts[3]] = (int(parts[0], 16), int(parts[0], 16) + int(parts[1], 16), parts[2] == "t")
    return syms


def test_stripped():
    objcopy = shutil.which("objcopy")
    if not objcopy:
        raise Skip("no objcopy")
    fakes = fakes_dir()
    orig = workload(PROG)
    d = tmpdir("stripped-")
    prog = os.path.join(d, PROG)
    p = subprocess.run([objcopy, "--strip-all", orig, prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(p.returncode == 0, "objcopy --strip-all: %s", p.stdout)
    check(not symbols(prog).get("sleep_a"), "sleep_a is still named in the stripped copy")
    syms = symbols(orig)
    for f in ("sleep_a", "sleep_b", "fast", "sync_here", "alloc_here"):
        check(f in syms and syms[f][2], "%s is not a local function of %s (nm)", f, orig)
    r, rep, truth = run_c("OUT-strip", ["calls", N1, N2, N3, N4, N5], prog=prog, env={"LD_LIBRARY_PATH": fakes})
    ctx = describe_callsites(rep)
    check_eq(count(rep, "wait", "usleep"), N1 + N2 + N3, "wait.usleep count of the stripped copy")

    def sym_at(off):
        return next((n for n, (lo, hi, _) in syms.items() if lo <= off < hi), None)

    marked_calls = set(call for call, _, _ in C_MARKS.values())
    got = {}
    for c in callsites(rep):
        for x in c["frames"]:
            if x["module"] == prog:
                check(x["file"] is None and x["line"] == 0, "a frame of the stripped copy with a source line: %r", x)
        if c["call"] not in marked_calls:
            # other calls, the fake CUPTI's worker thread's lock waits among them, may have no frame of the program
            continue
        f, i = own_frame(c, prog)
        check(f is not None, "a callsite with no frame of the stripped copy (module %s)%s", prog, ctx)
        # the innermost frame: a function the stripped copy still names (.dynsym: main), or an offset in a
        # local function of the unstripped program
        if f["function"] is not None:
            name = f["function"]
            check(name in syms and not syms[name][2], "a frame of the stripped copy is named %r, which is not "
                  "an exported function of %s", name, orig)
        else:
            check(isinstance(f.get("offset"), int), "an unnamed frame of the stripped copy without an offset: %r", f)
            name = sym_at(f["offset"] - 1)
            check(name is not None, "offset 0x%x of the stripped copy is in no function of %s", f["offset"], orig)
            check(syms[name][2], "a frame in %s, exported, is unnamed in the stripped copy: %r", name, f)
        got[(c["call"], name)] = got.get((c["call"], name), 0) + c["count"]
    for m, (call, func, _) in C_MARKS.items():
        if func not in syms:
            continue  # inlined (mode_calls)
        lo, hi = bounds(m, truth, THRESHOLD_US)
        n = got.get((call, func), 0)
        if (call, func) == ("cudaStreamSynchronize", "sync_here") or func in ("sleep_a", "sleep_b", "alloc_here"):
            check(lo <= n <= hi, "stripped: %s calls with a stack in %s: expected %s, got %d%s", call, func,
                  lo if lo == hi else "%d..%d" % (lo, hi), n, ctx)
    total = sum(c["count"] for c in callsites(rep) if c["call"] in marked_calls)
    lo = sum(bounds(m, truth, THRESHOLD_US)[0] for m in C_MARKS)
    hi = sum(bounds(m, truth, THRESHOLD_US)[1] for m in C_MARKS)
    check(lo <= total <= hi, "stripped: calls with a stack in all: expected %d..%d, got %d%s", lo, hi, total, ctx)

    # text and folded: cuda_stacks+0x<offset>, inside sleep_a
    with open(os.path.join("OUT-strip", "rank0.txt"), "rb") as f:
        text = f.read().decode("utf-8")
    rows, tctx = table_rows(text, "Top call sites")
    hexes = [int(m.group(1), 16) for row in rows for m in [re.match(r"cuda_stacks\+0x([0-9a-f]+)", row[0])] if m]
    check(any(sym_at(h - 1) == "sleep_a" for h in hexes), "no Top call sites row cuda_stacks+0x<offset in sleep_a "
          "(0x%x..0x%x)>:\n%s", syms["sleep_a"][0], syms["sleep_a"][1], tctx)
    us = 0
    for fr, n in folded_lines("OUT-strip"):
        if fr[-1] == "[usleep]":
            m = re.fullmatch(r"cuda_stacks\+0x([0-9a-f]+)", fr[-2])
            check(m is not None, "a folded usleep line of the stripped copy whose innermost frame is %r", fr[-2])
            if sym_at(int(m.group(1), 16) - 1) == "sleep_a":
                us += n
    check_range(us, N1 * SLOW_US, N1 * (SLOW_US + SLACK_US), "folded microseconds of sleep_a's usleep (stripped)")


# ---- C: deep stacks ----

def test_deep():
    module = workload(PROG)
    for depth in (40, 100):
        out = "OUT-deep%d" % depth
        r, rep, truth = run_c(out, ["deep", depth, 3])
        cs = [c for c in callsites(rep) if c["call"] == "usleep"]
        ctx = describe_callsites(rep)
        check_eq(sum(c["count"] for c in cs), 3, "usleep calls with a stack, %d deep" % depth)
        check_eq(len(cs), 1, "usleep callsites, %d deep (one stack)" % depth)
        fr = cs[0]["frames"]
        check_eq((fr[0]["function"], fr[0]["line"], fr[0]["module"]), ("deep_leaf", c_line("deep_leaf"), module),
                 "the innermost frame, %d deep" % depth)
        native = [f for f in fr if f["module"] != "python"]
        rec = [(f["function"], f["line"]) for f in fr if f["function"] == "deep_rec"]
        if depth == 40:
            want = [("deep_rec", c_line("deep_rec_leaf"))] + [("deep_rec", c_line("deep_rec"))] * (depth - 1)
            check_eq(rec, want, "the deep_rec frames (function, line), 40 deep")
            check_eq((fr[depth + 1]["function"], fr[depth + 1]["line"]), ("mode_deep", c_line("mode_deep")),
                     "the frame outside the recursion" + ctx)
            check(len(native) < MAX_NATIVE, "a 40-deep stack of %d native frames", len(native))
        else:
            check_eq(len(native), MAX_NATIVE, "native frames of a 100-deep stack (truncated at %d)" % MAX_NATIVE)
            check_eq(len(rec), MAX_NATIVE - 1, "deep_rec frames of a 100-deep stack")
            if "truncated" in cs[0]:
                check_eq(cs[0]["truncated"], True, "callsite.truncated of a 100-deep stack")
            else:
                note("note: the callsite of a truncated stack does not say so (no \"truncated\" key): %r" %
                     sorted(cs[0]))
        check_eq(stacks_counters(rep)["dropped"], 0, "stacks.dropped, %d deep" % depth)


# ---- sampling ----

def test_sampling():
    r, rep, truth = run_c("OUT-spin", ["spin", SPIN_HERE_MS, SPIN_OTHER_MS], opts=["--sample=%d" % SAMPLE_HZ])
    s = rep.get("samples")
    check(isinstance(s, dict), "rank0.json has no \"samples\" object")
    period = 1000000000 // SAMPLE_HZ
    check_eq(s.get("period_ns"), period, "samples.period_ns at --sample=%d" % SAMPLE_HZ)
    cpu = truth["here_cpu_ns"] + truth["other_cpu_ns"]
    check_range(s.get("count"), cpu // period // 2, (cpu + 300 * 1000000) // period,
                "samples.count (%d ms of CPU at %d Hz)" % (cpu // 1000000, SAMPLE_HZ))
    stacks = s.get("stacks")
    check(isinstance(stacks, list) and stacks, "samples.stacks is empty")
    check_eq(sum(x["count"] for x in stacks), s["count"], "the sum of samples.stacks[].count")
    inner = {}
    for x in stacks:
        f = x["frames"][0] if x["frames"] else {}
        inner[f.get("function")] = inner.get(f.get("function"), 0) + x["count"]
    here, other = inner.get("spin_here", 0), inner.get("spin_other", 0)
    desc = ", ".join("%s %d" % kv for kv in sorted(inner.items(), key=lambda kv: -kv[1]))
    check(here > 0.6 * s["count"], "spin_here is the innermost frame of %d of %d samples (<= 60 %%): %s", here,
          s["count"], desc)
    check(here > 2 * other and other > 0, "spin_here %d samples against spin_other's %d (5 times its CPU): %s",
          here, other, desc)
    for x in stacks:
        if x["frames"] and x["frames"][0].get("function") == "spin_here":
            fr = x["frames"]
            check_eq(fr[0]["module"], workload(PROG), "the module of spin_here's frame")
            check(fr[0]["line"] in range(c_line("spin_here") - 4, c_line("spin_here") + 3),
                  "a sample in spin_here at line %d, outside its loop (@spin_here line %d)", fr[0]["line"],
                  c_line("spin_here"))
    st = stacks_counters(rep)
    calls = sum(c["count"] for c in callsites(rep))
    check_eq(st["captured"], s["count"] + calls, "stacks.captured (%d samples and %d calls with a stack)%s" % (
        s["count"], calls, describe_callsites(rep)))
    here_lines = [n for fr, n in folded_lines("OUT-spin") if fr[0] == "cpu" and fr[-1].startswith("spin_here (")]
    here_ns = sum(x["cpu_ns"] for x in stacks if x["frames"] and x["frames"][0].get("function") == "spin_here")
    check(abs(1000 * sum(here_lines) - here_ns) <= 500 * len(here_lines),
          "folded cpu;...;spin_here (...) microseconds: %d in %d lines, for samples.stacks[].cpu_ns %d ns",
          sum(here_lines), len(here_lines), here_ns)
    with open(os.path.join("OUT-spin", "rank0.txt"), "rb") as f:
        text = f.read().decode("utf-8")
    check("CPU samples" in text, "rank0.txt has no \"CPU samples\" section")
    t = load_json(os.path.join("OUT-spin", "rank0.trace.json"))
    ev = [e for e in t["traceEvents"] if e.get("name") == "cpu sample"]
    check(0 < len(ev) <= s["count"], "\"cpu sample\" events in the trace: %d for %d samples", len(ev), s["count"])
    check(all(e.get("ph") in ("i", "I") and (e.get("args") or {}).get("stack") for e in ev),
          "a \"cpu sample\" event that is not an instant with args.stack")


# ---- Python ----

def py_frame_at(c, func, line):
    """Index of the first Python frame of c, when it is func at line in py_stacks.py; else -1."""
    for i, f in enumerate(c["frames"]):
        if f["module"] == "python":
            ok = (f["function"] == func and f["line"] == line and (f["file"] or "").endswith("/py_stacks.py"))
            return i if ok else -1
    return -1


def py_sites(rep, func, mark, calls):
    line = py_line(mark)
    return [c for c in callsites(rep) if c["call"] in calls and py_frame_at(c, func, line) >= 0]


def target_python():
    """(major, minor, free-threaded) of the targets' interpreter."""
    r = run([PYTHON, "-c", "import sys; print(*sys.version_info[:2], int('free-threading' in sys.version))"])
    major, minor, free = (int(x) for x in r.out.split())
    return major, minor, free


def check_py(rep, truth, ctx_name):
    ctx = describe_callsites(rep)
    # CPython 3.9 to 3.13 get the frames of calls made without the GIL read directly: no profile hook then
    # (elsewhere the hook goes on from the main thread when the interpreter runs pending calls: no check).
    major, minor, free = target_python()
    if (3, 9) <= (major, minor) <= (3, 13) and not free:
        check(not truth["profile_hook"], "%s: profwrap's profile hook set on threading (Python %d.%d, whose "
              "frames are read directly)", ctx_name, major, minor)
    steps = py_sites(rep, "step", "py_step", PY_SLEEP_CALLS)
    check_eq(sum(c["count"] for c in steps), truth["step"], "%s: time.sleep calls in step() with its frame "
             "(step, py_stacks.py, line %d, module python; the GIL released: deferred)%s" % (
                 ctx_name, py_line("py_step"), ctx))
    held = py_sites(rep, "held", "py_held", ("usleep",))
    check_eq(sum(c["count"] for c in held), truth["held"], "%s: usleep calls through ctypes.PyDLL in held() with its "
             "frame (held, py_stacks.py, line %d, module python; the GIL held)%s" % (ctx_name, py_line("py_held"), ctx))
    for c in held:
        check(c["frames"][0]["module"] != "python", "%s: the native frames inside held()'s usleep (libffi, ctypes) "
              "are missing: %s", ctx_name, " <- ".join(fstr(f) for f in c["frames"]))
    if truth["main_sleep"]:
        ms = py_sites(rep, "main_sleep", "py_main_sleep", PY_SLEEP_CALLS)
        check_eq(sum(c["count"] for c in ms), truth["main_sleep"], "%s: time.sleep calls in main_sleep() with its "
                 "frame%s" % (ctx_name, ctx))
    for c in callsites(rep):
        names = [f["function"] for f in c["frames"] if f["module"] == "python"]
        check(not ("main_sleep" in names and ("step" in names or "held" in names or "run_calls" in names)),
              "%s: one stack holds the frames of two threads: %s", ctx_name,
              " <- ".join(fstr(f) for f in c["frames"]))


def test_python():
    r, rep, truth = run_py("OUT-py", ["main", 8, 6])
    check_py(rep, truth, "main thread")
    lines = folded_lines("OUT-py")
    want = "step (py_stacks.py:%d)" % py_line("py_step")
    us = sum(n for fr, n in lines if fr[0] == "wait" and fr[-2] == want and fr[-1][1:-1] in PY_SLEEP_CALLS)
    check_range(us, 8 * SLOW_US, 8 * (SLOW_US + SLACK_US), "folded microseconds of %s's sleep" % want)


def test_python_native():
    r, rep, truth = run_py("OUT-pynative", ["main", 8, 6], opts=["--stacks=native"])
    cs = callsites(rep)
    check(not any(f["module"] == "python" for c in cs for f in c["frames"]),
          "Python frames with --stacks=native:%s", describe_callsites(rep))
    n = sum(c["count"] for c in cs if c["call"] in PY_SLEEP_CALLS)
    check(n >= 8, "time.sleep calls with a stack with --stacks=native: %d of 8", n)


def check_py_trace(out, truth):
    """Every trace slice that carries step's, held's or main_sleep's frame is on the thread that ran it, and
    as many as it made."""
    t = load_json(os.path.join(out, "rank0.trace.json"))
    got = {"step": [], "held": [], "main_sleep": []}
    for e in t["traceEvents"]:
        st = (e.get("args") or {}).get("stack") or []
        if e.get("pid") != truth["pid"] or e.get("ph") != "X":
            continue
        for func, mark in (("step", "py_step"), ("held", "py_held"), ("main_sleep", "py_main_sleep")):
            if "%s (py_stacks.py:%d)" % (func, py_line(mark)) in st:
                got[func].append(e)
    for func, tid, n, calls in (("step", truth["tid"], truth["step"], PY_SLEEP_CALLS),
                                ("held", truth["tid"], truth["held"], ("usleep",)),
                                ("main_sleep", truth["main_tid"], truth["main_sleep"], PY_SLEEP_CALLS)):
        evs = got[func]
        check(all(e["tid"] == tid for e in evs), "trace events with %s's frame on threads %r; expected only %d "
              "(threads: worker %d, main %d)", func, sorted(set(e["tid"] for e in evs)), tid, truth["tid"],
              truth["main_tid"])
        check_eq(len([e for e in evs if e["name"] in calls]), n, "trace slices %r with %s's frame" % (calls, func))


def test_python_thread():
    r, rep, truth = run_py("OUT-pythread", ["thread", 8, 5, 10])
    check(truth["tid"] != truth["main_tid"], "the worker ran on the main thread: %r", truth)
    check_py(rep, truth, "thread")
    check_py_trace("OUT-pythread", truth)


def test_python_join():
    # The main thread waits in join(): it runs no Python while the worker makes its calls.
    # The worker starts while the main thread waits in join(): it gets the hook from threading as it starts
    # (profwrap sets threading._profile_hook when Python creates a thread), so its first call has its frames.
    r, rep, truth = run_py("OUT-pyjoin", ["join", 8, 5])
    check(truth["tid"] != truth["main_tid"], "the worker ran on the main thread: %r", truth)
    check_py(rep, truth, "join")
    check_py_trace("OUT-pyjoin", truth)


def test():
    import time
    import traceback
    tests = (test_calls, test_no_profiler_frames, test_threshold_zero, test_threshold_env_bare, test_stacks_off,
             test_bad_values, test_stripped, test_deep, test_sampling, test_python, test_python_native,
             test_python_thread, test_python_join)
    only = os.environ.get("STACKS_ONLY")
    failures = []
    for t in tests:
        if only and t.__name__ not in only.split(","):
            continue
        t0 = time.monotonic()
        try:
            t()
            note("ok %s (%.1f s)" % (t.__name__, time.monotonic() - t0))
        except Skip as e:
            note("skip %s: %s" % (t.__name__, e))
        except Fail as e:
            note("FAIL %s: %s" % (t.__name__, e))
            failures.append(t.__name__)
        except Exception:
            note("FAIL %s: unexpected exception\n%s" % (t.__name__, traceback.format_exc()))
            failures.append(t.__name__)
    if failures:
        raise Fail("%d of %d failed: %s" % (len(failures), len(tests), ", ".join(failures)))


main(test)
