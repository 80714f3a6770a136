"""Capture control: what profwrap records only inside capture windows, with the workload cuda_nvtx reading a
data file with read(2) in and around NVTX "step" ranges and writing its own figures to a JSON file.

Exact (computed from the spec's rules over the workload's own figures): the data file's reads, read bytes and
opens, and io.read/io.open/io.close, for --capture-range=nvtx:step (with --capture-count, and in a named
domain with nvtx:step@mydomain), --schedule=wait=W,warmup=U,active=A,repeat=R --step-range=step (consecutive
active steps form one window, the reads between them included; a window still open at exit),
--capture-range=cudaProfilerApi (with --capture-count), --capture-range=manual with `profwrap start|stop PID`
and plain SIGUSR2 toggles, a child forked before the window opened (it shares its parent's window), and the
settings as environment variables (preload-only mode). Opens and closes outside the windows count nowhere, but
still name the files that reads inside a window use. The "capture" object lists the windows in order with
their reasons, names and occurrences, and captured_ns is their sum.

Within bounds: --delay/--duration, from the workload's timestamps of each read and the moment the test
launched profwrap (the window's edges are known to within the time profwrap took to start the workload).

`profwrap start|stop PID` of a process that is not profiled (pid 1, a plain `sleep`, a pid that is gone)
fails with exit 1 and one line on stderr, and does not signal it."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROG = "cuda_nvtx"
UNSET = ("NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH", "PROFWRAP_CAPTURE_RANGE", "PROFWRAP_CAPTURE_COUNT",
         "PROFWRAP_DELAY", "PROFWRAP_DURATION", "PROFWRAP_SCHEDULE", "PROFWRAP_STEP_RANGE", "PROFWRAP_CUPTI",
         "FAKEGPU_NS_PER_BLOCK", "NVTX_DATA", "NVTX_STEP_DOMAIN")
REASONS = ("cudaProfilerApi", "nvtx", "schedule", "timer", "on-demand", "initial")
OPEN_CALLS = ("open", "open64", "openat", "openat64", "creat", "creat64")


def clean_env(extra=None):
    env = dict(os.environ)
    for k in UNSET:
        env.pop(k, None)
    env.update(extra or {})
    return env


def prog():
    fakes_dir()
    return workload(PROG)


# ---- the spec's window rules, over the workload's steps ----

def simulate(n, kind, cnt=0, sched=None, brackets=()):
    """Whether each step's read (ins[k]) and each read after a step (outs[k]) falls inside a window, the
    windows as (reason, name, occurrence) in order, and whether one is still open at exit. kind: "nvtx"
    (--capture-range=nvtx:step, --capture-count=cnt), "schedule" (sched = (W, U, A, R)), "profiler" (brackets:
    [(first step, last step)], --capture-count=cnt)."""
    def active(k):
        w, u, a, rep = sched
        c = w + u + a
        return (rep == 0 or k // c < rep) and k % c >= w + u

    is_open, opened_by = False, None
    ins, outs, windows = [], [], []
    for k in range(n):
        if kind == "profiler":
            for b, (first, _) in enumerate(brackets):
                if k == first and (cnt == 0 or b < cnt) and not is_open:
                    is_open, opened_by = True, b
                    windows.append(("cudaProfilerApi", None, b))
        elif kind == "nvtx":
            if not is_open and (cnt == 0 or k < cnt):
                is_open = True
                windows.append(("nvtx", "step", k))
        elif kind == "schedule":
            if active(k) and not is_open:
                is_open = True
                windows.append(("schedule", "step", k))
        ins.append(is_open)
        if kind == "nvtx":
            is_open = False
        elif kind == "schedule":
            if is_open and not active(k + 1):
                is_open = False
        elif kind == "profiler":
            for b, (_, last) in enumerate(brackets):
                if k == last and is_open and opened_by == b:
                    is_open = False
        outs.append(is_open)
    return ins, outs, windows, is_open


def run_window(out, mode, n, nbytes, opts=(), extra=None, preload_only=False):
    p = prog()
    data = write_file(os.path.abspath("data-" + out), nbytes * n * (n + 1) // 2 + 4096)
    truth_path = os.path.abspath("truth-%s.json" % out)
    env = {"NVTX_DATA": data}
    env.update(extra or {})
    cmd = [p, mode, truth_path, str(n), str(nbytes)]
    if preload_only:
        r, rep = run_preload_only(cmd, out, extra_env=env)
        remove_preload_session(out)
        check_eq(r.rc, 0, "exit status of %s %s (preload-only)\n%s" % (PROG, mode, r.describe()))
    else:
        r, rep = profile(cmd, out, opts=opts, env=clean_env(env))
    return rep, load_json(truth_path), data, truth_path


def opens(rep):
    return sum(count(rep, "io", name) for name in OPEN_CALLS)


def describe_windows(cap):
    return "\n".join("  pid %s %s..%s reason %r name %r occurrence %r" % (
        w.get("pid"), w.get("start_ns"), w.get("end_ns"), w.get("reason"), w.get("name"), w.get("occurrence"))
        for w in (cap or {}).get("windows") or [])


def check_capture(rep, out, pid, expected, what):
    """capture: mode "windows", a settings text, the windows of pid in order as expected ((reason, name,
    occurrence) list; occurrence None: any), inside the run, not overlapping, captured_ns their sum. Returns the
    windows of pid."""
    cap = rep.get("capture")
    check(isinstance(cap, dict), "rank0.json has no \"capture\" object (%s)", what)
    ctx = " (%s)\nwindows:\n%s" % (what, describe_windows(cap))
    check_eq(cap.get("mode"), "windows", "capture.mode" + ctx)
    check(isinstance(cap.get("settings"), str) and cap["settings"] != "", "capture.settings is %r%s",
          cap.get("settings"), ctx)
    wins = cap.get("windows")
    check(isinstance(wins, list), "capture.windows is not a list%s", ctx)
    for w in wins:
        for k in ("pid", "start_ns", "end_ns", "reason", "name", "occurrence"):
            check(k in w, "a capture window without %r: %r", k, w)
        check(w["reason"] in REASONS, "a capture window with an unknown reason: %r", w)
        check(0 <= w["start_ns"] <= w["end_ns"] <= rep["wall_ns"], "a capture window outside the run (wall %d ns): "
              "%r", rep["wall_ns"], w)
    mine = sorted((w for w in wins if w["pid"] == pid), key=lambda w: w["start_ns"])
    got = [(w["reason"], w["name"], w["occurrence"] if e[2] is not None else None)
           for w, e in zip(mine, expected)]
    check_eq(len(mine), len(expected), "number of capture windows of pid %d%s" % (pid, ctx))
    check_eq(got, list(expected), "capture windows (reason, name, occurrence)" + ctx)
    for a, b in zip(mine, mine[1:]):
        check(a["end_ns"] <= b["start_ns"], "capture windows overlap: %r and %r", a, b)
    # Time inside windows: windows of different processes may overlap, so their union.
    total, reach = 0, -1
    for w in sorted(wins, key=lambda w: w["start_ns"]):
        lo = max(w["start_ns"], reach)
        if w["end_ns"] > lo:
            total += w["end_ns"] - lo
        reach = max(reach, w["end_ns"])
    check_range(cap.get("captured_ns", -1), total - len(wins), total + len(wins),
                "capture.captured_ns vs the windows' sum" + ctx)
    with open(os.path.join(out, "rank0.txt"), "rb") as f:
        text = f.read().decode("utf-8", "replace")
    check("Capture:" in text[:text.find("\n\n", text.find("Dropped:"))],
          "rank0.txt's header has no \"Capture:\" line (%s)", what)
    return mine


def check_window_figures(rep, truth, data, truth_path, ins, outs, open_at_end, what):
    """The data file's reads and opens, io.read and the opens/closes, exactly as the windows say."""
    steps = truth["steps"]
    want_reads = sum(s["in_reads"] for s, i in zip(steps, ins) if i) + \
        sum(s["out_reads"] for s, o in zip(steps, outs) if o)
    want_bytes = sum(s["in_bytes"] for s, i in zip(steps, ins) if i) + \
        sum(s["out_bytes"] for s, o in zip(steps, outs) if o)
    want_opens = sum(s["out_opens"] for s, o in zip(steps, outs) if o)
    ctx = " (%s; steps read in windows %r, reads after steps in windows %r)\ncalls:\n%s" % (
        what, [k for k, i in enumerate(ins) if i], [k for k, o in enumerate(outs) if o], describe_calls(rep))
    f = file_entry(rep, data)
    if want_reads == 0 and f is None:
        f = {"reads": 0, "read_bytes": 0, "opens": 0}
    f = f or need_file(rep, data)  # named by an open made outside any window
    check_eq((f["reads"], f["read_bytes"], f["opens"]), (want_reads, want_bytes, want_opens),
             "(reads, read_bytes, opens) of the data file" + ctx)
    check_eq((count(rep, "io", "read"), nbytes(rep, "io", "read")), (want_reads, want_bytes),
             "io.read (count, bytes)" + ctx)
    o = file_entry(rep, truth_path)
    if open_at_end:
        check(o is not None and o["opens"] == 1, "the workload's figures file, opened in the window still open at "
              "exit: %r%s", o, ctx)
    else:
        check_eq(opens(rep), want_opens, "io opens (those outside the windows count nowhere)" + ctx)
        check_eq(count(rep, "io", "close"), want_opens, "io.close count" + ctx)
        check(o is None or (o["opens"], o["writes"], o["write_bytes"]) == (0, 0, 0),
              "the workload's figures file, written after the last window closed, is counted: %r%s", o, ctx)


