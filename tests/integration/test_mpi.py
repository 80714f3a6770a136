"""MPI (preload/mpi.c) with OpenMPI: `profwrap -o OUT mpirun -n 4 mpi_ranks ...`. The workload prints, per rank,
one JSON line with the MPI calls it made (count, bytes, and the peers of point-to-point calls, computed as
profwrap records them) and the bytes it read from a file of its own; every figure is compared exactly.

Exact, for each rank R of 0..3: OUT/rank<R>.json has rank R of 4, and its `mpi` calls are exactly the
workload's (names, counts, bytes: nothing more, nothing less); its file was read with the reads and bytes the
workload made; rank<R>.trace.json draws each MPI call; the raw records (OUT/raw) carry the right peer of every
point-to-point call (the trace shows no MPI arguments), the communicator size and root of collectives, the
rank and world size in MPI_Init and the request counts of waits. Within ranges (time): the ranks that wait in
MPI_Allreduce for the straggler (--slow-rank) spend at least half the delay there per iteration, the straggler
less than half what the fastest of them does. Also: the program's lines are the same without profwrap, with
it, and with --trace=io (which records no MPI call but still the file reads); --trace=mpi with
MPI_Init_thread records only MPI calls. Late and private: a program that loads the MPI library only through
dlopen(RTLD_LOCAL) of a library linked with it (as Python loads mpi4py), and calls MPI_Barrier through dlsym on
that handle (as ctypes does), has its MPI calls recorded with their bytes and the ranks MPI gave. An MPI of
neither ABI (a stub libmpi.so whose helpers abort) has its calls counted and is asked nothing.

Nothing is asserted about processes without a rank (mpirun itself) or files other than rank<R>.*.

PROFWRAP_MPIRUN (a command line, split at spaces) runs the test with another launcher, e.g. MPICH's
`mpiexec.hydra` with PROFWRAP_WORKLOADS naming a directory whose mpi_ranks was built with MPICH's mpicc; the
late-loading part then runs only if PROFWRAP_MPICC names that MPI's compiler."""
import glob
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

RANKS = 4
ITERS = 5
READ_BYTES = 10000
SLOW_RANK, DELAY_MS = 2, 40
WORKLOAD_ARGS = ["--iters", str(ITERS), "--read-bytes", str(READ_BYTES), "--slow-rank", str(SLOW_RANK),
                 "--delay-ms", str(DELAY_MS)]
# Root may run mpirun here and in CI; ranks share 2 cores; vader's single-copy mechanism needs ptrace
# rights a container may lack.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
TIMEOUT = 90

P2P = ("MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv")
ROOTED = ("MPI_Bcast", "MPI_Reduce")
WAITS = ("MPI_Wait", "MPI_Waitall", "MPI_Waitany")
INITS = ("MPI_Init", "MPI_Init_thread")



def mpirun_cmd(args, mpirun):
    return mpirun + ["-n", str(RANKS), workload_path()] + list(args)


def workload_path():
    path = os.path.join(WORKLOADS, "mpi_ranks")
    if not os.access(path, os.X_OK):
        raise Fail("workload mpi_ranks not built (%s): mpicc was not found when the tree was built; "
                   "`make deps` (scripts/install-deps.sh) installs openmpi-bin and libopenmpi-dev" % path)
    return path


def lines_of(r):
    """The workload's JSON lines by rank (each must say ok)."""
    per_rank = {}
    for line in r.out.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        check(d["ok"], "rank %s found wrong results (see its stderr)\n%s", d["rank"], r.describe())
        per_rank[d["rank"]] = d
    check_eq(sorted(per_rank), list(range(RANKS)), "ranks that printed a line\n" + r.describe())
    return per_rank


def sorted_lines(r):
    return sorted(l for l in r.out.splitlines() if l.startswith("{"))


def mpi_calls(rep):
    return {c["name"]: (c["count"], c["bytes"]) for c in rep.get("calls", []) if c["domain"] == "mpi"}


def expected_calls(line):
    return {name: (c["count"], c["bytes"]) for name, c in line["calls"].items()}


def check_calls(actual, expected, what):
    """check_eq for {name: (count, bytes)}, naming only the entries that differ."""
    if actual != expected:
        diff = ["%s: expected %r, got %r" % (k, expected.get(k), actual.get(k))
                for k in sorted(set(actual) | set(expected)) if actual.get(k) != expected.get(k)]
        raise Fail("%s {name: (count, bytes)}: %s" % (what, "; ".join(diff)))


