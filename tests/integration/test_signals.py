"""Signal handlers that meet the wrappers.

flood: a SIGALRM every 100 us while the main loop makes 200,000 write()s of 24 bytes to a file; the handler
write()s a record of its own each time. A handler that lands while its thread writes a record goes straight to
libc and is counted (guard_skipped, reported within dropped_events), so: the writes recorded on the file plus
dropped_events equal the main loop's and the handler's writes exactly (the lane, 16 MiB, cannot fill: every
dropped event is a skipped handler call). The file holds every record of both sides, in order. Run until
some handler calls were skipped (at most 3 runs), with stacks off; then once with a stack for every call.

interrupt: each wrapped call that blocks (read of an empty pipe, nanosleep, clock_nanosleep, usleep, sleep,
poll, select, epoll_wait, sem_wait, sem_timedwait, waitpid) interrupted by SIGALRM, with a handler installed
without and then with SA_RESTART: what each call returns, its errno and what it leaves in its out-arguments
are the same with and without profwrap (EINTR without SA_RESTART; a read restarted that completes with the
byte a second SIGALRM wrote), and the report counts every call and its failures, each with errno EINTR."""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

RECORD = 24
FLOOD_WRITES = 200000
FLOOD_INTERVAL_US = 100
FLOOD_OPTS = ["--ring-size=16M"]

# signals.c's call names -> (domain, name) in the report
CALLS = {"read": ("io", "read"), "nanosleep": ("wait", "nanosleep"), "clock_nanosleep": ("wait", "clock_nanosleep"),
         "usleep": ("wait", "usleep"), "sleep": ("wait", "sleep"), "poll": ("wait", "poll"),
         "select": ("wait", "select"), "epoll_wait": ("wait", "epoll_wait"), "sem_wait": ("wait", "sem_wait"),
         "sem_timedwait": ("wait", "sem_timedwait"), "waitpid": ("process", "waitpid")}


def lines_of(who, first, count):
    return [b"%-6s %016d\n" % (who.encode(), i) for i in range(first, first + count)]


def flood_once(prog, tag, opts):
    """One profiled flood run. Returns (main writes, handler writes, recorded, dropped)."""
    path = os.path.abspath("flood-%s.dat" % tag)
    r, rep = profile([prog, "flood", path, str(FLOOD_WRITES), str(FLOOD_INTERVAL_US)], "OUT-flood-" + tag,
                     opts=FLOOD_OPTS + opts)
    words = r.out.split()
    check(len(words) == 6 and words[0] == "main" and words[2] == "handler" and words[4] == "failed",
          "flood %s: the program's output: %r", tag, r.out)
    main, handler, failed = int(words[1]), int(words[3]), int(words[5])
    check_eq((main, failed), (FLOOD_WRITES, 0), "flood %s: (main writes, failed writes)" % tag)
    check(handler > 0, "flood %s: no SIGALRM handler ran", tag)
    with open(path, "rb") as f:
        data = f.read()
    check_eq(len(data), (main + handler) * RECORD, "flood %s: size of %s" % (tag, path))
    recs = [data[i:i + RECORD] for i in range(0, len(data), RECORD)]
    check([x for x in recs if x.startswith(b"main ")] == lines_of("main", 0, main),
          "flood %s: the main loop's records in %s are not all there in order", tag, path)
    check([x for x in recs if x.startswith(b"signal")] == lines_of("signal", 0, handler),
          "flood %s: the handler's records in %s are not all there in order", tag, path)
    f = need_file(rep, path)
    check_eq(f["write_bytes"], f["writes"] * RECORD, "flood %s: write_bytes of %s" % (tag, path))
    check_eq(count(rep, "io", "write"), f["writes"] + 1, "flood %s: io.write (the file's and one to stdout)" % tag)
    check_eq(rep["records_refused"], 0, "flood %s: records_refused" % tag)
    procs = processes(rep)
    check_eq(len(procs), 1, "flood %s: processes\n%s" % (tag, describe_processes(rep)))
    check_eq(procs[0]["dropped"], rep["dropped_events"], "flood %s: the process's dropped" % tag)
    return main, handler, f["writes"], rep["dropped_events"]


def test_flood():
    prog = workload("signals")
    skipped_total = 0
    for run_no in range(1, 4):
        main, handler, recorded, dropped = flood_once(prog, "run%d" % run_no, ["--stacks=off"])
        check_eq(recorded + dropped, main + handler,
                 "flood run %d: writes recorded on the file (%d) + dropped_events (%d) vs the writes made (%d main, "
                 "%d by the handler)" % (run_no, recorded, dropped, main, handler))
        note("flood run %d: %d main + %d handler writes; %d recorded, %d handler calls skipped (guard)" % (
            run_no, main, handler, recorded, dropped))
        skipped_total += dropped
        if dropped:
            break
    if not skipped_total:
        note("flood: no handler landed inside the writing of a record in 3 runs (only recorded calls were checked)")

    # With a stack for every call, handlers also land while the stack is taken.
    main, handler, recorded, dropped = flood_once(prog, "stacks", ["--stack-threshold=0"])
    check_eq(recorded + dropped, main + handler,
             "flood with stacks: writes recorded (%d) + dropped_events (%d) vs the writes made (%d main, %d by the "
             "handler)" % (recorded, dropped, main, handler))
    note("flood with stacks: %d main + %d handler writes; %d recorded, %d skipped" % (
        main, handler, recorded, dropped))

