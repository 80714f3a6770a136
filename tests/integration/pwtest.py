"""Helpers for profwrap's integration tests (stdlib only).

Each test is a standalone script: it runs the real binaries, reads the reports and exits 0 (pass), 1 (fail)
or 77 (skip). Figures are compared exactly where the truth is known; time-based ones within ranges.

Environment (set by tests/integration/run.sh):
  PROFWRAP_BIN_DIR    directory holding profwrap, profwrap-collector and libprofwrap.so
  PROFWRAP_WORKLOADS  directory of the built C workloads (iomix, ...)
Both default to the build tree around this file.
"""
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

BIN_DIR = os.environ.get("PROFWRAP_BIN_DIR") or REPO
WORKLOADS = os.environ.get("PROFWRAP_WORKLOADS") or os.path.join(REPO, "build", "workloads")
PROFWRAP = os.path.join(BIN_DIR, "profwrap")
COLLECTOR = os.path.join(BIN_DIR, "profwrap-collector")
LIB = os.path.join(BIN_DIR, "libprofwrap.so")

# The interpreter the targets run: a real binary, not a version manager's shim script (a pyenv shim is a
# bash script that would show up as processes of its own and spawn many more). PROFWRAP_TEST_PYTHON picks
# another (to run the tests against each CPython version).
if os.environ.get("PROFWRAP_TEST_PYTHON"):
    PYTHON = os.environ["PROFWRAP_TEST_PYTHON"]
elif os.access("/usr/bin/python3", os.X_OK):
    PYTHON = "/usr/bin/python3"
else:
    PYTHON = os.path.realpath(sys.executable)

DEFAULT_TIMEOUT = 60


class Fail(Exception):
    """A failed check; its message says what was expected and what was found."""


class Skip(Exception):
    """The test cannot run here (a tool is missing); exits 77."""


def check(cond, msg, *args):
    """Raises Fail with msg (formatted with args) unless cond holds."""
    if not cond:
        raise Fail(msg % args if args else msg)


def check_eq(actual, expected, what):
    """Raises Fail unless actual == expected; the message names what was compared."""
    if actual != expected:
        raise Fail("%s: expected %r, got %r" % (what, expected, actual))


def check_range(actual, lo, hi, what):
    """Raises Fail unless lo <= actual <= hi (for time-based figures)."""
    if not (lo <= actual <= hi):
        raise Fail("%s: expected within [%r, %r], got %r" % (what, lo, hi, actual))


def skip(msg):
    """Skips the test: prints why and exits 77."""
    print("SKIP: " + msg)
    sys.stdout.flush()
    sys.exit(77)


def note(msg):
    print(msg)
    sys.stdout.flush()


class Result:
    """What a finished command did: rc (exit status, -N for signal N as subprocess reports it), out and err
    (text), out_bytes and err_bytes (exactly what it wrote), and seconds (wall time)."""

    def __init__(self, args, rc, out_bytes, err_bytes, seconds):
        self.args = args
        self.rc = rc
        self.out_bytes = out_bytes
        self.err_bytes = err_bytes
        self.out = out_bytes.decode("utf-8", "replace")
        self.err = err_bytes.decode("utf-8", "replace")
        self.seconds = seconds

    def describe(self):
        return "command %r exited %r\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            self.args, self.rc, self.out[-4000:], self.err[-4000:])