# ---- raw records (read with `profwrap dump`) ----

def records_by_rank(out):
    """{world rank (from the MPI_Init record): [(name, arg0, arg1, ret, mpi_comm)]} of every raw trace in out
    that recorded MPI calls; mpi_comm is a collective's (size, root) as the dump decodes arg1, else None."""
    mpi = [e["event"] for e in event_table() if e["domain"] == "mpi"]
    found = {}
    for path in sorted(glob.glob(os.path.join(out, "raw", "*.pwt"))):
        recs = [(d["event"], d["arg0"], d["arg1"], d["ret"],
                 (d["mpi_comm"]["size"], d["mpi_comm"]["root"]) if "mpi_comm" in d else None)
                for d in raw_records(path, events=mpi)]
        inits = [r for r in recs if r[0] in INITS]
        if not recs:
            continue
        check_eq(len(inits), 1, "MPI_Init records in %s" % path)
        rank = inits[0][1]
        check(rank not in found, "two raw traces of rank %d", rank)
        found[rank] = recs
    return found


def check_records(recs, line, rank):
    """The arguments of one rank's records against what its workload made."""
    init = [r for r in recs if r[0] in INITS][0]
    check_eq((init[1], init[2], init[3]), (rank, RANKS, 0), "rank %d %s (rank, world size, ret)" % (rank, init[0]))
    for r in recs:
        check_eq(r[3], 0, "rank %d %s ret" % (rank, r[0]))
    for name in P2P:
        peers = {}
        for r in recs:
            if r[0] == name:
                peers[str(r[2])] = peers.get(str(r[2]), 0) + 1
        check_eq(peers, line["calls"][name].get("peers", {}), "rank %d %s records by peer" % (rank, name))
    for r in recs:
        if r[0] in P2P or r[0] in INITS or r[0] in WAITS or r[0] == "MPI_Finalize":
            continue
        root = 1 if r[0] in ROOTED else 0  # root 0, recorded + 1
        check_eq(r[2], RANKS | root << 32, "rank %d %s arg1 (communicator size | (root + 1) << 32)" % (rank, r[0]))
        check_eq(r[4], (RANKS, root - 1), "rank %d %s (communicator size, root) as pw_get_mpi_comm reads them"
                 % (rank, r[0]))
    waits = {name: sorted({(r[1], r[2]) for r in recs if r[0] == name}) for name in WAITS}
    check_eq(waits["MPI_Wait"], [(1, -1)], "rank %d MPI_Wait (requests, index)" % rank)
    check_eq(waits["MPI_Waitall"], [(2, -1)], "rank %d MPI_Waitall (requests, index)" % rank)
    check(waits["MPI_Waitany"] and all(a == 2 and i in (0, 1) for a, i in waits["MPI_Waitany"]),
          "rank %d MPI_Waitany (requests, index): %r", rank, waits["MPI_Waitany"])


LATE_LIB = r"""
#include <mpi.h>
#include <stdio.h>
int run(void *self)
{
	int provided, rank, size, one = 1, sum = 0;
	double x[32] = {0};
	MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Bcast(x, 32, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	int (*barrier)(MPI_Comm) = (int (*)(MPI_Comm))dlsym(self, "MPI_Barrier");
	if (!barrier || barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
		return 1;
	printf("rank %d of %d sum %d\n", rank, size, sum);
	return MPI_Finalize();
}
"""

