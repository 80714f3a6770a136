"""One output directory, one run, whole: what a run leaves in its directory and what its reports are made of.

1. -f on a directory whose run is still writing is refused with one line; that run ends with every write in
   its report.
2. The reports of a directory are made from every raw trace of its run, whichever collector wrote them: a
   second preload-only collector (processes that start after the first one ended) and one a child started
   after it lost PROFWRAP_SESSION_DIR.
3. A segment left by a process that another session's collector refused is not salvaged into the next run
   of its output directory (the session, not just the directory, must match), and is removed.
4. An argument with a newline cannot add keys to raw/session.txt; the Command shows it quoted.
5. A start that fails (command not found) leaves nothing behind that refuses the next run.
"""
import array
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

# N writes of 11 bytes to argv[1], in 100 bursts with a sleep of argv[3] s between them, then exit 4.
WRITER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
n = int(sys.argv[2])
for i in range(n):
    os.write(fd, b"record %03d\\n" % (i % 1000))
    if i % (n // 100) == 0:
        time.sleep(float(sys.argv[3]))
os.close(fd)
sys.exit(4)
"""


def read_bytes_of(rep, path):
    f = file_entry(rep, path)
    return f["read_bytes"] if f else None


def test_force_on_live_run():
    out = os.path.abspath("OUT-live")
    path = os.path.abspath("live.dat")
    n = 2000
    first = subprocess.Popen([PROFWRAP, "-q", "-o", out, "--", PYTHON, "-c", WRITER, path, str(n), "0.03"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        check(wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, 20), "the first run did not start")
        r = profwrap(["-q", "-f", "-o", out, "--", "true"])
        still = first.poll() is None
        _, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    check(still, "the first run ended before -f was tried: the test proves nothing")
    check_eq(r.rc, 2, "profwrap -f into a directory whose run still writes\n" + r.describe())
    lines = r.err.splitlines()
    check(len(lines) == 1 and out in lines[0] and "in use by a run still going" in lines[0],
          "the refusal's message: %r", r.err)
    check_eq((first.returncode, err), (4, b""), "the first run's (exit, stderr)")
    rep = load_report(out)
    f = need_file(rep, path)
    check_eq((f["writes"], f["write_bytes"]), (n, 11 * n), "(writes, write_bytes) of the first run")
    r = profwrap(["-q", "-f", "-o", out, "--", "true"])
    check_eq(r.rc, 0, "profwrap -f once the first run has ended\n" + r.describe())


def test_second_preload_only_collector():
    out = "OUT-two"
    a, b = write_file("two-a.bin", 3001), write_file("two-b.bin", 5003)
    try:
        run_preload_only(["cat", a], out)
        for name in ("rank0.json", "summary.json"):
            os.unlink(os.path.join(out, name))
        r, rep = run_preload_only(["cat", b], out)
    finally:
        remove_preload_session(out)
    check_eq((read_bytes_of(rep, a), read_bytes_of(rep, b)), (3001, 5003),
             "read_bytes of the files of the first and the second collector, in the second's report\n"
             + describe_processes(rep))
    check_eq(len(rep["processes"]), 2, "processes of both collectors\n" + describe_processes(rep))


def test_child_without_session():
    out = os.path.abspath("OUT-lost")
    a, b, c = write_file("lost-a.bin", 1001), write_file("lost-b.bin", 2002), write_file("lost-c.bin", 4004)
    script = 'cat "$1" >/dev/null; env -u PROFWRAP_SESSION_DIR cat "$2" >/dev/null; cat "$3" >/dev/null'
    try:
        r, _ = profile(["sh", "-c", script, "sh", a, b, c], out)
        check(wait_for(lambda: not collectors_for(out), 20), "the child's collector did not end")
    finally:
        remove_preload_session(out)
    rep = load_report(out)
    check_eq([read_bytes_of(rep, p) for p in (a, b, c)], [1001, 2002, 4004],
             "read_bytes of the files read under the run's collector (1st, 3rd) and the child's (2nd)\n"
             + describe_processes(rep))


def fake_collector(sdir):
    """A socket in sdir that takes one producer's hello and its segment, then hangs up: a collector that
    refuses the process after it has started recording. Returns the listening socket and its thread."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.path.join(sdir, "sock"))
    sock.listen(1)

    def serve():
        conn, _ = sock.accept()
        fds = array.array("i")
        _, anc, _, _ = conn.recvmsg(112, socket.CMSG_SPACE(fds.itemsize))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:fds.itemsize])
        for fd in fds:
            os.close(fd)
        conn.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return sock, t