def window_case(out, mode, n, nbytes, opts, kind, cnt=0, sched=None, extra=None, preload_only=False):
    rep, truth, data, truth_path = run_window(out, mode, n, nbytes, opts, extra, preload_only)
    ins, outs, windows, open_at_end = simulate(n, kind, cnt, sched, [tuple(b) for b in truth["brackets"]])
    what = "%s %s" % (mode, " ".join(opts) or "env " + repr(extra))
    check_eq(rep["dropped_events"], 0, "dropped_events (%s)" % what)
    check_window_figures(rep, truth, data, truth_path, ins, outs, open_at_end, what)
    check_capture(rep, out, truth["pid"], windows, what)
    return rep, truth


# ---- the tests ----

def test_nvtx_count():
    window_case("OUT-nvtx3", "window", 6, 4096, ["--capture-range=nvtx:step", "--capture-count=3"], "nvtx", cnt=3)


def test_nvtx_all():
    window_case("OUT-nvtx-all", "window", 5, 1000, ["--capture-range=nvtx:step"], "nvtx", cnt=0)


def test_nvtx_domain():
    # step ranges pushed in the domain "mydomain": nvtx:step@mydomain captures them, nvtx:step (the default
    # domain) captures nothing.
    window_case("OUT-dom", "window", 4, 2048, ["--capture-range=nvtx:step@mydomain", "--capture-count=2"],
                "nvtx", cnt=2, extra={"NVTX_STEP_DOMAIN": "mydomain"})
    rep, truth, data, truth_path = run_window("OUT-dom-default", "window", 4, 2048, ["--capture-range=nvtx:step"],
                                              {"NVTX_STEP_DOMAIN": "mydomain"})
    check_window_figures(rep, truth, data, truth_path, [False] * 4, [False] * 4, False,
                         "steps in mydomain, --capture-range=nvtx:step")
    check_capture(rep, "OUT-dom-default", truth["pid"], [], "steps in mydomain, --capture-range=nvtx:step")


