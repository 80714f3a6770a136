"""A target that dies by a fault loses nothing it committed, and the report says how each process ended.

The faults workload writes N records of 24 bytes (one write() each) to a file of its own and then: makes an
invalid write (SIGSEGV), aborts (SIGABRT), is SIGKILLed after allocating memory (the OOM killer's way), runs
out of memory under RLIMIT_AS and exits 3, forks a child that writes M records to FILE.child and _exits 7 or
dies by SIGSEGV (the parent exits 0), or execs /bin/true or a statically linked helper (which profwrap cannot
follow). Each run under profwrap must show, from rank0.json: exactly N (M) writes of 24 bytes on each file,
the file's bytes as written, no dropped or refused records, the processes (pid, parent, image, how,
exit_code, signal, exec_path) exactly, and profwrap's exit status (128+N for signal N); the program's own
output and exit status are those of a run without profwrap. Last, a target SIGKILLed from outside in the
middle of its writes: the report has every write the file has, or one fewer (the call in flight when the
signal came had not been recorded)."""
import os
import resource
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

N = 2000
M = 300
RECORD = 24

STATIC_HELPER_C = r"""
#include <fcntl.h>
#include <unistd.h>

/* Writes 10 lines to argv[1] and exits 5: a statically linked image that no preload can enter. */
int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0600);
	for (int i = 0; i < 10; i++)
		if (write(fd, "static\n", 7) != 7)
			return 2;
	return 5;
}
"""


def records(who, count):
    return b"".join(b"%-6s %016d\n" % (who.encode(), i) for i in range(count))


def check_file(rep, path, who, count, what):
    """The file holds exactly count records of who, and the report counts exactly count writes of them."""
    with open(path, "rb") as f:
        data = f.read()
    check_eq(len(data), count * RECORD, "%s: size of %s" % (what, path))
    check(data == records(who, count), "%s: %s does not hold the records written" % (what, path))
    f = need_file(rep, path)
    check_eq((f["opens"], f["writes"], f["write_bytes"]), (1, count, count * RECORD),
             "%s: (opens, writes, write_bytes) of %s" % (what, path))


def check_processes(rep, expected, what):
    """expected: one (role, image, how, exit_code, signal, exec_path) per process image, in start order; role is
    "top" (the command's process: every image of it has the first one's pid and parent) or "child" (forked
    by the top process)."""
    ctx = "\n" + describe_processes(rep)
    procs = processes(rep)
    check_eq(len(procs), len(expected), "%s: number of processes%s" % (what, ctx))
    top = procs[0]
    for p, (role, image, how, code, sig, exec_path) in zip(procs, expected):
        check_eq((p["image"], p["how"], p["exit_code"], p["signal"], p["exec_path"]),
                 (image, how, code, sig, exec_path), "%s: (image, how, exit_code, signal, exec_path) of a %s "
                 "process%s" % (what, role, ctx))
        if role == "child":
            check(p["pid"] != top["pid"] and p["ppid"] == top["pid"],
                  "%s: the child's parent is not the top process%s", what, ctx)
        else:
            check_eq((p["pid"], p["ppid"]), (top["pid"], top["ppid"]), "%s: (pid, ppid) of image %d%s" % (
                what, image, ctx))
        check_eq(p["dropped"], 0, "%s: dropped records of pid %d" % (what, p["pid"]))


def run_case(name, mode, extra, rc, writers, expected, data):
    """Runs `faults MODE DATA/NAME.dat N EXTRA...` without and then with profwrap, and checks the profiled run;
    writers: (who, count) for the top process ("parent", its file NAME.dat) and a child ("child",
    NAME.dat.child). rc is profwrap's exit status (128+N for signal N that dumps core, -N for one that
    does not: profwrap ends by it too)."""
    prog = workload("faults")
    path = os.path.join(data, name + ".dat")
    cmd = [prog, mode, path, str(N)] + list(extra)
    base = run(cmd)
    check_eq(base.rc, 128 - rc if rc > 128 else rc, "%s: exit status without profwrap\n%s" % (name, base.describe()))
    r, rep = profile(cmd, "OUT-" + name, expect_rc=rc)
    check_eq(r.out, base.out, "%s: the program's output under profwrap" % name)
    for who, n in writers:
        check_file(rep, path if who == "parent" else path + ".child", who, n, name)
    lines = len(r.out.splitlines())
    check_eq(count(rep, "io", "write"), sum(n for _, n in writers) + lines,
             "%s: io.write count (the records and %d line(s) on stdout)\n%s" % (name, lines, describe_calls(rep)))
    check_eq((rep["dropped_events"], rep["records_refused"]), (0, 0), "%s: (dropped_events, records_refused)" % name)
    check_processes(rep, expected, name)
    note("%s: profwrap exit %d, %d process image(s) as expected" % (name, r.rc, len(expected)))
    return rep