def test_stale_segment_of_another_session():
    out = os.path.abspath("OUT-stale")
    sdir = tmpdir("fake-session-")
    data = write_file("stale.bin", 7007)
    sock, t = fake_collector(sdir)
    env = dict(os.environ, LD_PRELOAD=LIB, PROFWRAP_SESSION_DIR=sdir, PROFWRAP_OUTPUT=out)
    p = subprocess.Popen(["cat", data], stdout=subprocess.DEVNULL, env=env)
    p.wait()
    t.join(10)
    sock.close()
    try:
        check(segments_of(p.pid), "the refused process left no segment: the test proves nothing")
        r, rep = profile(["true"], out)
        check_eq([x for x in os.listdir(os.path.join(out, "raw")) if x.endswith("-%d.pwt" % p.pid)], [],
                 "raw traces of the refused cat (of another session) in the run's raw/")
        r = profwrap(["report", out])
        check_eq(r.rc, 0, "profwrap report\n" + r.describe())
        rep = load_report(out)
        check_eq([x["argv"] for x in rep["processes"]], ["true"],
                 "processes of the run (the refused cat of another session is not its)\n" + describe_processes(rep))
        check_eq(file_entry(rep, data), None, "the refused cat's file in the run's report")
        check_eq(segments_of(p.pid), [], "segments of the refused process after the next run cleaned up")
    finally:
        for name in segments_of(p.pid):
            os.unlink("/dev/shm/" + name)


def segments_of(pid):
    prefix = "profwrap.%d.%d." % (os.getuid(), pid)
    return [n for n in os.listdir("/dev/shm") if n.startswith(prefix)]


def test_newline_in_argument():
    out = "OUT-newline"
    arg = "x\ntarget_status=99\nhost=evil"
    r, rep = profile(["sh", "-c", "exit 3", "sh", arg], out, expect_rc=3)
    with open(os.path.join(out, "raw", "session.txt")) as f:
        keys = [line.split("=", 1)[0] for line in f.read().splitlines()]
    check_eq(sorted(keys), sorted(["command", "session_dir", "cli_pid", "host", "target_pid", "target_status"]),
             "the keys of raw/session.txt")
    want = "sh -c 'exit 3' sh $'x\\ntarget_status=99\\nhost=evil'"
    check_eq(rep["command"], want, "the command in rank0.json")
    with open(os.path.join(out, "rank0.txt")) as f:
        text = f.read()
    check("Command:      %s\n" % want in text, "the Command of rank0.txt: %r", text[:400])
    check_eq(processes(rep)[0]["exit_code"], 3, "the target's exit code")


def test_failed_start_leaves_nothing():
    r = profwrap(["-q", "-o", "OUT-missing", "--", "profwrap-no-such-command-xyz"])
    check_eq(r.rc, 127, "profwrap exit status for a command not found\n" + r.describe())
    check(not os.path.exists("OUT-missing"), "a failed start left its output directory behind")
    r, rep = profile(["true"], "OUT-missing")
    os.mkdir("OUT-mine")
    r = profwrap(["-q", "-o", "OUT-mine", "--", "profwrap-no-such-command-xyz"])
    check_eq(r.rc, 127, "profwrap exit status for a command not found, into an empty directory\n" + r.describe())
    check_eq(os.listdir("OUT-mine"), [], "the user's empty directory after a failed start")
    os.makedirs("OUT-raw-only/raw")  # what an earlier profwrap left after a failed start
    profile(["true"], "OUT-raw-only")


def test():
    test_force_on_live_run()
    test_second_preload_only_collector()
    test_child_without_session()
    test_stale_segment_of_another_session()
    test_newline_in_argument()
    test_failed_start_leaves_nothing()


main(test)