def test_schedule():
    # C = 4, active(k) = k/4 < 2 && k%4 >= 2: steps 2,3 and 6,7, each pair one window with the read between.
    window_case("OUT-sched", "window", 10, 1024,
                ["--schedule=wait=1,warmup=1,active=2,repeat=2", "--step-range=step"], "schedule",
                sched=(1, 1, 2, 2))


def test_schedule_open_at_exit():
    # C = 3, repeat forever, active(k) = k%3 >= 1: steps 1,2 and 4; active(5) holds, so the last window stays
    # open through the read after step 4 and the writing of the figures, to the end of the process.
    window_case("OUT-sched-open", "window", 5, 1024,
                ["--schedule=wait=1,warmup=0,active=2,repeat=0", "--step-range=step"], "schedule",
                sched=(1, 0, 2, 0))


def test_profiler_api():
    # cudaProfilerStart before step 2 and 6, cudaProfilerStop after step 4 and 6.
    window_case("OUT-prof", "profiler", 8, 2048, ["--capture-range=cudaProfilerApi"], "profiler", cnt=0)
    window_case("OUT-prof1", "profiler", 8, 2048, ["--capture-range=cudaProfilerApi", "--capture-count=1"],
                "profiler", cnt=1)


def test_env_settings():
    # The settings as environment variables, with no CLI (preload-only mode).
    window_case("OUT-env", "window", 5, 1024, [], "nvtx", cnt=2, preload_only=True,
                extra={"PROFWRAP_CAPTURE_RANGE": "nvtx:step", "PROFWRAP_CAPTURE_COUNT": "2",
                       "NVTX_INJECTION64_PATH": LIB})