def parse_interrupt(out):
    """{(round, call): {"ret": int, "errno": int, "ticks": int, ...}} from signals interrupt's lines."""
    res = {}
    for line in out.splitlines():
        words = line.split()
        fields = dict(w.split("=", 1) for w in words[2:])
        res[(words[0], words[1])] = {k: (int(v) if v.lstrip("-").isdigit() else v) for k, v in fields.items()}
    return res


def failed(what, r):
    return r["ret"] != 0 if what == "clock_nanosleep" else r["ret"] == -1


def test_interrupt():
    prog = workload("signals")
    base = run([prog, "interrupt"])
    check_eq(base.rc, 0, "signals interrupt without profwrap\n" + base.describe())
    r, rep = profile([prog, "interrupt"], "OUT-interrupt")
    check_eq(r.out, base.out, "what each interrupted call returned, with and without profwrap")
    res = parse_interrupt(r.out)
    check_eq(len(res), 2 * len(CALLS), "lines of signals interrupt:\n%s" % r.out)

    # What the kernel and libc do, so that the comparison above is about interrupted calls.
    check_eq(res[("no-restart", "read")], {"ret": -1, "errno": errno.EINTR, "ticks": 1, "byte": "-"},
             "read of an empty pipe interrupted without SA_RESTART")
    check_eq(res[("restart", "read")], {"ret": 1, "errno": 0, "ticks": 2, "byte": "x"},
             "read of an empty pipe interrupted with SA_RESTART, fed by the second SIGALRM")
    check_eq(res[("restart", "waitpid")]["ret"], 1, "waitpid restarted (SA_RESTART) until the child ended")
    for (rnd, what), x in sorted(res.items()):
        if rnd == "no-restart" and what != "sleep":
            want = {"ret": errno.EINTR, "errno": 0} if what == "clock_nanosleep" else {"ret": -1, "errno": errno.EINTR}
            check_eq({"ret": x["ret"], "errno": x["errno"]}, want, "%s %s interrupted" % (rnd, what))
        check_eq(x.get("rem_in_(0,1s)", 1), 1, "%s %s: the time left it reported" % (rnd, what))
        check_eq(x.get("tv_left_under_1s", 1), 1, "%s %s: the time left it reported" % (rnd, what))

    # The report: every call, its failures, each with EINTR.
    main_pid = processes(rep)[0]["pid"]
    children = len([p for p in processes(rep) if p["ppid"] == main_pid])
    check_eq(children, 2, "children (one for each waitpid)\n" + describe_processes(rep))
    unreaped = sum(1 for (rnd, what), x in res.items() if what == "waitpid" and x["ret"] == -1)
    ctx = "\n" + describe_calls(rep)
    for made_call, (domain, name) in CALLS.items():
        made = [x for (rnd, c), x in res.items() if c == made_call]
        # the children each sleep once (nanosleep); signals.c reaps a child its waitpid left (waitpid)
        extra = children if made_call == "nanosleep" else unreaped if made_call == "waitpid" else 0
        call_entry = call(rep, domain, name)
        check(call_entry is not None, "no %s.%s in the report%s", domain, name, ctx)
        check_eq((call_entry["count"], call_entry["errors"]), (len(made) + extra, sum(failed(made_call, x) for x in made)),
                 "(count, errors) of %s.%s%s" % (domain, name, ctx))
    feeds = sum(1 for (rnd, what), x in res.items() if x["ticks"] >= (1 if rnd == "no-restart" else 2))
    check_eq(count(rep, "io", "write"), len(res) + feeds,
             "io.write: %d lines on stdout and %d bytes fed by the handler%s" % (len(res), feeds, ctx))

    trace = load_json(os.path.join("OUT-interrupt", "rank0.trace.json"))
    errs = {}
    for e in trace.get("traceEvents", []):
        args = e.get("args") or {}
        if e.get("pid") == main_pid and e.get("ph") == "X" and "errno" in args:
            errs.setdefault(e["name"], []).append(args["errno"])
    want = {}
    for (rnd, what), x in res.items():
        if failed(what, x):
            want.setdefault(CALLS[what][1], []).append(errno.EINTR)
    check_eq(errs, want, "errno of the failed calls in rank0.trace.json")
    note("interrupt: %d calls, %d failed with EINTR, the same with and without profwrap" % (
        len(res), sum(len(v) for v in want.values())))


def test():
    test_interrupt()
    test_flood()


main(test)