def run(args, timeout=DEFAULT_TIMEOUT, env=None, cwd=None, stdin=subprocess.DEVNULL, extra_env=None):
    """Runs args to completion (stdin from /dev/null, never a terminal) and returns a Result. On timeout the
    command's whole process group is killed and the test fails."""
    if extra_env:
        env = dict(env if env is not None else os.environ)
        env.update(extra_env)
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p.pid)
        out, err = p.communicate()
        raise Fail("timed out after %ss: %r\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            timeout, args, out.decode("utf-8", "replace")[-2000:], err.decode("utf-8", "replace")[-2000:]))
    return Result(args, p.returncode, out, err, time.monotonic() - t0)


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def profwrap(args, **kw):
    """Runs the profwrap binary with args (a list) and returns a Result."""
    return run([PROFWRAP] + list(args), **kw)


def profile(cmd, out, opts=(), quiet=True, expect_rc=0, **kw):
    """Runs `profwrap [-q] -o OUT OPTS -- CMD` and returns (Result, rank0 report). expect_rc None: any exit
    status; else profwrap's exit status must equal it."""
    args = (["-q"] if quiet else []) + ["-o", out] + list(opts) + ["--"] + list(cmd)
    r = profwrap(args, **kw)
    if expect_rc is not None and r.rc != expect_rc:
        raise Fail("profwrap exit status: expected %r, got %r\n%s" % (expect_rc, r.rc, r.describe()))
    path = os.path.join(out, "rank0.json")
    if not os.path.exists(path):
        raise Fail("no %s after the run\n%s" % (path, r.describe()))
    return r, load_report(out)


def load_json(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
        raise Fail("cannot load %s: %s" % (path, e))


def load_report(out, rank=0):
    """OUT/rank<R>.json, parsed; checks its format marker."""
    rep = load_json(os.path.join(out, "rank%d.json" % rank))
    check_eq(rep.get("format"), "profwrap-report", "rank%d.json format" % rank)
    return rep


def call(rep, domain, name):
    """The calls[] entry for (domain, name), or None when the report has none."""
    for c in rep.get("calls", []):
        if c.get("domain") == domain and c.get("name") == name:
            return c
    return None


def count(rep, domain, name):
    """How many (domain, name) calls the report counts (0 when it lists none)."""
    c = call(rep, domain, name)
    return c["count"] if c else 0


def nbytes(rep, domain, name):
    c = call(rep, domain, name)
    return c["bytes"] if c else 0


def total_calls(rep):
    return sum(c["count"] for c in rep.get("calls", []))


def file_entry(rep, path):
    """The files[] entry whose path is exactly path, or None."""
    for f in rep.get("files", []):
        if f.get("path") == path:
            return f
    return None


def need_file(rep, path):
    f = file_entry(rep, path)
    if f is None:
        raise Fail("no files[] entry for %r; files are: %r" % (path, [x.get("path") for x in rep.get("files", [])]))
    return f


def processes(rep, argv_sub=None):
    """processes[] whose argv contains argv_sub (all of them when None)."""
    return [p for p in rep.get("processes", []) if argv_sub is None or argv_sub in (p.get("argv") or "")]


def short(text, limit=100):
    text = text or ""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def describe_processes(rep):
    return "\n".join("  pid %s ppid %s image %s how %s exit %s signal %s exec %s argv %r" % (
        p.get("pid"), p.get("ppid"), p.get("image"), p.get("how"), p.get("exit_code"), p.get("signal"),
        p.get("exec_path"), short(p.get("argv"))) for p in rep.get("processes", []))


def describe_calls(rep):
    return "\n".join("  %s %s count %s bytes %s" % (c["domain"], c["name"], c["count"], c["bytes"])
                     for c in rep.get("calls", []))


def workload(name):
    """Path of a built C workload; skips the test when it was not built."""
    path = os.path.join(WORKLOADS, name)
    if not os.access(path, os.X_OK):
        skip("workload %s not built (PROFWRAP_WORKLOADS=%s)" % (name, WORKLOADS))
    return path


def write_file(path, size, seed=0):
    """Writes size deterministic bytes to path (outside any profiler) and returns the absolute path."""
    block = bytes((i * 131 + seed) & 0xFF for i in range(65536))
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
    return os.path.abspath(path)


def wait_for(pred, timeout, step=0.05):
    """Polls pred() until it is true or timeout seconds pass; returns its last value."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def children_of(ppid):
    """Pids whose parent is ppid, from /proc/*/stat."""
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        # comm may hold spaces and parentheses: the fields after it start past the last ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == ppid:
            kids.append(int(d))
    return kids


def proc_exe(pid):
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return ""


def tmpdir(prefix="pwtest-"):
    """A fresh directory under the test's working directory (run.sh gives each test its own)."""
    return tempfile.mkdtemp(prefix=prefix, dir=os.getcwd())


def main(test):
    """Runs test() and exits 0 (it returned), 1 (a check failed or it raised) or 77 (it skipped)."""
    for path, what in ((PROFWRAP, "profwrap"), (COLLECTOR, "profwrap-collector"), (LIB, "libprofwrap.so")):
        if not os.path.exists(path):
            print("FAIL: %s not found at %s (PROFWRAP_BIN_DIR=%s)" % (what, path, BIN_DIR))
            sys.exit(1)
    name = os.path.basename(sys.argv[0])
    try:
        test()
    except Skip as e:
        skip(str(e))
    except Fail as e:
        print("FAIL %s: %s" % (name, e))
        sys.stdout.flush()
        sys.exit(1)
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc(file=sys.stdout)
        print("FAIL %s: unexpected exception" % name)
        sys.stdout.flush()
        sys.exit(1)
    print("PASS %s" % name)
    sys.stdout.flush()
    sys.exit(0)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def session_base():
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and xdg.startswith("/"):
        return os.path.join(xdg, "profwrap")
    tmp = "/tmp/profwrap-%d" % os.getuid()
    try:
        st = os.lstat(tmp)
    except OSError:
        return tmp
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
        return tmp
    return os.path.join(os.environ["HOME"], ".profwrap") if os.environ.get("HOME", "").startswith("/") else tmp


def preload_session_dir(out, host=None):
    """The session directory preload-only mode uses for output directory out on host (this one by default):
    common/pw_session.c hashes the absolute path, a newline and the host name."""
    path = os.path.abspath(out).rstrip("/") or "/"
    key = path.encode() + b"\n" + (host or socket.gethostname()).encode()
    return os.path.join(session_base(), "o-%016x" % fnv1a64(key))


def collectors_for(out):
    """Pids of profwrap-collector processes writing to output directory out."""
    want = os.path.abspath(out).encode()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"profwrap-collector" and want in argv:
            pids.append(int(d))
    return pids


def run_preload_only(cmd, out, timeout=60, wait=10, extra_env=None):
    """Runs cmd with LD_PRELOAD=libprofwrap.so and PROFWRAP_OUTPUT=out (no CLI), then waits up to wait seconds
    for the detached collector to write the reports and end. Returns (Result, rank0 report)."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PROFWRAP_"):
            del env[k]
    env["LD_PRELOAD"] = LIB
    env["PROFWRAP_OUTPUT"] = os.path.abspath(out)
    if extra_env:
        env.update(extra_env)
    r = run(cmd, timeout=timeout, env=env)
    done = wait_for(lambda: os.path.exists(os.path.join(out, "summary.json")) and not collectors_for(out), wait, 0.1)
    if not done:
        raise Fail("preload-only: no %s/summary.json within %ss of the end of the run (collectors still running: %r;"
                   " files: %r)\n%s" % (out, wait, collectors_for(out),
                                        os.listdir(out) if os.path.isdir(out) else None, r.describe()))
    return r, load_report(out)


def remove_preload_session(out, host=None):
    """Removes what preload-only mode leaves in its session directory for out on host, if anything."""
    sdir = preload_session_dir(out, host)
    for leaf in ("lock", "status", "sock", "start-failed", "alive", "unrecorded"):
        try:
            os.unlink(os.path.join(sdir, leaf))
        except OSError:
            pass
    try:
        os.rmdir(sdir)
    except OSError:
        pass


def in_shm(mib, args, timeout=180):
    """Runs args in a mount namespace of its own with a tmpfs of mib MiB on /dev/shm, as in a container, and
    returns the Result. need_shm_namespace() first skips the test where none can be made."""
    mount = 'mount -t tmpfs -o size=%dm profwrap-test /dev/shm && exec "$@"' % mib
    return run(["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh"] + list(args),
               timeout=timeout)


def need_shm_namespace():
    """Skips the test where in_shm() cannot work (no unshare, no CAP_SYS_ADMIN)."""
    if not shutil.which("unshare"):
        skip("no unshare: cannot give the test a /dev/shm of its own")
    probe = in_shm(16, ["true"])
    if probe.rc != 0:
        skip("cannot mount a tmpfs on /dev/shm in a mount namespace (%s)" % probe.err.strip()[:200])


def find_mpirun():
    """The mpirun command the MPI tests run: PROFWRAP_MPIRUN (split on spaces), else `mpirun --oversubscribe`."""
    mpirun = os.environ.get("PROFWRAP_MPIRUN", "").split()
    if not mpirun:
        found = shutil.which("mpirun")
        if not found:
            raise Fail("mpirun not found: `make deps` (scripts/install-deps.sh) installs openmpi-bin")
        mpirun = [found, "--oversubscribe"]
    return mpirun


def build_c(name, source, cflags=(), ldflags=(), shared=False, directory=None):
    """Compiles source (C text) into directory/name with the system compiler and returns the path; skips the
    test when there is no compiler."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc or not shutil.which(cc.split()[0]):
        skip("no C compiler")
    directory = os.path.abspath(directory or os.getcwd())
    os.makedirs(directory, exist_ok=True)
    src = os.path.join(directory, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    out = os.path.join(directory, name)
    args = cc.split() + list(cflags) + (["-shared", "-fPIC"] if shared else []) + ["-o", out, src] + list(ldflags)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if p.returncode != 0:
        raise Fail("cannot build %s: %s\n%s" % (name, " ".join(args), p.stdout.decode("utf-8", "replace")))
    return out


# ---- GPU libraries (the fakes of tests/fakes) ----

FAKES = os.environ.get("PROFWRAP_FAKES") or os.path.join(REPO, "build", "fakes")
CUDA_HOME = os.environ.get("CUDA_HOME") or "/usr/local/cuda"


def fakes_dir():
    """The directory of the fake CUDA libraries; skips the test when they were not built."""
    if not os.path.exists(os.path.join(FAKES, "libcudart.so.13")):
        skip("fake CUDA libraries not built (PROFWRAP_FAKES=%s; they need the CUDA headers)" % FAKES)
    return FAKES


def profile_overlap_ranks(out, steps, opts=()):
    """Two ranks of tests/workloads/cuda_gpu_patterns overlap (per NVTX "step" a compute kernel and an all-reduce
    under it) on the fake GPU, under one profwrap writing into out; fails unless it exits 0."""
    fakes = fakes_dir()
    prog = workload("cuda_gpu_patterns")
    ranks = " & ".join("RANK=%d WORLD_SIZE=2 LOCAL_RANK=%d %s overlap --steps %d >/dev/null" % (r, r, prog, steps)
                       for r in (0, 1))
    r = profwrap(["-q", "-o", out] + list(opts) + ["--", "sh", "-c", ranks + "; wait"],
                 extra_env={"LD_LIBRARY_PATH": fakes}, timeout=120)
    check_eq(r.rc, 0, "profwrap on two ranks of cuda_gpu_patterns overlap\n" + r.describe())


def demangled(names):
    """{name: its demangled form}, through binutils' c++filt (a C name maps to itself)."""
    filt = shutil.which("c++filt")
    check(filt, "no c++filt (binutils) to demangle kernel names")
    names = list(names)
    p = subprocess.run([filt], input="\n".join(names) + "\n", stdout=subprocess.PIPE, universal_newlines=True)
    return dict(zip(names, p.stdout.splitlines()))


def parse_expect(out):
    """The `expect ...` lines a GPU workload prints about itself, as a list of word lists."""
    return [line.split()[1:] for line in out.splitlines() if line.startswith("expect ")]


# ---- raw traces, read through `profwrap dump` (the collector's own reader), never parsed here ----

_event_table = []


def event_table():
    """The events profwrap records (`profwrap dump --event-table`), in id order: dicts with id, event (the
    name), domain, kind and record (the struct: call, api, gpu, range, module)."""
    if not _event_table:
        r = profwrap(["dump", "--event-table"])
        check(r.rc == 0 and not r.err, "profwrap dump --event-table\n%s", r.describe())
        _event_table.extend(json.loads(line) for line in r.out.splitlines())
        check([e["id"] for e in _event_table] == list(range(len(_event_table))) and len(_event_table) > 100
              and _event_table[0]["event"] == "pad", "event table not understood: %r", _event_table[:3])
    return _event_table


def event_ids():
    """{event name: id} of every event profwrap records."""
    return {e["event"]: e["id"] for e in event_table()}


def gpu_event_names():
    """{api name: domain} of every GPU library call profwrap records (the events whose records are struct
    pw_rec_api), so a test never needs its own list."""
    return {e["event"]: e["domain"] for e in event_table() if e["record"] == "api"}


def dump(paths, opts=(), damaged_ok=False, timeout=DEFAULT_TIMEOUT):
    """`profwrap dump OPTS PATHS...` (PATHS: an output directory or raw traces), one dict per line: type
    "file", "proc", "string", "clock", "records", "record", "lost", "thread_lost", "salvage", "end" or "chunk".
    It must exit 0 with nothing on stderr; with damaged_ok, exit 1 too (a file damaged or cut short: what it
    holds up to there), and the lines it wrote on stderr are in the dump's attribute .errors."""
    if isinstance(paths, str):
        paths = [paths]
    r = profwrap(["dump"] + list(opts) + list(paths), timeout=timeout)
    for bad in ("Sanitizer", "runtime error", "Traceback"):
        check(bad not in r.err, "profwrap dump crashed:\n%s", r.describe())
    check(r.rc == 0 and not r.err or damaged_ok and r.rc == 1, "profwrap dump %r\n%s", paths, r.describe())
    lines = DumpLines(json.loads(line) for line in r.out.splitlines())
    lines.errors = r.err.splitlines()
    return lines


class DumpLines(list):
    """dump()'s lines, with .errors: what it said on stderr."""
    errors = ()


def raw_records(path, events=None, damaged_ok=False):
    """The record lines of a raw trace (dicts with event, tid, t0, t1, ret, arg0, arg1, ...), of the named
    events only when events is given."""
    opts = ["--events=" + ",".join(events)] if events else []
    return [d for d in dump(path, opts, damaged_ok) if d["type"] == "record"]


def raw_chunks(path):
    """(offset, type, size) of every whole chunk of a raw trace, in file order: the PROC chunk first; type as
    dump names it ("proc", "string", "clock", "records", ...), size the payload's bytes."""
    return [(d["offset"], d["type"], d["size"]) for d in dump(path)
            if d["type"] not in ("file", "record")]