def static_helper():
    """The statically linked helper, or None (with the reason printed) where static linking is unavailable."""
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        note("SKIP exec of a static image: no C compiler")
        return None
    try:
        return build_c("static_helper", STATIC_HELPER_C, cflags=["-O2"], ldflags=["-static"],
                       directory=tmpdir("static-"))
    except Fail as e:
        note("SKIP exec of a static image: static linking is unavailable here (%s)" % short(str(e), 300))
        return None


def test_killed_mid_write(data):
    """SIGKILL from outside while the target writes: no record is lost but the one whose call was in flight."""
    prog = workload("faults")
    path = os.path.join(data, "until-killed.dat")
    args = [PROFWRAP, "-q", "-o", "OUT-until-killed", "--", prog, "until-killed", path, "0"]
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        target = wait_for(lambda: [c for c in children_of(p.pid) if proc_exe(c) == prog], 10, 0.01)
        check(target, "no faults child of profwrap (pid %d) found", p.pid)
        grown = wait_for(lambda: os.path.exists(path) and os.path.getsize(path) >= 5000 * RECORD, 20, 0.01)
        check(grown, "the target did not write 5000 records within 20 s")
        os.kill(target[0], signal.SIGKILL)
        out, err = p.communicate(timeout=30)
    except BaseException:
        kill_group(p.pid)
        p.communicate()
        raise
    check_eq(p.returncode, -signal.SIGKILL, "profwrap exit status for a target killed from outside\n" +
             err.decode("utf-8", "replace"))
    rep = load_report("OUT-until-killed")
    with open(path, "rb") as f:
        data_bytes = f.read()
    check_eq(len(data_bytes) % RECORD, 0, "size of %s modulo the record size" % path)
    written = len(data_bytes) // RECORD
    check(data_bytes == records("parent", written), "%s does not hold the records written", path)
    f = need_file(rep, path)
    check(f["writes"] in (written, written - 1), "writes of %s: expected %d (or %d for the call in flight), got %d",
          path, written, written - 1, f["writes"])
    check_eq(f["write_bytes"], f["writes"] * RECORD, "write_bytes of %s" % path)
    check_eq((rep["dropped_events"], rep["records_refused"]), (0, 0), "killed from outside: (dropped, refused)")
    check_processes(rep, [("top", 0, "vanished", None, signal.SIGKILL, None)], "killed from outside")
    note("killed from outside after %d writes; the report has %d" % (written, f["writes"]))


def test():
    # No core files (a core dump of each crash would only cost time); the wait status still gives the signal.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    data = tmpdir("data-")
    parent = [("parent", N)]
    both = [("parent", N), ("child", M)]
    run_case("segv", "segv", [], 128 + signal.SIGSEGV, parent, [("top", 0, "vanished", None, signal.SIGSEGV, None)],
             data)
    run_case("abort", "abort", [], 128 + signal.SIGABRT, parent,
             [("top", 0, "vanished", None, signal.SIGABRT, None)], data)
    run_case("oom", "oom", [], -signal.SIGKILL, parent, [("top", 0, "vanished", None, signal.SIGKILL, None)],
             data)
    run_case("nomem", "nomem", [], 3, parent, [("top", 0, "exited", 3, 0, None)], data)
    run_case("fork-exit", "fork-exit", [str(M)], 0, both,
             [("top", 0, "exited", 0, 0, None), ("child", 0, "exited", 7, 0, None)], data)
    run_case("child-segv", "child-segv", [str(M)], 0, both,
             [("top", 0, "exited", 0, 0, None), ("child", 0, "vanished", None, signal.SIGSEGV, None)], data)
    run_case("exec-plain", "exec", ["/bin/true"], 0, parent,
             [("top", 0, "exec", None, 0, "/bin/true"), ("top", 1, "exited", 0, 0, None)], data)

    helper = static_helper()
    if helper:
        out = os.path.join(data, "static.out")
        # The static image is not followed: the faults image ends by exec, and the exit status the CLI saw
        # (the helper's 5) is given to it, the last image of that pid the report knows.
        rep = run_case("exec-static", "exec", [helper, out], 5, parent, [("top", 0, "exec", 5, 0, helper)], data)
        with open(out, "rb") as f:
            check_eq(f.read(), b"static\n" * 10, "what the static helper wrote")
        check(file_entry(rep, out) is None, "the static helper's writes were recorded: %r", file_entry(rep, out))

    test_killed_mid_write(data)


main(test)
