"""Process-model corners (tests/workloads/corners.c), each with exact per-process figures from rank0.json,
every process's end named, and the program's exit status and stdout the same with and without profwrap:

- fork while two threads write to /dev/null, malloc and dladdr flat out: no child hangs; each child's writes,
  events and exit code exactly; the threads' writes recorded + dropped == made;
- vfork + exec and vfork + _exit, a real vfork (the child writes into the parent's memory); posix_spawn and posix_spawnp (the parent's spawn recorded); daemon() (the
  daemon's writes, its parent's end named "exited" although libc's own _exit ends it);
- clone(): a thread on its creator's TLS (CLONE_VM|CLONE_THREAD..., no CLONE_SETTLS) writing while its
  creator writes: the creator's writes all recorded, the clone's counted as dropped, no record refused; a
  child without CLONE_VM on a 16 KiB stack: a process of its own, its function's result its exit code; the
  same after the process has had a thread: unprofiled (known limit); CLONE_VM|CLONE_VFORK + exec, a vfork
  child (nothing dropped);
- dlclose of the (fake) CUDA runtime and dlopen again, at another address when nothing else holds it: both
  rounds' calls exactly;
- LD_PRELOAD unset, emptied, replaced by another library or by this one, or an environment of its own, before
  exec: the child's image ends "exec" and the exec'd program is profiled only when LD_PRELOAD still names us;
- statically linked, set-user-ID and file-capability targets: one line on stderr naming the path and the
  reason, the program still run and its exit status passed through; exec'd by a profiled shell, the exec shown;
- closing every descriptor (a loop of close(), closefrom, close_range, what /proc/self/fd lists, dup2/dup3
  over the upper range, a forked child closing all before exec): the process keeps being recorded, ends
  "exited" (or "exec"), its writes after the closing counted, close()'s failures those of the run without
  profwrap, and as many descriptors answer fcntl() and dup() as without it."""
import json
import os
import resource
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

K = 5  # writes of 16 bytes per process, where one process's file is counted
WRITE_BYTES = 16


def facts(r):
    """The JSON of the program's `facts {...}` line on stderr."""
    for line in r.err.splitlines():
        if line.startswith("facts "):
            return json.loads(line[6:])
    raise Fail("no facts line on stderr\n" + r.describe())


def both(make_args, name, opts=()):
    """Runs the command make_args(data directory) without profwrap, then under profwrap into output directory
    name, each with a data directory of its own. Checks exit status and stdout agree and that the reader
    refused no record. Returns (data directory of the profiled run, its Result, its report)."""
    base = run(make_args(tmpdir(name + "-base-")))
    data = tmpdir(name + "-data-")
    r, rep = profile(make_args(data), name, opts=opts, expect_rc=base.rc)
    check_eq(r.out, base.out, "%s: stdout under profwrap vs without\n%s" % (name, r.describe()))
    check_eq(rep["records_refused"], 0, "%s: records refused" % name)
    return data, r, rep


def top_of(rep, argv):
    """The first image of the process that ran argv, started by profwrap (its parent is none of the report's)."""
    want = " ".join(argv)
    pids = {p["pid"] for p in rep["processes"]}
    found = [p for p in rep["processes"] if p["image"] == 0 and p["argv"] == want and p["ppid"] not in pids]
    check_eq(len(found), 1, "processes running %r\n%s" % (want, describe_processes(rep)))
    return found[0]


def images_of(rep, pid):
    return sorted((p for p in rep["processes"] if p["pid"] == pid), key=lambda p: p["image"])


def kids_of(rep, ppid):
    """{pid: [images]} of the processes whose first image's parent is ppid."""
    return {p["pid"]: images_of(rep, p["pid"]) for p in rep["processes"] if p["ppid"] == ppid and p["image"] == 0}


def end(p):
    return (p["how"], p["exit_code"])


def check_writes(rep, path, n, what):
    f = need_file(rep, path)
    check_eq((f["opens"], f["writes"], f["write_bytes"]), (1, n, n * WRITE_BYTES), what + ": (opens, writes, bytes) of " + path)