def check_refused(args, what):
    r = profwrap(args)
    check_eq(r.rc, 1, "exit status of profwrap %s (%s)\n%s" % (" ".join(args), what, r.describe()))
    check_eq(r.out, "", "profwrap %s's stdout" % " ".join(args))
    lines = r.err.strip("\n").split("\n")
    check(len(lines) == 1 and lines[0].strip() != "", "profwrap %s (%s): not a one-line message on stderr: %r",
          " ".join(args), what, r.err)


def test_on_demand_refused():
    check_refused(["start", "1"], "pid 1, not profiled")
    sleeper = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        check_refused(["start", str(sleeper.pid)], "a sleep that is not profiled")
        check_refused(["stop", str(sleeper.pid)], "a sleep that is not profiled")
        time.sleep(0.1)
        check(sleeper.poll() is None, "the unprofiled sleep was signalled by profwrap start/stop (it ended: %r)",
              sleeper.returncode)
    finally:
        kill_group(sleeper.pid)
        sleeper.wait()
    gone = subprocess.Popen(["true"])
    gone.wait()
    check_refused(["start", str(gone.pid)], "a pid that has ended")


OWN_HANDLER = """
import os, signal, sys, time
d = sys.argv[1]
signal.signal(signal.SIGUSR2, lambda s, f: open(os.path.join(d, "handled"), "w").close())
with open(os.path.join(d, "pid.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.rename(os.path.join(d, "pid.tmp"), os.path.join(d, "pid"))
for _ in range(600):
    if os.path.exists(os.path.join(d, "done")):
        break
    time.sleep(0.05)
"""


