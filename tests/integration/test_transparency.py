"""Never harm the target: a script that makes wrapped calls which succeed and fail in known ways (errno
values, partial reads, pipes, dup, vectored and positioned I/O, mmap, waits, sleeps, fork/exec) prints
the same under profwrap as without it, byte for byte, and exits the same; the failures are counted as
errors in the report."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SCRIPT = r'''
import errno, mmap, os, select, signal, sys, time
d = sys.argv[1]
out = []
def err(f, *a):
    try:
        r = f(*a)
        return "ok %r" % (r,)
    except OSError as e:
        return "errno %s" % errno.errorcode.get(e.errno, e.errno)
out.append(err(os.open, os.path.join(d, "missing", "x"), os.O_RDONLY))
out.append(err(os.open, d, os.O_WRONLY))
out.append(err(os.read, 9999, 10))
out.append(err(os.write, 9999, b"x"))
path = os.path.join(d, "f.bin")
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
out.append(err(os.write, fd, b"0123456789" * 100))
out.append(err(os.pwrite, fd, b"ABC", 5))
out.append(err(os.writev, fd, [b"xy", b"", b"zzz"]))
out.append(err(os.lseek, fd, 0, os.SEEK_SET))
out.append(err(os.pread, fd, 8, 3))
b1, b2 = bytearray(4), bytearray(6)
out.append(err(os.readv, fd, [b1, b2]) + " " + repr(bytes(b1 + b2)))
out.append("read %d" % len(os.read(fd, 100000)))
out.append(err(os.read, fd, 10))
out.append(err(os.fsync, fd))
m = mmap.mmap(fd, 0)
out.append(repr(m[:12]))
m.close()
fd2 = os.dup(fd)
os.dup2(fd, 50)
out.append(err(os.lseek, 50, 0, os.SEEK_END))
out.append(err(os.close, fd2))
out.append(err(os.close, fd2))
os.close(50)
os.close(fd)
r, w = os.pipe()
out.append(err(os.lseek, r, 0, os.SEEK_SET))
os.write(w, b"hello")
out.append(repr(select.select([r], [], [], 1.0)[0] == [r]))
p = select.poll(); p.register(r, select.POLLIN); out.append(repr(len(p.poll(1000))))
out.append(err(os.read, r, 100))
os.close(w)
out.append(err(os.read, r, 100))
os.close(r)
out.append(err(os.waitpid, -1, 0))
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
r, w = os.pipe(); os.close(r)
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
out.append(err(os.write, w, b"x"))
os.close(w)
time.sleep(0)
pid = os.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", "exit 9"])
out.append(repr(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGUSR1)
    os._exit(0)
out.append(repr(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))
with open(path, "rb") as f:
    out.append(repr(f.readline()[:20]))
sys.stdout.write("\n".join(out) + "\n")
sys.exit(3)
'''


def test():
    base_dir = tmpdir("base-")
    prof_dir = tmpdir("prof-")
    base = run([PYTHON, "-c", SCRIPT, base_dir])
    check_eq(base.rc, 3, "the script's exit status without profwrap\n" + base.describe())
    r, rep = profile([PYTHON, "-c", SCRIPT, prof_dir], "OUT", expect_rc=3)
    check_eq(r.out.splitlines(), base.out.splitlines(), "the script's output under profwrap vs without")
    check_eq(r.err, base.err, "the script's stderr under profwrap vs without")
    with open(os.path.join(base_dir, "f.bin"), "rb") as a, open(os.path.join(prof_dir, "f.bin"), "rb") as b:
        check(a.read() == b.read(), "the file the script wrote differs under profwrap")
    check(call(rep, "io", "open")["errors"] >= 2, "io.open errors: %r", call(rep, "io", "open"))
    check(call(rep, "io", "read")["errors"] >= 1, "io.read errors: %r", call(rep, "io", "read"))
    check(call(rep, "io", "write")["errors"] >= 2, "io.write errors: %r", call(rep, "io", "write"))
    f = need_file(rep, os.path.join(prof_dir, "f.bin"))
    check_eq(f["opens"], 2, "opens of f.bin")
    # Written: 1000 + pwrite 3 + writev 5, a 1005-byte file. Read: pread 8, readv 10, then the rest (995),
    # then 0 at the end; readline's buffered reads: the whole file, then 0.
    check_eq(f["write_bytes"], 1008, "write_bytes of f.bin")
    check_eq(f["read_bytes"], 8 + 10 + 995 + 1005, "read_bytes of f.bin")
    kids = [p for p in rep["processes"] if p["ppid"] == rep["processes"][0]["pid"] and p["how"] != "exec"]
    ends = sorted((p["argv"].split(" ")[0], p["how"], p["exit_code"], p["signal"]) for p in kids)
    check_eq(ends, sorted([("sh", "exited", 9, 0), (PYTHON, "vanished", None, 10)]),
             "children: (program, how, exit_code, signal)\n" + describe_processes(rep))


main(test)