def writes_argv(k, path, code):
    return "%s writes %d %s %d" % (CORNERS, k, path, code)


# ---- fork, vfork, spawn, daemon ----

def test_fork_threads():
    threads, forks = 2, 8
    d, r, rep = both(lambda d: [CORNERS, "fork_threads", str(threads), str(forks), str(K), d], "FORK")
    ctx = "\n" + describe_processes(rep)
    check_eq(r.out, "".join("fork child %d: %d\n" % (i, 10 + i) for i in range(forks)), "children's exit codes")
    top = top_of(rep, [CORNERS, "fork_threads", str(threads), str(forks), str(K), d])
    check_eq(end(top), ("exited", 0), "the forking process's end" + ctx)
    kids = kids_of(rep, top["pid"])
    # each child: open, K writes, close, and exit() or _exit()
    check_eq(sorted((len(i), end(i[0]), i[0]["events"], i[0]["dropped"]) for i in kids.values()),
             [(1, ("exited", 10 + i), K + 3, 0) for i in range(forks)], "children (images, end, events, dropped)" + ctx)
    for i in range(forks):
        check_writes(rep, os.path.join(d, "fork-%d" % i), K, "fork child %d" % i)
    made = facts(r)["thread_writes"]
    check(made >= forks, "the threads wrote only %d times", made)
    null = need_file(rep, "/dev/null")
    check_eq(null["writes"] + top["dropped"], made, "the threads' writes: recorded + dropped vs made")
    check_eq((count(rep, "process", "fork"), count(rep, "process", "exit"), count(rep, "process", "_exit")),
             (forks, forks // 2, forks - forks // 2), "(fork, exit, _exit) calls")
    note("fork: %d thread writes, %d recorded, %d dropped" % (made, null["writes"], top["dropped"]))


def test_vfork_spawn():
    d, r, rep = both(lambda d: [CORNERS, "vfork", str(K), d], "VFORK")
    ctx = "\n" + describe_processes(rep)
    top = top_of(rep, [CORNERS, "vfork", str(K), d])
    check_eq(end(top), ("exited", 0), "vfork: the parent's end" + ctx)
    # A real vfork (both() compared the output: the _exit child's write reached the parent's memory): the
    # exec'd child records itself from its exec on, as a posix_spawn child does; the one that only exits is
    # not a process of the report (its parent's vfork and wait are).
    check("the child's write seen by the parent: 1" in r.out, "vfork served by a fork: %r", r.out)
    kids = [[(p["argv"], end(p), p["events"]) for p in kid] for kid in kids_of(rep, top["pid"]).values()]
    check_eq(kids, [[(writes_argv(K, os.path.join(d, "vfork-exec"), 21), ("exited", 21), K + 4)]],
             "vfork children's images (argv, end, events: open, writes, close, printf, fflush)" + ctx)
    check_writes(rep, os.path.join(d, "vfork-exec"), K, "vfork + exec")
    check_eq(count(rep, "process", "vfork"), 2, "vfork calls")

    d, r, rep = both(lambda d: [CORNERS, "spawn", str(K), d], "SPAWN")
    ctx = "\n" + describe_processes(rep)
    top = top_of(rep, [CORNERS, "spawn", str(K), d])
    check_eq(end(top), ("exited", 0), "spawn: the parent's end" + ctx)
    got = sorted((len(i), i[0]["argv"], end(i[0]), i[0]["events"]) for i in kids_of(rep, top["pid"]).values())
    want = sorted([(1, writes_argv(K, os.path.join(d, "spawn"), 23), ("exited", 23), K + 4),
                   (1, "corners writes %d %s 24" % (K, os.path.join(d, "spawnp")), ("exited", 24), K + 4)])
    check_eq(got, want, "spawned children (images, argv, end, events)" + ctx)
    check_writes(rep, os.path.join(d, "spawn"), K, "posix_spawn child")
    check_writes(rep, os.path.join(d, "spawnp"), K, "posix_spawnp child")
    check_eq((count(rep, "process", "posix_spawn"), count(rep, "process", "posix_spawnp")), (1, 1),
             "(posix_spawn, posix_spawnp) calls")


def test_daemon():
    sh = shutil.which("sh")
    if not sh:
        raise Fail("no sh")
    script = '"$0" daemon %d "$1" && "$0" waitfile "$1/daemon.done" 20' % K
    d, r, rep = both(lambda d: [sh, "-c", script, CORNERS, d], "DAEMON")
    ctx = "\n" + describe_processes(rep)
    check_eq(r.out, "daemon starting\n", "the daemon's output")
    # sh starts it with vfork + exec: its first image (a fork would have given sh's copy first); the daemon,
    # its fork child, runs the same argv
    argv = "%s daemon %d %s" % (CORNERS, K, d)
    pids = {p["pid"] for p in rep["processes"] if p["argv"] == argv}
    starter = [p for p in rep["processes"] if p["argv"] == argv and p["ppid"] not in pids]
    check_eq([end(p) for p in starter], [("exited", 0)], "the end of the process that called daemon()" + ctx)
    daemons = [p for p in rep["processes"] if p["ppid"] == starter[0]["pid"]]
    # open, K writes, close; open and close of daemon.tmp; exit
    check_eq([(p["image"], end(p), p["events"], p["dropped"]) for p in daemons], [(0, ("exited", 0), K + 5, 0)],
             "the daemon (image, end, events, dropped), its parent the process that called daemon()" + ctx)
    check_writes(rep, os.path.join(d, "daemon"), K, "the daemon")


# ---- clone ----

def test_clone():
    w = 20000
    d, r, rep = both(lambda d: [CORNERS, "clone_vm", str(w), d], "CLONEVM")
    ctx = "\n" + describe_processes(rep)
    check_eq(r.out, "clone_vm: child ok, creator ok\n", "clone_vm output")
    check_eq(len(rep["processes"]), 1, "clone_vm: processes" + ctx)
    top = rep["processes"][0]
    check_eq(end(top), ("exited", 0), "clone_vm: the process's end" + ctx)
    check_writes(rep, os.path.join(d, "clone-parent"), w, "the creator of a clone on its TLS")
    clone_file = need_file(rep, os.path.join(d, "clone-child"))
    check_eq(clone_file["writes"], 0, "writes recorded for the clone on its creator's TLS")
    check_eq((top["dropped"], rep["dropped_events"]), (w, w), "the clone's writes: (process dropped, dropped_events)")

    d, r, rep = both(lambda d: [CORNERS, "clone_fork", str(K), d], "CLONEFORK")
    ctx = "\n" + describe_processes(rep)
    check_eq(r.out, "clone without a stack: -1, errno EINVAL\nclone_fork: 25\n", "clone_fork output")
    top = top_of(rep, [CORNERS, "clone_fork", str(K), d])
    kids = list(kids_of(rep, top["pid"]).values())
    # open, K writes, close; the function's return is the exit
    check_eq([[(end(p), p["events"], p["dropped"]) for p in i] for i in kids], [[(("exited", 25), K + 2, 0)]],
             "clone without CLONE_VM: the child (end, events, dropped)" + ctx)
    check_eq(top["dropped"], 0, "clone_fork: the parent's dropped")
    check_writes(rep, os.path.join(d, "clone-fork"), K, "clone without CLONE_VM")

    d, r, rep = both(lambda d: [CORNERS, "clone_fork", str(K), d, "threaded"], "CLONEFORKT")
    ctx = "\n" + describe_processes(rep)
    check_eq(len(rep["processes"]), 1, "clone without CLONE_VM after a thread: processes" + ctx)
    check_eq((rep["processes"][0]["dropped"], file_entry(rep, os.path.join(d, "clone-fork"))), (0, None),
             "clone without CLONE_VM after a thread: (parent's dropped, the child's file)")
    note("KNOWN LIMIT: a clone() child without CLONE_VM of a process that has had threads runs unprofiled "
         "(starting its session would take locks another thread may have held); it writes nothing into its "
         "parent's segment")

    d, r, rep = both(lambda d: [CORNERS, "clone_vfork", str(K), d], "CLONEVFORK")
    ctx = "\n" + describe_processes(rep)
    top = top_of(rep, [CORNERS, "clone_vfork", str(K), d])
    check_eq((end(top), top["dropped"]), (("exited", 0), 0),
             "clone_vfork: the parent's (end, dropped: none, the child's exec goes through as a vfork child's)" + ctx)
    kids = list(kids_of(rep, top["pid"]).values())
    check_eq([[(p["argv"], end(p), p["events"]) for p in i] for i in kids],
             [[(writes_argv(K, os.path.join(d, "clone-vfork"), 26), ("exited", 26), K + 4)]],
             "CLONE_VM|CLONE_VFORK + exec: the exec'd image" + ctx)
    check_writes(rep, os.path.join(d, "clone-vfork"), K, "CLONE_VM|CLONE_VFORK + exec")


# ---- dlclose of the CUDA runtime ----

def test_dlclose():
    if not os.path.exists(os.path.join(FAKES, "libcudart.so.13")):
        note("dlclose part not run: fake CUDA libraries not built (PROFWRAP_FAKES=%s)" % FAKES)
        return
    lib = os.path.join(FAKES, "libcudart.so.13")
    n = 3
    base = run([CORNERS, "dlclose", lib, str(n)])
    check_eq(facts(base), {"unloaded": True, "moved": True}, "without profwrap: dlclose unloads, the reload moves")
    # GPU activity loads libcupti, which needs libcudart and so keeps it loaded; without it, it goes.
    for name, opts, unloaded in (("DL", [], False), ("DLNOGPU", ["--trace=io,stdio,process,dl,cudart"], True)):
        r, rep = profile([CORNERS, "dlclose", lib, str(n)], name, opts=opts)
        check_eq(r.out, base.out, name + ": stdout under profwrap vs without")
        check_eq(facts(r), {"unloaded": unloaded, "moved": unloaded}, name + ": (unloaded, moved)")
        calls = {c: (count(rep, "cudart", c), call(rep, "cudart", c)["errors"])
                 for c in ("cudaMalloc", "cudaMemcpy", "cudaDeviceSynchronize", "cudaFree")}
        check_eq(calls, {c: (2 * n, 0) for c in calls}, name + ": (count, errors) of both rounds' calls")
        # dlopen, the RTLD_NOLOAD probe (fails when unloaded), dlopen again; dlclose twice, and the probe's
        check_eq((count(rep, "dl", "dlopen"), call(rep, "dl", "dlopen")["errors"], count(rep, "dl", "dlclose")),
                 (3, 1, 2) if unloaded else (3, 0, 3), name + ": (dlopen, failed, dlclose)")
        check_eq(end(rep["processes"][0]), ("exited", 0), name + ": the process's end")


# ---- LD_PRELOAD changed by the program ----

def test_env():
    for mode in ("unset", "empty", "other", "envp", "replace"):
        d, r, rep = both(lambda d: [CORNERS, "env", mode, str(K), d, LIB], "ENV-" + mode)
        ctx = "\n" + describe_processes(rep)
        check_eq(r.out, "writes %d done\nenv %s: child 27\n" % (K, mode), mode + ": output")
        top = top_of(rep, [CORNERS, "env", mode, str(K), d, LIB])
        check_eq(end(top), ("exited", 0), mode + ": the parent's end" + ctx)
        check_writes(rep, os.path.join(d, "env-parent"), K, mode + ": the parent")
        kids = list(kids_of(rep, top["pid"]).values())
        check_eq(len(kids), 1, mode + ": children" + ctx)
        child = kids[0]
        check_eq((child[0]["how"], child[0]["exec_path"]), ("exec", CORNERS), mode + ": the child's first image" + ctx)
        mine = os.path.join(d, "env-" + mode)
        if mode == "replace":  # LD_PRELOAD names this library again: profiled
            check_eq([(p["argv"], end(p), p["events"]) for p in child[1:]], [(writes_argv(K, mine, 27), ("exited", 27), K + 4)],
                     "replace: the exec'd image" + ctx)
            check_writes(rep, mine, K, "replace: the exec'd image")
        else:  # not profiled: the exec ends the child's only image, the wait gives its status
            check_eq((len(child), child[0]["exit_code"], file_entry(rep, mine)), (1, 27, None),
                     mode + ": (images, exit code, the unprofiled image's file)" + ctx)


# ---- statically linked, set-user-ID and file-capability targets ----

STATIC_C = '#include <stdio.h>\nint main(void) { puts("static"); return 42; }\n'


def unprofiled_line(path, reason):
    return "profwrap: LD_PRELOAD cannot apply to %s: it %s; it runs unprofiled" % (path, reason)


STATIC = "is statically linked (no ELF program interpreter)"
SECURE = "(the loader ignores LD_PRELOAD in secure mode)"


def run_unprofiled(cmd, name, rc, out, line, **kw):
    r = profwrap(["-q", "-o", name, "--"] + cmd, timeout=30, **kw)
    check_eq(r.rc, rc, "%s: exit status\n%s" % (name, r.describe()))
    check_eq(r.out, out, name + ": stdout")
    check_eq(r.err.splitlines(), [line], name + ": stderr")


def test_unprofilable():
    d = tmpdir("static-")
    st = build_c("static", STATIC_C, cflags=["-static"], directory=d)
    run_unprofiled([st], "STATIC", 42, "static\n", unprofiled_line(st, STATIC))
    # nothing was recorded: nothing is left that would refuse the next run into that directory
    check(not os.path.exists("STATIC"), "the run of a static program left %r behind",
          sorted(os.listdir("STATIC")) if os.path.exists("STATIC") else None)
    profile(["true"], "STATIC")
    script = os.path.join(d, "script")
    with open(script, "w") as f:
        f.write("#!%s\n" % st)
    os.chmod(script, 0o755)
    run_unprofiled([script], "SCRIPT", 42, "static\n",
                   unprofiled_line(script, "runs with the interpreter %s, which %s" % (st, STATIC)))

    targets = [(st, 42)]
    if os.geteuid() != 0:
        note("set-user-ID and file-capability parts not run: they need root (to give a file away)")
    elif os.statvfs(d).f_flag & os.ST_NOSUID:
        note("set-user-ID and file-capability parts not run: %s is on a nosuid file system" % d)
    else:
        suid = os.path.join(d, "suid")
        shutil.copy(CORNERS, suid)
        os.chown(suid, 65534, 65534)
        os.chmod(suid, 0o4755)
        run_unprofiled([suid, "exitcode", "43"], "SUID", 43, "exit code 43\n",
                       unprofiled_line(suid, "is set-user-ID to uid 65534 and you are uid 0 " + SECURE))
        targets.append((suid, 43))
        test_capabilities()

    # exec'd by a profiled shell: each child's image ends in the exec, its status from the shell's wait
    sh = shutil.which("sh")
    script = "; ".join('"%s" exitcode %d' % (t, c) if t != st else '"%s"' % t for t, c in targets) + "; exit 7"
    r, rep = profile([sh, "-c", script], "EXECS", expect_rc=7)
    check_eq(r.err, "", "EXECS: stderr (the shell is dynamic: nothing to say)")
    ctx = "\n" + describe_processes(rep)
    top = top_of(rep, [sh, "-c", script])
    got = sorted([(p["how"], p["exec_path"], p["exit_code"]) for p in i] for i in kids_of(rep, top["pid"]).values())
    check_eq(got, sorted([("exec", t, c)] for t, c in targets), "EXECS: the shell's children's images" + ctx)


def test_capabilities():
    """A file with capabilities, run by a user (nobody): secure mode too. Everything nobody needs lies in a
    directory of its own that it can reach."""
    setpriv = shutil.which("setpriv")
    if not setpriv:
        note("file-capability part not run: no setpriv")
        return
    top = tempfile.mkdtemp(prefix="pwtest-caps-", dir="/tmp")
    try:
        os.chmod(top, 0o755)
        cap = os.path.join(top, "capbin")
        shutil.copy(CORNERS, cap)
        os.chmod(cap, 0o755)
        # vfs_cap_data revision 2, effective, permitted CAP_NET_RAW (13)
        os.setxattr(cap, "security.capability", struct.pack("<5I", 0x02000001, 1 << 13, 0, 0, 0))
        os.makedirs(os.path.join(top, "w"))
        os.chown(os.path.join(top, "w"), 65534, 65534)
        env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR",)}
        as_nobody = [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        if run(as_nobody + ["test", "-x", PROFWRAP, "-a", "-r", LIB], env=env).rc != 0:
            note("file-capability part not run: nobody cannot reach %s" % PROFWRAP)
            return
        r = run(as_nobody + [PROFWRAP, "-q", "-o", os.path.join(top, "w", "OUT"), "--", cap, "exitcode", "44"],
                timeout=30, env=env)
        check_eq(r.rc, 44, "CAPS: exit status\n" + r.describe())
        check_eq(r.out, "exit code 44\n", "CAPS: stdout")
        check_eq(r.err.splitlines(), [unprofiled_line(cap, "has file capabilities " + SECURE)], "CAPS: stderr")
    finally:
        shutil.rmtree(top, ignore_errors=True)


# ---- closing every descriptor ----

def test_closeall():
    lim = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 65536)
    hi = min(lim, 1024)
    over = hi - max(3, hi - 128)  # numbers dup2/dup3 go over
    for mode in ("loop", "closefrom", "close_range", "proc", "dup2", "dup3", "fork_exec"):
        d, r, rep = both(lambda d: [CORNERS, "closeall", mode, str(K), d], "CLOSE-" + mode)
        ctx = "\n" + describe_processes(rep)
        top = top_of(rep, [CORNERS, "closeall", mode, str(K), d])
        check_eq((end(top), top["dropped"]), (("exited", 0), 0), mode + ": (the process's end, dropped)" + ctx)
        closes = call(rep, "io", "close")
        if mode == "fork_exec":
            kids = list(kids_of(rep, top["pid"]).values())
            mine = os.path.join(d, "after-fork-exec")
            check_eq([[(p["how"], p["exec_path"], p["argv"] if p["image"] else None, p["events"] if p["image"] else None)
                       for p in i] for i in kids],
                     [[("exec", CORNERS, None, None), ("exited", None, writes_argv(K, mine, 28), K + 4)]],
                     "fork_exec: the child's images (how, exec_path, argv, events)" + ctx)
            check_writes(rep, mine, K, "fork_exec: the exec'd image")
            continue
        check_writes(rep, os.path.join(d, "after-" + mode), K, mode + ": after closing everything")
        if mode == "loop":
            failed = int(r.out.split("closed by loop: ")[1].split()[0])
            check_eq((closes["count"], closes["errors"]), (lim - 3 + 2, failed), "loop: (close calls, failed)")
        elif mode == "proc":  # the same descriptors open and duplicable as without profwrap (stdout)
            dups = int(r.out.split("duplicated: ")[1].split(";")[0])
            check_eq((count(rep, "io", "dup"), call(rep, "io", "dup")["errors"]), (lim - 3, lim - 3 - dups),
                     "proc: (dup calls, failed)")
        elif mode in ("dup2", "dup3"):
            check_eq((count(rep, "io", mode), call(rep, "io", mode)["errors"]), (over, 0), mode + ": (calls, failed)")
            check_eq((closes["count"], closes["errors"]), (over + 3, 0), mode + ": (close calls, failed)")


def test():
    global CORNERS
    CORNERS = workload("corners")
    test_fork_threads()
    test_vfork_spawn()
    test_daemon()
    test_clone()
    test_dlclose()
    test_env()
    test_unprofilable()
    test_closeall()


main(test)
