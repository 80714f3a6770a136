"""A program behind an exec wrapper keeps its figures: the images of a pid (joined by pid, each with its image
number) are one process, whose main thread is the pid's in every image, so the busy time, the waits and the
straggler's inputs are the program's, whatever wrapper started it (`#!/bin/sh` + `exec prog`).

Within ranges (time), against the programs' own clocks (profwrap's clock is CLOCK_MONOTONIC):
a. tests/workloads/cpu_spin arith (CPU-bound, no call that blocks), run directly and behind a `#!/bin/sh` wrapper
   that execs it: busy_ns is at least 95 % of its CPU time, and within 5 % of the time from the start of the
   process's first image (the wrapper's, when there is one: its life is part of the process) to the end of the
   program's work;
b. Python behind the wrapper, spinning for a known CPU time in 5 calls of a function named a phase
   (--python-functions), then sleeping: wait_ns is its sleep (at least what it asked, at most what it measured
   around it), busy_ns at least its CPU time and at most its span less the sleep; rank0.html draws one row for
   the pid (named by the program) and its 5 phases in the band of the main process's main thread;
c. `mpirun -n 2 wrap.sh mpi_ranks --slow-rank 1`: the slow rank's wait_ns is its nanosleeps' time (its main
   thread sleeps before each Allreduce), and each rank's busy_ns is at least the program's life less its MPI
   calls and waits;
d. two ranks (RANK, WORLD_SIZE) behind wrappers and no collective, rank 1 spinning four times as long:
   summary.json names rank 1 as the straggler by busy time, each rank's busy_ns at least its CPU time;
e. a shim built as pyenv's are (`#!/usr/bin/env sh`, which execs a second script that reads the output of 3
   lookups in turn, each a command substitution that execs a shell which sleeps 70 ms then reads a file,
   then execs cpu_spin): busy_ns at least the program's CPU time and at most 105 % of its span less those
   210 ms, which the shim spent waiting on the pipe for its children (a wait for another process, not busy
   time); and no worker_startup finding: the lookups are the wrapper's children, not the program's workers;
f. where pyenv is installed (PYENV_ROOT, else ~/.pyenv), its python3 shim running Python spinning for 1 s of CPU,
   and the interpreter it runs run directly: each busy_ns at least the CPU time and within 105 % of the time
   from the interpreter's image's start to the end of its work, as a direct run's is."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SPIN_MS = 400
MS = 1000000
WRAPPER = '#!/bin/sh\nexec "$@"\n'

PY_STEPS = 5
PY_SPIN_NS = 300 * MS
PY_SLEEP_NS = 300 * MS
PY_SCRIPT = """
import json, time
def step(ns):
    c0 = time.process_time_ns()
    while time.process_time_ns() - c0 < ns:
        pass
for _ in range(%d):
    step(%d)
s0 = time.monotonic_ns()
time.sleep(%f)
s1 = time.monotonic_ns()
print(json.dumps({"cpu_ns": time.process_time_ns(), "sleep_ns": s1 - s0, "done_ns": time.monotonic_ns()}))
""" % (PY_STEPS, PY_SPIN_NS // PY_STEPS, PY_SLEEP_NS / 1e9)
PY_EXIT_NS = 50 * MS  # an interpreter's shutdown after its last line, on a busy machine

MPI_ITERS, MPI_SLOW, MPI_DELAY_MS = 5, 1, 40
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}

RANK_MS = (150, 600)

SHIM_LOOKUPS, SHIM_LOOKUP_NS = 3, 70 * MS
PYENV_SCRIPT = """
import json, sys, time
c0 = time.process_time_ns()
while time.process_time_ns() - c0 < 1000000000:
    pass
