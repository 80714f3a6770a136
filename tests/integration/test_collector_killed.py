"""The collector SIGKILLed mid-run must not harm the target: same stdout, same exit status, and no more than
a second slower than without profwrap; profwrap still exits with the target's status. Nothing committed is
lost: profwrap salvages what the target recorded after the collector died from its shared memory (all 2000
writes reach the report, the salvaged part is stated), and no segment is left in /dev/shm."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

# About 2 s of small writes and sleeps, then a forked child (started after the collector is gone), then a
# checksum of what was written, read back. Exits 5.
TARGET = """
import os, sys, time, zlib
path = sys.argv[1]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
crc = 0
for i in range(2000):
    data = b"line %d\\n" % i
    os.write(fd, data)
    crc = zlib.crc32(data, crc)
    if i % 10 == 9:
        time.sleep(0.01)
os.close(fd)
pid = os.fork()
if pid == 0:
    with open(path + ".child", "w") as f:
        f.write("child\\n")
    os._exit(3)
_, st = os.waitpid(pid, 0)
with open(path, "rb") as f:
    back = zlib.crc32(f.read())
print("crc %08x back %08x child %d" % (crc, back, os.waitstatus_to_exitcode(st)))
sys.exit(5)
"""
EXPECTED_RC = 5


def find_collector(parent, timeout):
    """The profwrap-collector child of parent, or None."""
    def look():
        for pid in children_of(parent):
            if os.path.basename(proc_exe(pid)) == "profwrap-collector":
                return pid
        return None
    return wait_for(look, timeout, 0.01)


def test():
    data = tmpdir("data-")
    base = run([PYTHON, "-c", TARGET, os.path.join(data, "baseline.dat")], timeout=60)
    check_eq(base.rc, EXPECTED_RC, "exit status without profwrap\n" + base.describe())
    check(base.out.startswith("crc "), "baseline output: %r", base.out)
    note("baseline: %.2f s, %r" % (base.seconds, base.out))

    path = os.path.join(data, "profiled.dat")
    args = [PROFWRAP, "-q", "-o", "OUT", "--", PYTHON, "-c", TARGET, path]
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    collector = None
    try:
        collector = find_collector(p.pid, 10)
        check(collector is not None, "no profwrap-collector child of profwrap (pid %d) found", p.pid)
        # Let the target get going (its file appears once it runs), then kill the collector mid-run.
        check(wait_for(lambda: os.path.exists(path), 10), "the target never started (no %s)" % path)
        time.sleep(0.5)
        check(p.poll() is None, "profwrap ended before the collector could be killed")
        os.kill(collector, signal.SIGKILL)
        killed_at = time.monotonic() - t0
        out, err = p.communicate(timeout=60)
    except BaseException:
        kill_group(p.pid)
        if collector:
            try:
                os.kill(collector, signal.SIGKILL)
            except OSError:
                pass
        p.communicate()
        raise
    seconds = time.monotonic() - t0
    try:
        check_run(base, data, path, p.returncode, out, err, seconds, killed_at)
    finally:
        leftovers = remove_leftover_segments(session_target_pid("OUT", required=False))
    check_eq(leftovers, [], "shared memory left in /dev/shm by the target whose collector was killed")


def check_run(base, data, path, rc, out, err, seconds, killed_at):
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    note("profiled: %.2f s (collector killed at %.2f s), stdout %r\nstderr: %s" % (seconds, killed_at, out, err))
    check_eq(rc, EXPECTED_RC, "profwrap exit status with the collector killed\nstderr: " + err)
    # The baseline's checksum line, with the same file contents.
    check_eq(out, base.out, "target stdout with the collector killed")
    check(seconds <= base.seconds + 1.0, "the profiled run took %.2f s, the baseline %.2f s: more than 1 s slower",
          seconds, base.seconds)
    with open(path, "rb") as f, open(os.path.join(data, "baseline.dat"), "rb") as g:
        check(f.read() == g.read(), "the profiled target's file differs from the baseline's")
    check(not any(line.startswith("Traceback") for line in err.splitlines()), "a traceback on stderr: %s", err)

    lines = err.splitlines()
    check_eq(len(lines), 1, "lines on stderr: %r" % err)
    m = re.match(r"profwrap: the collector died \(Killed\); salvaged (\d+) records of 1 processes from shared "
                 r"memory \(0 dropped while none was collecting\)$", lines[0])
    check(m, "the salvage message: %r", lines[0])
    salvaged = int(m.group(1))

    target_pid = session_target_pid("OUT")
    rep = load_report("OUT")
    procs = processes(rep)
    check_eq([p["pid"] for p in procs], [target_pid], "pids in the report\n" + describe_processes(rep))
    check_eq((procs[0]["how"], procs[0]["exit_code"]), ("exited", EXPECTED_RC),
             "(how, exit_code) of the target whose collector died")
    # The message counts every record salvaged; the report counts the calls among them.
    got = procs[0]["salvaged"]
    check(got and 0 < got["events"] <= salvaged, "the salvaged part in the report: %r, the message said %d records",
          got, salvaged)
    check(got["events"] < procs[0]["events"], "salvaged %d of %d events: the collector wrote none before it died",
          got["events"], procs[0]["events"])
    f = need_file(rep, path)
    check_eq((f["writes"], f["write_bytes"]), (2000, os.path.getsize(path)),
             "(writes, write_bytes) of the target's file: every committed record")
    check_eq(rep["dropped_events"], 0, "dropped_events")
    with open(os.path.join("OUT", "rank0.txt")) as t:
        text = t.read()
    check("WARNING: the collector died while pid %d ran: `profwrap salvage` recovered its last %d events"
          % (target_pid, got["events"]) in text, "rank0.txt does not state the salvage:\n%s", text)


def session_target_pid(out, required=True):
    try:
        with open(os.path.join(out, "raw", "session.txt")) as f:
            for line in f:
                if line.startswith("target_pid="):
                    return int(line.split("=", 1)[1])
    except OSError:
        pass
    if required:
        raise Fail("no target_pid in %s/raw/session.txt" % out)
    return None


def remove_leftover_segments(pid):
    """Salvage removes the segments it wrote out; should one be left, it is removed (and reported) so runs of
    this test do not pile up."""
    if not pid:
        return []
    prefix = "profwrap.%d.%d." % (os.getuid(), pid)
    try:
        names = [n for n in os.listdir("/dev/shm") if n.startswith(prefix)]
    except OSError:
        return []
    if names:
        note("removing leftover shared memory: %s" % names)
    for n in names:
        try:
            os.unlink(os.path.join("/dev/shm", n))
        except OSError:
            pass
    return names


main(test)