LATE_MAIN = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*run)(void *) = (int (*)(void *))dlsym(h, "run");
	return run ? run(h) : 1;
}
"""


def test_late(mpirun, mpicc):
    """MPI loaded late and privately (dlopen RTLD_LOCAL), one function looked up with dlsym."""
    lib = os.path.abspath("late_mpi.so")
    with open("late_mpi.c", "w") as f:
        f.write("#define _GNU_SOURCE\n#include <dlfcn.h>\n" + LATE_LIB)
    b = run(mpicc + ["-shared", "-fPIC", "-o", lib, "late_mpi.c"], timeout=120)
    check_eq(b.rc, 0, "building late_mpi.so with %s\n%s" % (mpicc, b.describe()))
    prog = build_c("late_main", LATE_MAIN, ldflags=["-ldl"])
    r = profwrap(["-q", "-o", "LATE", "--trace=mpi", "--", *mpirun, "-n", "2", prog, lib], timeout=TIMEOUT,
                 extra_env=MPI_ENV)
    check_eq(r.rc, 0, "profwrap mpirun late_main\n" + r.describe())
    check_eq(sorted(l for l in r.out.splitlines() if l.startswith("rank")),
             ["rank 0 of 2 sum 2", "rank 1 of 2 sum 2"], "late_main's lines")
    for rank in range(2):
        rep = load_report("LATE", rank)
        check_eq((rep["rank"], rep["world_size"]), (rank, 2), "late: rank%d.json rank and world size" % rank)
        check_calls(mpi_calls(rep), {"MPI_Init_thread": (1, 0), "MPI_Allreduce": (1, 4), "MPI_Bcast": (1, 256),
                                     "MPI_Barrier": (1, 0), "MPI_Finalize": (1, 0)}, "late: rank %d MPI calls" % rank)


STUB_LIB = r"""
#include <stdlib.h>
/* An MPI of neither ABI: no ompi_mpi_comm_world, no MPIR_Dup_fn. What profwrap might ask aborts. */
int PMPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }
int PMPI_Send(const void *b, int n, void *t, int d, int tag, void *c)
{ (void)b; (void)n; (void)t; (void)d; (void)tag; (void)c; return 0; }
int PMPI_Finalize(void) { return 0; }
int MPI_Init(int *argc, char ***argv) { return PMPI_Init(argc, argv); }
int MPI_Send(const void *b, int n, void *t, int d, int tag, void *c) { return PMPI_Send(b, n, t, d, tag, c); }
int MPI_Finalize(void) { return PMPI_Finalize(); }
int PMPI_Comm_rank(void *c, int *r) { (void)c; (void)r; abort(); }
int PMPI_Comm_size(void *c, int *r) { (void)c; (void)r; abort(); }
int PMPI_Type_size(void *t, int *r) { (void)t; (void)r; abort(); }
int PMPI_Get_count(const void *s, void *t, int *r) { (void)s; (void)t; (void)r; abort(); }
"""

STUB_MAIN = r"""
int MPI_Init(int *, char ***);
int MPI_Send(const void *, int, void *, int, int, void *);
int MPI_Finalize(void);
int main(int argc, char **argv)
{
	char buf[64] = {0};
	return MPI_Init(&argc, &argv) || MPI_Send(buf, 64, (void *)8, 1, 0, (void *)16) || MPI_Finalize();
}
"""


def test_unknown_abi():
    """An MPI of neither ABI: calls counted and timed, MPI asked nothing (the stub's helpers abort)."""
    d = os.path.abspath("stub")
    build_c("libmpi.so", STUB_LIB, shared=True, directory=d)
    prog = build_c("stub_main", STUB_MAIN, ldflags=["-L" + d, "-l:libmpi.so", "-Wl,-rpath," + d], directory=d)
    r, rep = profile([prog], "STUB", opts=["--trace=mpi"])
    check_eq(r.rc, 0, "profwrap stub_main exit status\n" + r.describe())
    check_calls(mpi_calls(rep), {"MPI_Init": (1, 0), "MPI_Send": (1, 0), "MPI_Finalize": (1, 0)},
                "stub MPI calls")


# ---- the test ----

def test():
    mpirun = find_mpirun()
    workload_path()

    plain = run(mpirun_cmd(WORKLOAD_ARGS, mpirun), timeout=TIMEOUT, extra_env=MPI_ENV)
    check_eq(plain.rc, 0, "mpirun without profwrap\n" + plain.describe())
    truth = lines_of(plain)

    r = profwrap(["-q", "-o", "OUT", "--"] + mpirun_cmd(WORKLOAD_ARGS, mpirun), timeout=TIMEOUT, extra_env=MPI_ENV)
    check_eq(r.rc, 0, "profwrap mpirun exit status\n" + r.describe())
    check_eq(sorted_lines(r), sorted_lines(plain), "the program's lines with profwrap against without")
    reps = {}
    for rank in range(RANKS):
        line = truth[rank]
        rep = load_report("OUT", rank)
        reps[rank] = rep
        check_eq((rep["rank"], rep["world_size"]), (rank, RANKS), "rank%d.json rank and world size" % rank)
        check_calls(mpi_calls(rep), expected_calls(line), "rank %d MPI calls" % rank)
        check_eq(rep["dropped_events"], 0, "rank %d dropped_events" % rank)
        f = need_file(rep, os.path.abspath(line["file"]))  # written in the working directory, named absolute
        check_eq((f["reads"], f["read_bytes"]), (line["reads"], READ_BYTES * (rank + 1)),
                 "rank %d (reads, read_bytes) of %s" % (rank, line["file"]))
        check_eq(line["read_bytes"], READ_BYTES * (rank + 1), "rank %d read_bytes the workload counted" % rank)

        trace = load_json(os.path.join("OUT", "rank%d.trace.json" % rank))
        drawn = {}
        for ev in trace["traceEvents"]:
            if ev.get("ph") == "X" and ev.get("cat") == "mpi":
                drawn[ev["name"]] = drawn.get(ev["name"], 0) + 1
        check_eq(drawn, {n: c["count"] for n, c in line["calls"].items()}, "rank %d MPI calls in the trace" % rank)

    by_rank = records_by_rank("OUT")
    check_eq(sorted(by_rank), list(range(RANKS)), "ranks of the raw traces with MPI records")
    for rank in range(RANKS):
        check_records(by_rank[rank], truth[rank], rank)

    # The straggler: the others wait for it in MPI_Allreduce.
    ar = {rank: call(reps[rank], "mpi", "MPI_Allreduce")["total_ns"] for rank in range(RANKS)}
    waiting = [ar[rank] for rank in range(RANKS) if rank != SLOW_RANK]
    for rank in range(RANKS):
        if rank != SLOW_RANK:
            check_range(ar[rank], ITERS * DELAY_MS * 1e6 / 2, 60e9, "rank %d MPI_Allreduce total_ns" % rank)
    check(ar[SLOW_RANK] < min(waiting) / 2, "the straggler's MPI_Allreduce total_ns %d is not below half the "
          "others' (%r)", ar[SLOW_RANK], waiting)

    # --trace=io: no MPI call recorded, the reads still are, the program's lines unchanged.
    r = profwrap(["-q", "-o", "IO", "--trace=io", "--"] + mpirun_cmd(WORKLOAD_ARGS, mpirun), timeout=TIMEOUT,
                 extra_env=MPI_ENV)
    check_eq(r.rc, 0, "profwrap --trace=io mpirun exit status\n" + r.describe())
    check_eq(sorted_lines(r), sorted_lines(plain), "the program's lines with profwrap --trace=io against without")
    for rank in range(RANKS):
        rep = load_report("IO", rank)
        check_calls(mpi_calls(rep), {}, "rank %d MPI calls with --trace=io" % rank)
        check_eq(need_file(rep, os.path.abspath(truth[rank]["file"]))["read_bytes"], READ_BYTES * (rank + 1),
                 "rank %d read_bytes with --trace=io" % rank)

    # --trace=mpi and MPI_Init_thread: only MPI calls.
    args = ["--iters", "1", "--init-thread"]
    r = profwrap(["-q", "-o", "MPI", "--trace=mpi", "--"] + mpirun_cmd(args, mpirun), timeout=TIMEOUT,
                 extra_env=MPI_ENV)
    check_eq(r.rc, 0, "profwrap --trace=mpi mpirun exit status\n" + r.describe())
    lines = lines_of(r)
    for rank in range(RANKS):
        rep = load_report("MPI", rank)
        check_eq((rep["rank"], rep["world_size"]), (rank, RANKS), "rank%d.json rank and world size (Init_thread)"
                 % rank)
        check_calls(mpi_calls(rep), expected_calls(lines[rank]), "rank %d MPI calls with --trace=mpi" % rank)
        check_eq(lines[rank]["calls"]["MPI_Init_thread"]["count"], 1, "rank %d MPI_Init_thread calls" % rank)
        others = sorted({c["domain"] for c in rep["calls"]} - {"mpi"})
        check_eq(others, [], "rank %d domains other than mpi with --trace=mpi" % rank)

    mpicc = os.environ.get("PROFWRAP_MPICC", "").split()
    if not mpicc and not os.environ.get("PROFWRAP_MPIRUN"):
        found = shutil.which("mpicc")
        if not found:
            raise Fail("mpicc not found: `make deps` (scripts/install-deps.sh) installs libopenmpi-dev")
        mpicc = [found]
    if mpicc:
        test_late(mpirun, mpicc)
    else:
        note("PROFWRAP_MPIRUN without PROFWRAP_MPICC: late loading not checked")
    test_unknown_abi()


main(test)