def test_on_demand_own_handler():
    # A program with a SIGUSR2 handler of its own (gunicorn, nginx, faulthandler): profwrap start|stop refuse it
    # and never signal it. Before, the CLI saw the signal caught, sent it, reported success and the program's
    # handler ran.
    d = os.path.abspath(tmpdir("own-handler-"))
    proc = subprocess.Popen([PROFWRAP, "-q", "-o", "OUT-own", "--", PYTHON, "-c", OWN_HANDLER, d],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        check(wait_for(lambda: os.path.exists(os.path.join(d, "pid")) or proc.poll() is not None, 15),
              "no pid file in 15 s")
        with open(os.path.join(d, "pid")) as f:
            pid = int(f.read())
        for act in ("start", "stop"):
            check_refused([act, str(pid)], "a program with its own SIGUSR2 handler")
            r = profwrap([act, str(pid)])
            check("handles SIGUSR2 itself" in r.err, "profwrap %s does not say why: %r", act, r.err)
        time.sleep(0.2)
        check(not os.path.exists(os.path.join(d, "handled")), "the program's own SIGUSR2 handler ran")
        open(os.path.join(d, "done"), "w").close()
        _, err = proc.communicate(timeout=60)
        check_eq(proc.returncode, 0, "profwrap's exit status: %s" % err.decode("utf-8", "replace"))
    finally:
        kill_group(proc.pid)


def test_manual():
    p = prog()
    phases = 6
    sizes = [1000 * 3 ** i for i in range(phases)]
    data = write_file(os.path.abspath("data-manual"), sum(sizes) + 4096)
    d = os.path.abspath(tmpdir("manual-"))
    out = "OUT-manual"
    truth_path = os.path.abspath("truth-manual.json")
    args = [PROFWRAP, "-q", "-o", out, "--capture-range=manual", "--", p, "manual", truth_path, d]
    # Before each phase: what the test does. Off at start; on, off, toggled on, toggled off, on (to the end).
    actions = [None, "start", "stop", "usr2", "usr2", "start"]
    counted = [False, True, False, True, False, True]
    with open("manual.stdout", "wb") as so, open("manual.stderr", "wb") as se:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=so, stderr=se,
                                env=clean_env({"NVTX_DATA": data}), start_new_session=True)
    try:
        pid_path = os.path.join(d, "pid")
        check(wait_for(lambda: os.path.exists(pid_path) or proc.poll() is not None, 15), "no pid file in 15 s")
        check(proc.poll() is None, "profwrap --capture-range=manual ended early with %r: %s", proc.returncode,
              open("manual.stderr").read())
        with open(pid_path) as f:
            pid = int(f.read())
        for phase, act in enumerate(actions):
            if act == "usr2":
                os.kill(pid, signal.SIGUSR2)
            elif act is not None:
                r = profwrap([act, str(pid)])
                check_eq(r.rc, 0, "exit status of profwrap %s %d\n%s" % (act, pid, r.describe()))
                check_eq(r.out, "", "profwrap %s's stdout" % act)
            with open(os.path.join(d, "go%d" % phase), "w"):
                pass
            done = os.path.join(d, "done%d" % phase)
            check(wait_for(lambda: os.path.exists(done) or proc.poll() is not None, 15),
                  "the workload did not finish phase %d in 15 s", phase)
            check(os.path.exists(done), "the workload ended in phase %d: %s", phase, open("manual.stderr").read())
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            kill_group(proc.pid)
            proc.wait()
    check_eq(rc, 0, "exit status of profwrap --capture-range=manual (stderr: %s)" % open("manual.stderr").read())
    rep = load_report(out)
    truth = load_json(truth_path)
    check_eq([ph["bytes"] for ph in truth["phases"]], sizes, "the workload's phases")
    want_bytes = sum(ph["bytes"] for ph, c in zip(truth["phases"], counted) if c)
    want_reads = sum(ph["reads"] for ph, c in zip(truth["phases"], counted) if c)
    f = need_file(rep, data)
    ctx = "\ncalls:\n" + describe_calls(rep)
    check_eq((f["reads"], f["read_bytes"], f["opens"]), (want_reads, want_bytes, 0),
             "(reads, read_bytes, opens) of the data file, phases 1, 3 and 5 recorded" + ctx)
    check_eq((count(rep, "io", "read"), nbytes(rep, "io", "read")), (want_reads, want_bytes), "io.read" + ctx)
    check_capture(rep, out, pid, [("on-demand", None, None)] * 3, "manual")


def timer_case(out, n, chunk, sleep_ms, delay, duration):
    p = prog()
    data = write_file(os.path.abspath("data-" + out), n * chunk + 4096)
    truth_path = os.path.abspath("truth-%s.json" % out)
    opts = ["--delay=%g" % delay] + (["--duration=%g" % duration] if duration else [])
    t_launch = time.monotonic_ns()
    r, rep = profile([p, "timed", truth_path, str(n), str(chunk), str(sleep_ms)], out, opts=opts,
                     env=clean_env({"NVTX_DATA": data}))
    truth = load_json(truth_path)
    # The window is [T0 + delay, T0 + delay + duration] for a launch time T0 between the test's launch and
    # the workload's main().
    t_main = truth["t_main"]
    start_lo, start_hi = t_launch + int(delay * 1e9), t_main + int(delay * 1e9)
    end_lo = start_lo + int(duration * 1e9) if duration else float("inf")
    end_hi = start_hi + int(duration * 1e9) if duration else float("inf")
    surely = sum(b for t0, t1, b in truth["reads"] if t0 >= start_hi and t1 <= end_lo)
    maybe = sum(b for t0, t1, b in truth["reads"] if t1 >= start_lo and t0 <= end_hi)
    total = sum(b for _, _, b in truth["reads"])
    what = " ".join(opts)
    note("%s: profwrap started the workload %.1f ms after launch; reads in the window surely %d, maybe %d, "
         "of %d bytes" % (what, (t_main - t_launch) / 1e6, surely, maybe, total))
    check(surely > 0 and (maybe < total or not duration), "the timed run does not straddle its window (%s)", what)
    f = need_file(rep, data)
    check_range(f["read_bytes"], surely, maybe, "read_bytes of the data file (%s)" % what)
    check_range(nbytes(rep, "io", "read"), surely, maybe, "io.read bytes (%s)" % what)
    check(maybe - surely <= total // 2, "the test's bounds are too loose to mean anything (%d..%d of %d)", surely,
          maybe, total)
    wins = check_capture(rep, out, truth["pid"], [("timer", None, None)], what)
    if duration:
        check_range(wins[0]["end_ns"] - wins[0]["start_ns"], int((duration - 0.03) * 1e9),
                    int((duration + 0.03) * 1e9), "the timer window's length (%s)" % what)
    return rep