print(json.dumps({"cpu_ns": time.process_time_ns(), "done_ns": time.monotonic_ns(), "exe": sys.executable}))
"""


def wrapper(name="wrap.sh", text=WRAPPER):
    path = os.path.abspath(name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


def json_line(r, what):
    lines = [l for l in r.out.splitlines() if l.startswith("{")]
    check_eq(len(lines), 1, what + ": JSON lines of the program\n" + r.describe())
    return json.loads(lines[0])


def chain(rep, pid):
    """The images of pid in rep, in order; each but the last ended in exec."""
    images = sorted((p for p in rep["processes"] if p["pid"] == pid), key=lambda p: p["image"])
    for p in images[:-1]:
        check_eq(p["how"], "exec", "how image %d of pid %d ended\n%s" % (p["image"], pid, describe_processes(rep)))
    return images


def program_chain(rep, exe):
    """The images of the pid whose last image runs exe."""
    pids = {p["pid"] for p in rep["processes"] if os.path.basename(p.get("exe") or "") == os.path.basename(exe)}
    check_eq(len(pids), 1, "pids running %s\n%s" % (exe, describe_processes(rep)))
    return chain(rep, pids.pop())


def part_a_cpu():
    spin = workload("cpu_spin")
    wrap = wrapper()
    for what, cmd, images in (("direct", [spin], 1), ("wrapped", [wrap, spin], 2)):
        out = "CPU-" + what
        r, rep = profile(cmd + ["arith", str(SPIN_MS)], out)
        line = json_line(r, what)
        imgs = program_chain(rep, spin)
        check_eq(len(imgs), images, what + ": images of the program's pid\n" + describe_processes(rep))
        busy = rep["summary"]["busy_ns"]
        span = line["done_ns"] - imgs[0]["start_ns"]
        note("%s: busy %.1f ms, CPU %.1f ms, span %.1f ms (first image start to the work's end)" % (
            what, busy / 1e6, line["cpu_ns"] / 1e6, span / 1e6))
        check_range(busy, line["cpu_ns"] * 95 // 100, 10 * line["cpu_ns"], what + ": busy_ns against its CPU time")
        check_range(busy, span * 95 // 100, span * 105 // 100, what + ": busy_ns against its span")
        check_eq(rep["summary"]["wait_ns"], 0, what + ": wait_ns")


def part_b_python_waits():
    wrap = wrapper()
    r, rep = profile([wrap, PYTHON, "-c", PY_SCRIPT], "PY", ["--python-functions=__main__:step"])
    line = json_line(r, "python")
    pids = {p["pid"] for p in rep["processes"]}
    check_eq(len(pids), 1, "python: pids\n" + describe_processes(rep))
    imgs = chain(rep, pids.pop())
    check_eq(len(imgs), 2, "python: images of its pid\n" + describe_processes(rep))
    s = rep["summary"]
    note("python behind the wrapper: busy %.1f ms, waits %.1f ms; CPU %.1f ms, slept %.1f ms" % (
        s["busy_ns"] / 1e6, s["wait_ns"] / 1e6, line["cpu_ns"] / 1e6, line["sleep_ns"] / 1e6))
    check_range(s["wait_ns"], PY_SLEEP_NS, line["sleep_ns"], "python: wait_ns (its sleep)")
    span = line["done_ns"] - imgs[0]["start_ns"]
    check_range(s["busy_ns"], line["cpu_ns"] * 95 // 100, span - PY_SLEEP_NS + PY_EXIT_NS,
                "python: busy_ns against its CPU time and its span less the sleep")
    with open("PY/rank0.html") as f:
        page = f.read()
    rows = re.findall(r'<g class="proc" data-pid="(\d+)">', page)
    check_eq(rows, [str(imgs[0]["pid"])], "rank0.html: process rows (data-pid)")
    check(re.search(r'<text x="0" y="\d+">python[^<]* %d</text>' % imgs[0]["pid"], page),
          "rank0.html: the process row is not named by the program")
    phases = re.findall(r'<rect [^>]*height="18" fill="hsl', page)
    check_eq(len(phases), PY_STEPS, "rank0.html: phases in the band")


def part_c_mpi():
    mpirun = find_mpirun()
    prog = os.path.join(WORKLOADS, "mpi_ranks")
    if not os.access(prog, os.X_OK):
        raise Fail("workload mpi_ranks not built (%s): `make deps` installs openmpi-bin and libopenmpi-dev" % prog)
    wrap = wrapper()
    r = profwrap(["-q", "-o", "MPI", "--", *mpirun, "-n", "2", wrap, prog, "--iters", str(MPI_ITERS),
                  "--slow-rank", str(MPI_SLOW), "--delay-ms", str(MPI_DELAY_MS)], extra_env=MPI_ENV, timeout=90)
    check_eq(r.rc, 0, "profwrap mpirun wrap.sh mpi_ranks\n" + r.describe())
    for rank in (MPI_SLOW, 1 - MPI_SLOW):
        rep = load_report("MPI", rank)
        imgs = program_chain(rep, prog)
        check_eq(len(imgs), 2, "rank %d: the wrapper's and the program's images\n%s" % (rank, describe_processes(rep)))
        s = rep["summary"]
        mpi_ns = sum(c["total_ns"] for c in rep["calls"] if c["domain"] == "mpi")
        sleeps = call(rep, "wait", "nanosleep")
        sleep_ns = sleeps["total_ns"] if sleeps else 0
        note("rank %d: busy %.1f ms, waits %.1f ms, MPI %.1f ms, nanosleep %.1f ms" % (
            rank, s["busy_ns"] / 1e6, s["wait_ns"] / 1e6, mpi_ns / 1e6, sleep_ns / 1e6))
        if rank == MPI_SLOW:
            check(sleep_ns >= MPI_ITERS * MPI_DELAY_MS * MS, "rank %d slept %d ns, under its %d x %d ms", rank,
                  sleep_ns, MPI_ITERS, MPI_DELAY_MS)
            check_range(s["wait_ns"], sleep_ns, sleep_ns * 105 // 100, "rank %d: wait_ns (its sleeps)" % rank)
        life = imgs[-1]["end_ns"] - imgs[-1]["start_ns"]
        check(s["busy_ns"] >= life - mpi_ns - s["wait_ns"], "rank %d: busy_ns %d under the program's life %d less "
              "its MPI calls %d and waits %d", rank, s["busy_ns"], life, mpi_ns, s["wait_ns"])


def part_d_busy_straggler():
    spin = workload("cpu_spin")
    wrap = wrapper()
    ranks = " & ".join("RANK=%d WORLD_SIZE=2 LOCAL_RANK=%d %s %s arith %d" % (rank, rank, wrap, spin, ms)
                       for rank, ms in enumerate(RANK_MS))
    r = profwrap(["-q", "-o", "RANKS", "--", "sh", "-c", ranks + "; wait"], timeout=60)
    check_eq(r.rc, 0, "profwrap on two wrapped ranks of cpu_spin\n" + r.describe())
    cpu = sorted(json.loads(l)["cpu_ns"] for l in r.out.splitlines() if l.startswith("{"))
    check_eq(len(cpu), 2, "cpu_spin lines\n" + r.describe())
    summ = load_json("RANKS/summary.json")
    rows = {row["rank"]: row for row in summ["ranks"]}
    check_eq(sorted(rows), [0, 1], "summary.json ranks")
    for rank in range(2):
        rep = load_report("RANKS", rank)
        check_eq(len(program_chain(rep, spin)), 2, "rank %d: the wrapper's and the program's images\n%s" % (
            rank, describe_processes(rep)))
        note("rank %d: busy %.1f ms, CPU %.1f ms" % (rank, rows[rank]["busy_ns"] / 1e6, cpu[rank] / 1e6))
        check(rows[rank]["busy_ns"] >= cpu[rank] * 95 // 100, "rank %d: busy_ns %d under 95 %% of its CPU time %d",
              rank, rows[rank]["busy_ns"], cpu[rank])
    check_eq((summ["straggler"], summ["straggler_reason"]), (1, "busy"), "summary.json straggler and reason")


def part_e_shim_chain():
    spin = workload("cpu_spin")
    lookup = 'v=$(exec sh -c \'sleep %f; read x < "$1"; echo ok\' sh "$0")\n[ "$v" = ok ] || exit 9\n' % (
        SHIM_LOOKUP_NS / 1e9)
    libexec = wrapper("libexec.sh", lookup * SHIM_LOOKUPS + 'exec "$@"\n')
    shim = wrapper("shim", '#!/usr/bin/env sh\nexec sh %s "$@"\n' % libexec)
    r, rep = profile([shim, spin, "arith", str(SPIN_MS)], "SHIM")
    line = json_line(r, "shim")
    imgs = program_chain(rep, spin)
    check_eq(len(imgs), 4, "shim: images of the program's pid (env, sh, sh, cpu_spin)\n" + describe_processes(rep))
    busy = rep["summary"]["busy_ns"]
    span = line["done_ns"] - imgs[0]["start_ns"]
    wait = SHIM_LOOKUPS * SHIM_LOOKUP_NS
    note("shim chain: busy %.1f ms, CPU %.1f ms, span %.1f ms (the shim waited at least %d ms on pipes)" % (
        busy / 1e6, line["cpu_ns"] / 1e6, span / 1e6, wait // MS))
    check_range(busy, line["cpu_ns"] * 95 // 100, (span - wait) * 105 // 100,
                "shim: busy_ns against its CPU time and its span less the shim's wait")
    check_eq([f["id"] for f in rep["findings"]], [], "shim: findings")


def pyenv_shim():
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    shim = os.path.join(root, "shims", "python3")
    return shim if os.access(shim, os.X_OK) else None


def part_f_pyenv():
    shim = pyenv_shim()
    if not shim:
        note("pyenv: no python3 shim, part f not run")
        return
    exe = None
    for what in ("shim", "direct"):
        cmd = [shim] if what == "shim" else [exe]
        r, rep = profile(cmd + ["-c", PYENV_SCRIPT], "PYENV-" + what, timeout=120)
        line = json_line(r, "pyenv " + what)
        exe = line["exe"]
        pids = {p["pid"] for p in rep["processes"] if p["ppid"] == rep["processes"][0]["ppid"]}
        check_eq(len(pids), 1, "pyenv %s: processes of the command\n%s" % (what, describe_processes(rep)))
        imgs = chain(rep, pids.pop())
        busy = rep["summary"]["busy_ns"]
        span = line["done_ns"] - imgs[-1]["start_ns"]
        note("pyenv %s: %d images, busy %.1f ms, CPU %.1f ms, the interpreter's span %.1f ms" % (
            what, len(imgs), busy / 1e6, line["cpu_ns"] / 1e6, span / 1e6))
        check_range(busy, line["cpu_ns"] * 95 // 100, span * 105 // 100,
                    "pyenv %s: busy_ns against its CPU time and the interpreter's span" % what)


def test():
    part_a_cpu()
    part_b_python_waits()
    part_c_mpi()
    part_d_busy_straggler()
    part_e_shim_chain()
    part_f_pyenv()


main(test)