def test_timer():
    timer_case("OUT-timer", 70, 1000, 10, 0.25, 0.25)
    timer_case("OUT-delay", 40, 1000, 10, 0.2, 0)


def test_fork():
    p = prog()
    data = write_file(os.path.abspath("data-fork"), 130000)
    for out, opts in (("OUT-fork-full", []), ("OUT-fork", ["--capture-range=nvtx:step"])):
        truth_path = os.path.abspath("truth-%s.json" % out)
        r, rep = profile([p, "fork", truth_path], out, opts=opts, env=clean_env({"NVTX_DATA": data}))
        truth = load_json(truth_path)
        procs = processes(rep)
        kids = [x for x in procs if x["pid"] == truth["child_pid"]]
        check_eq(len(kids), 1, "processes[] entries of the forked child\n" + describe_processes(rep))
        check_eq((kids[0]["ppid"], kids[0]["how"], kids[0]["exit_code"]), (truth["pid"], "exited", 0),
                 "the child's (ppid, how, exit_code)")
        f = need_file(rep, data)
        if not opts:
            want = truth["parent_before"] + truth["parent_inside"] + truth["child_inside"] + truth["child_after"]
            check_eq(f["read_bytes"], want, "read_bytes of the data file, no capture control")
            # the child's mark has a text its parent interned before the fork: named in the child's trace too
            check_eq([(m.get("name"), m.get("count")) for m in rep.get("marks") or []], [("fork", 2)],
                     "marks (name, count): the parent's and the forked child's")
            continue
        # The child was forked before the window opened; it shares its parent's window: what it read while the
        # parent's step was open counts, what it read after the parent's pop does not.
        check_eq(f["read_bytes"], truth["parent_inside"] + truth["child_inside"],
                 "read_bytes of the data file: the parent's and the child's reads inside the parent's step")
        check_eq(f["opens"], 0, "opens of the data file (the parent's and the child's, both made before the window)")
        cap = rep.get("capture") or {}
        nvtx_wins = [w for w in cap.get("windows") or [] if w.get("reason") == "nvtx"]
        check_eq([(w.get("pid"), w.get("name"), w.get("occurrence")) for w in nvtx_wins], [(truth["pid"], "step", 0)],
                 "nvtx capture windows (pid, name, occurrence)\nwindows:\n" + describe_windows(cap))


def test():
    tests = [test_nvtx_count, test_nvtx_all, test_nvtx_domain, test_schedule, test_schedule_open_at_exit,
             test_profiler_api, test_env_settings, test_on_demand_refused, test_on_demand_own_handler, test_manual,
             test_timer, test_fork]
    failures = []
    for t in tests:
        t0 = time.monotonic()
        try:
            t()
            note("ok %s (%.1f s)" % (t.__name__, time.monotonic() - t0))
        except Fail as e:
            note("FAIL %s: %s" % (t.__name__, e))
            failures.append(t.__name__)
        except Exception:
            import traceback
            note("FAIL %s: unexpected exception\n%s" % (t.__name__, traceback.format_exc()))
            failures.append(t.__name__)
    if failures:
        raise Fail("%d of %d failed: %s" % (len(failures), len(tests), ", ".join(failures)))


main(test)
