"""The checks of scripts/gpu-check.sh: small PyTorch workloads run under profwrap (and without it, or under
torch.profiler, where a check compares), and what each profwrap report must say about them. Each check prints
its figures and one PASS, FAIL or SKIP line; every command runs under a timeout and all of them share one time
budget, so that a hang cannot take the GPU machine's whole slot.

    gpu_check_cases.py run --profwrap PATH --tmp DIR [--steps N] [--only 1,2,7,nvcc] [--budget S]
        every check (or those named); exit 1 when one failed, else 0
    gpu_check_cases.py workload NAME [ARGS]
        one workload: fork, graph, nccl, compile, sigterm, nvtx (what the checks run)
    gpu_check_cases.py judge DIR [--torch-profiler JSON]
        the checks that read a report only, over a profwrap output directory (works without a GPU)

The judge_* functions read reports only (no GPU, no torch): each returns (verdict, text)."""
import argparse
import glob
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TRAIN = os.path.join(HERE, "gpu_check_train.py")
CHECK_TIMEOUT = 120   # seconds a command of a check may take
COMPILE_TIMEOUT = 180  # torch.compile's first call compiles with Triton
PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
NCCL_KERNEL_PREFIXES = ("ncclDevKernel_", "ncclSymkDevKernel_", "ncclKernel_")  # collector/model/gpu_names.c

# ---- workloads (run as `gpu_check_cases.py workload NAME`, plainly or under profwrap) ----

GRAPH_REPLAYS = 20
GRAPH_SPINS = 2          # torch.cuda._sleep calls captured: one spin_kernel each, a name nothing else launches
SPIN_CYCLES = 1000
NCCL_OPS = 5
NVTX_STEPS = 10
NVTX_NAME = "gpucheck_step"
NVTX_OUTER = "gpucheck_outer"
COMPILE_CALLS = 10
SIGTERM_AFTER_S = 5.0
SIGTERM_BATCH = 50       # launches between synchronisations: at most this many kernels pending


def wl_fork(args):
    """`import torch` (no CUDA use), then a fork child uses CUDA and exits with 0 when it worked."""
    import torch  # noqa: F401
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            v = torch.ones(1, device="cuda").sum().item()
            print("child ok %s" % v, flush=True)
            code = 0
        except Exception as e:  # the child's failure is the figure
            print("child failed: %s" % (str(e).strip().splitlines() or [repr(e)])[0], flush=True)
        sys.exit(code)  # a normal exit: atexit and the libraries' destructors run, as in a real worker
    _, status = os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    print("child exit %d" % code, flush=True)
    sys.exit(0 if code == 0 else 1)


def cudart_handle():
    """ctypes handle of the libcudart this process loaded (PyTorch's), or None."""
    import ctypes
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "/libcudart.so" in line})
    return ctypes.CDLL(paths[0]) if paths else None


def graph_kernel_nodes(g):
    """The kernel nodes of a kept CUDA graph (torch's raw_cuda_graph and cudaGraphGetNodes), or None."""
    import ctypes
    try:
        raw = g.raw_cuda_graph()
        rt = cudart_handle()
        if rt is None:
            return None
        n = ctypes.c_size_t(0)
        if rt.cudaGraphGetNodes(ctypes.c_void_p(raw), None, ctypes.byref(n)) != 0:
            return None
        nodes = (ctypes.c_void_p * n.value)()
        if rt.cudaGraphGetNodes(ctypes.c_void_p(raw), nodes, ctypes.byref(n)) != 0:
            return None
        kinds = []
        for node in nodes:
            t = ctypes.c_int(-1)
            if rt.cudaGraphNodeGetType(ctypes.c_void_p(node), ctypes.byref(t)) != 0:
                return None
            kinds.append(t.value)
        return sum(1 for t in kinds if t == 0)  # cudaGraphNodeTypeKernel
    except Exception:
        return None


def kernels_of_profile(prof):
    """(kernel count, spin_kernel count) of a finished torch.profiler run, from its Chrome trace."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    ks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    return len(ks), sum(1 for e in ks if "spin_kernel" in e.get("name", ""))


def wl_graph(args):
    """A CUDA graph of GRAPH_SPINS spin kernels and two elementwise ops, replayed GRAPH_REPLAYS times.
    --torch-profiler JSON: inside torch.profiler, writing its kernel counts."""
    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch-profiler", metavar="JSON")
    a = ap.parse_args(args)

    def body():
        x = torch.ones(1 << 16, device="cuda")
        torch.cuda.synchronize()
        try:
            g = torch.cuda.CUDAGraph(keep_graph=True)
        except TypeError:
            g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(GRAPH_SPINS):
                torch.cuda._sleep(SPIN_CYCLES)
            x.mul_(1.0001)
            x.add_(1.0)
        nodes = graph_kernel_nodes(g)
        for _ in range(GRAPH_REPLAYS):
            g.replay()
        torch.cuda.synchronize()
        return nodes

    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            nodes = body()
        count, spins = kernels_of_profile(prof)
        with open(a.torch_profiler, "w") as f:
            json.dump({"kernels": count, "spin_kernels": spins}, f)
    else:
        nodes = body()
    print("graph replays %d spins %d kernel_nodes %s" % (GRAPH_REPLAYS, GRAPH_SPINS, "?" if nodes is None else nodes))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wl_nccl(args):
    """One-rank NCCL: NCCL_OPS all_reduces (SUM, in place: one rank may run none), NCCL_OPS more with AVG (a
    kernel even on one rank), then batch_isend_irecv to itself, or, where p2p to self is refused, NCCL_OPS
    broadcasts and all_to_all_singles (a send and a receive to itself in one NCCL group)."""
    import torch
    import torch.distributed as dist
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % free_port(), rank=0, world_size=1)
    t = torch.ones(1 << 20, device="cuda")
    for _ in range(NCCL_OPS):
        dist.all_reduce(t)
    for _ in range(NCCL_OPS):
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
    torch.cuda.synchronize()
    src, dst = torch.arange(1 << 16, device="cuda", dtype=torch.float32), torch.zeros(1 << 16, device="cuda")
    try:
        for _ in range(NCCL_OPS):
            for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, src, 0), dist.P2POp(dist.irecv, dst, 0)]):
                w.wait()
        torch.cuda.synchronize()
        print("nccl p2p self: batch_isend_irecv x %d, received %s" % (NCCL_OPS, bool(torch.equal(src, dst))))
    except Exception as e:
        print("nccl p2p self: refused (%s); broadcast and all_to_all_single x %d instead" % (
            str(e).splitlines()[0] if str(e) else type(e).__name__, NCCL_OPS))
        for _ in range(NCCL_OPS):
            dist.broadcast(t, 0)
            dist.all_to_all_single(dst, src)
        torch.cuda.synchronize()
    dist.destroy_process_group()
    print("nccl all_reduce %d" % (2 * NCCL_OPS))


def wl_compile(args):
    """A torch.compile'd elementwise function called COMPILE_CALLS times; exit 77 when compiling fails."""
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    import torch

    def f(x, y):
        return torch.relu(x.sin() * y + x.cos())

    x, y = torch.randn(1 << 16, device="cuda"), torch.randn(1 << 16, device="cuda")
    try:
        cf = torch.compile(f)
        cf(x, y)
        torch.cuda.synchronize()
    except Exception as e:
        msg = str(e).strip().splitlines()
        print("compile failed: %s: %s" % (type(e).__name__, msg[0][:300] if msg else ""), flush=True)
        sys.exit(77)
    for _ in range(COMPILE_CALLS):
        cf(x, y)
    torch.cuda.synchronize()
    print("compiled calls %d" % COMPILE_CALLS)


def wl_sigterm(args):
    """Launches spin kernels until SIGTERM, whose handler prints how many it launched and exits (sys.exit:
    atexit and the runtime's exit run). Prints `ready` once the handler is in place."""
    import torch
    launched = 0

    def on_term(sig, frame):
        print("launched %d" % launched, flush=True)
        sys.exit(0)

    torch.ones(1, device="cuda").sum().item()
    signal.signal(signal.SIGTERM, on_term)
    print("ready", flush=True)
    while True:
        for _ in range(SIGTERM_BATCH):
            torch.cuda._sleep(SPIN_CYCLES)
            launched += 1
        torch.cuda.synchronize()
        time.sleep(0.005)


def wl_nvtx(args):
    """NVTX_STEPS ranges NVTX_NAME (torch.cuda.nvtx.range_push/pop), each around a kernel, inside one range
    NVTX_OUTER. Without a GPU (for testing here) the ranges are pushed around nothing."""
    import torch
    cuda = torch.cuda.is_available()
    x = torch.ones(1 << 16, device="cuda") if cuda else None
    torch.cuda.nvtx.range_push(NVTX_OUTER)
    for _ in range(NVTX_STEPS):
        torch.cuda.nvtx.range_push(NVTX_NAME)
        if cuda:
            x.mul_(1.0001)
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    if cuda:
        torch.cuda.synchronize()
    print("nvtx %s %d" % (NVTX_NAME, NVTX_STEPS))


WORKLOADS = {"fork": wl_fork, "graph": wl_graph, "nccl": wl_nccl, "compile": wl_compile, "sigterm": wl_sigterm,
             "nvtx": wl_nvtx}

# ---- reading reports ----


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def report_of(out):
    """The rank report of a profwrap output directory: rank0.json, else the only rank<R>.json; None if none."""
    rep = load_json(os.path.join(out, "rank0.json"))
    if rep is None:
        others = sorted(glob.glob(os.path.join(out, "rank*.json")))
        rep = load_json(others[0]) if len(others) == 1 else None
    return rep


def act(rep):
    return rep.get("gpu_activity") or {}


def kernel_total(rep):
    """Kernels CUPTI recorded: the named rows plus those past the row bound."""
    return sum(k.get("count", 0) for k in rep.get("kernels", [])) + \
        sum(k.get("count", 0) for k in rep.get("gpu_kernels_other", []))


def kernels_named(rep, pred):
    return sum(k.get("count", 0) for k in rep.get("kernels", []) if pred(k.get("name") or ""))


def is_nccl_kernel(name):
    """NCCL's kernels by their names as CUPTI gives them (mangled C++ or not), as collector/model/gpu_names.c."""
    m = re.match(r"_Z\d+", name)
    return name[m.end() if m else 0:].startswith(NCCL_KERNEL_PREFIXES)


def activity_line(rep):
    a = act(rep)
    return "status %s, cupti_path %s, cupti_version %s, records %s, dropped %s" % (
        a.get("status"), a.get("cupti_path"), a.get("cupti_version"), a.get("records"), a.get("dropped"))


# ---- judgements over reports (no GPU needed): each returns (verdict, text) ----


def judge_recording(rep):
    status = act(rep).get("status")
    why = act(rep).get("not_recorded_why")
    return (PASS if status == "recording" else FAIL,
            "gpu_activity.status %s%s" % (status, "" if status == "recording" else " (not_recorded_why: %s)" % why))


def judge_kernel_counts(rep, tp_count):
    ours = kernel_total(rep)
    text = "profwrap %d kernels (kernels[] + gpu_kernels_other[]; gpu_activity.kernels %s), torch.profiler %s" % (
        ours, act(rep).get("kernels"), tp_count)
    if tp_count is None:
        return FAIL, text + ": no torch.profiler count"
    return (PASS if ours == tp_count and ours > 0 else FAIL), text


def judge_linked(rep, least=0.95):
    a = act(rep)
    k, linked = a.get("kernels") or 0, a.get("kernels_linked") or 0
    share = linked / k if k else 0.0
    text = "%d of %d kernels linked to a wrapped call (%.2f %%; to CUDA API records only: %s, unlinked: %s)" % (
        linked, k, 100 * share, a.get("kernels_linked_api"), a.get("kernels_unlinked"))
    return (PASS if k and share >= least else FAIL), text


def judge_trace_order(trace_path, rep=None):
    """Flow arrows of the Chrome trace ("s" at the launching call's start, "f" at the GPU event's start, one
    id): for each that ends at a kernel, the call must not start after the kernel."""
    trace = load_json(trace_path)
    if trace is None:
        return FAIL, "no trace at %s" % trace_path
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            kernels[(e.get("pid"), e.get("tid"), e.get("ts"))] = e
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "f") and e.get("cat") == "launch":
            flows.setdefault(e.get("id"), {})[e["ph"]] = e
    to_kernels, bad, examples = 0, 0, []
    for fid, ends in flows.items():
        s, f = ends.get("s"), ends.get("f")
        if not s or not f or (f.get("pid"), f.get("tid"), f.get("ts")) not in kernels:
            continue
        to_kernels += 1
        if s["ts"] > f["ts"]:
            bad += 1
            if len(examples) < 3:
                k = kernels[(f.get("pid"), f.get("tid"), f.get("ts"))]
                examples.append("call at %.3f us after its kernel %s at %.3f us" % (
                    s["ts"], (k.get("name") or "?")[:60], f["ts"]))
    text = "%d flows from a call to a kernel (of %d kernels drawn; report: %s linked, %s to API records), %d with " \
           "the call starting after the kernel" % (to_kernels, len(kernels), act(rep or {}).get("kernels_linked"),
                                                   act(rep or {}).get("kernels_linked_api"), bad)
    if examples:
        text += ": " + "; ".join(examples)
    return (PASS if to_kernels and not bad else FAIL), text


def judge_shared(rep_alone, tp_alone, rep_both, tp_both):
    """torch.profiler inside profwrap: torch.profiler's count unchanged, and profwrap's either unchanged or
    profwrap stepped back (status shared_with_other_client, other_client_since_ns set)."""
    ours_alone, ours_both = kernel_total(rep_alone), kernel_total(rep_both)
    a = act(rep_both)
    status = a.get("status")
    text = "torch.profiler %s kernels alone, %s inside profwrap; profwrap %d kernels alone, %d with torch.profiler " \
           "(status %s)" % (tp_alone, tp_both, ours_alone, ours_both, status)
    if tp_both is None or tp_alone is None or tp_both != tp_alone:
        return FAIL, text + ": torch.profiler's count changed under profwrap"
    if status == "shared_with_other_client":
        since = a.get("other_client_since_ns")
        if since is None:
            return FAIL, text + ": profwrap stepped back but other_client_since_ns is not set"
        return PASS, text + ": profwrap stepped back for the other CUPTI client (other_client_since_ns %s)" % since
    if ours_both == ours_alone:
        return PASS, text + ": both profilers kept every kernel"
    return FAIL, text + ": profwrap's count changed and it did not say it stepped back"


def judge_drops(rep):
    a = act(rep)
    d, r = a.get("dropped"), a.get("buffers_refused")
    return (PASS if d == 0 and r == 0 else FAIL), "gpu_activity.dropped %s, buffers_refused %s (events dropped: " \
        "%s)" % (d, r, rep.get("dropped_events"))


def judge_fork_activity(rep):
    """What the report says of GPU activity in a run where only a fork child used CUDA (a figure, no verdict)."""
    a = act(rep)
    return "report: gpu_activity status %s, recorded %s, kernels %s, not_recorded_why %s, " \
        "fork_children_without_cuda %s" % (a.get("status"), a.get("recorded"), a.get("kernels"),
                                           a.get("not_recorded_why"), a.get("fork_children_without_cuda", "(absent)"))


def judge_graph(rep, replays, spins, kernel_nodes):
    """spin_kernel count exact; cuda_graphs launches sum to the replays, kernels to replays x kernel nodes."""
    got = kernels_named(rep, lambda n: "spin_kernel" in n)
    want = replays * spins
    lines = ["spin_kernel: profwrap %d, expected %d x %d = %d" % (got, replays, spins, want)]
    ok = got == want
    graphs = rep.get("cuda_graphs")
    if graphs is None:
        return FAIL, "; ".join(lines + ["no cuda_graphs in report"])
    launches = sum(g.get("launches", 0) for g in graphs)
    kernels = sum(g.get("kernels", 0) for g in graphs)
    lines.append("cuda_graphs: %d graphs, %d launches (expected %d), %d kernels (expected %s)" % (
        len(graphs), launches, replays, kernels,
        "%d x %d = %d" % (replays, kernel_nodes, replays * kernel_nodes) if kernel_nodes is not None
        else "at least %d: kernel nodes unknown" % want))
    ok = ok and launches == replays
    ok = ok and (kernels == replays * kernel_nodes if kernel_nodes is not None else kernels >= want)
    return (PASS if ok else FAIL), "; ".join(lines)


def judge_nccl(rep, all_reduces):
    """The all_reduce named in collectives; NCCL's kernels recorded and tied to NCCL calls."""
    colls = {c.get("name"): c.get("count", 0) for c in rep.get("collectives", [])}
    by_name = {k.get("name"): 0 for k in rep.get("kernels", []) if is_nccl_kernel(k.get("name") or "")}
    for k in rep.get("kernels", []):
        if k.get("name") in by_name:
            by_name[k["name"]] += k.get("count", 0)
    named = sum(by_name.values())
    by_call = {c["call"]: c.get("kernels", 0) for c in rep.get("gpu_time_by_call", [])
               if (c.get("call") or "").startswith("nccl") and c.get("kernels")}
    linked = sum(by_call.values())
    text = "collectives %s; kernels with an NCCL name: %d %s; kernels by NCCL call (gpu_time_by_call): %s" % (
        colls, named, sorted((n[:50], c) for n, c in by_name.items()), by_call)
    if colls.get("ncclAllReduce", 0) < all_reduces:
        return FAIL, text + ": collectives has not the %d ncclAllReduce calls" % all_reduces
    if not named and not linked:
        return FAIL, text + ": no GPU work of NCCL recorded"
    if linked < named:
        return FAIL, text + ": fewer kernels tied to NCCL calls than kernels with an NCCL name"
    return PASS, text


def judge_triton(rep):
    """Triton launches through the driver (cuLaunchKernel, not wrapped): its kernels are named by CUPTI and
    linked through CUPTI's driver API records (kernels_linked_api), or to a wrapped call they ran inside."""
    ran = {k["name"]: k.get("count", 0) for k in rep.get("kernels", []) if (k.get("name") or "").startswith("triton_")}
    act = rep.get("gpu_activity", {})
    text = "triton kernels CUPTI recorded: %s; kernels unlinked: %s of %s" % (
        ran or "none", act.get("kernels_unlinked"), act.get("kernels"))
    if not ran:
        return FAIL, text + ": no kernel named triton_* in kernels"
    if act.get("kernels_unlinked"):
        return FAIL, text + ": kernels tied to no call (neither a wrapped call nor a CUDA API record)"
    return PASS, text


def judge_sigterm(rep, own, least=0.99, slack=2):
    got = kernels_named(rep, lambda n: "spin_kernel" in n)
    text = "workload launched %s spin kernels, profwrap recorded %d (%.2f %%)" % (
        own, got, 100.0 * got / own if own else 0.0)
    if not own:
        return FAIL, text + ": the workload printed no count"
    return (PASS if own * least <= got <= own + slack else FAIL), text


def judge_nvtx(rep, name, count):
    rows = [r for r in rep.get("ranges", []) if r.get("name") == name]
    got = sum(r.get("count", 0) for r in rows)
    text = "ranges named %s: %d rows, count %d (expected %d), gpu_ns %s; nvtx %s" % (
        name, len(rows), got, count, [r.get("gpu_ns") for r in rows], rep.get("nvtx"))
    return (PASS if got == count else FAIL), text


# ---- running commands ----


class Skip(Exception):
    pass


class Result:
    def __init__(self, rc, out, err, timed_out, secs):
        self.rc, self.out, self.err, self.timed_out, self.secs = rc, out, err, timed_out, secs

    def tail(self, n=3):
        """The last n lines of its output, each cut to 200 characters (a traceback's last lines say why)."""
        lines = [x.strip()[:200] for x in (self.out + self.err).strip().splitlines() if x.strip()]
        return " | ".join(lines[-n:])

    def describe(self):
        if self.timed_out:
            return "timed out after %.0f s (%s)" % (self.secs, self.tail())
        return "exit %s (%s)" % (self.rc, self.tail())


def kill_group(p):
    """Ends the process group this script started for p (TERM, then KILL)."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


class Ctx:
    def __init__(self, profwrap, tmp, steps, budget):
        self.profwrap, self.tmp, self.steps = profwrap, tmp, steps
        self.deadline = time.monotonic() + budget
        self.budget = budget
        self.py = sys.executable
        self.main = None

    def timeout(self, want):
        """want, or what is left of the budget; a check that finds it spent fails (it was not verified)."""
        left = self.deadline - time.monotonic()
        if left < 10:
            raise CheckFailed("not run: the time budget (GPU_CHECK_BUDGET=%d s) is spent" % self.budget)
        return min(want, left)

    def run(self, argv, env=None, timeout=CHECK_TIMEOUT):
        timeout = self.timeout(timeout)
        e = dict(os.environ, PYTHONUNBUFFERED="1")
        e.update(env or {})
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, start_new_session=True,
                             universal_newlines=True, errors="replace")
        try:
            out, err = p.communicate(timeout=timeout)
            return Result(p.returncode, out, err, False, time.monotonic() - t0)
        except subprocess.TimeoutExpired:
            kill_group(p)
            out, err = p.communicate()
            return Result(None, out or "", err or "", True, time.monotonic() - t0)

    def outdir(self, tag):
        d = os.path.join(self.tmp, tag)
        n = 1
        while os.path.exists(d):
            n += 1
            d = os.path.join(self.tmp, "%s.%d" % (tag, n))
        return d

    def profile(self, tag, argv, **kw):
        """argv under `profwrap -q -o TMP/tag`: (Result, output directory, report or None)."""
        out = self.outdir(tag)
        r = self.run([self.profwrap, "-q", "-o", out, "--"] + argv, **kw)
        return r, out, report_of(out)

    def workload(self, name, *args):
        return [self.py, os.path.abspath(__file__), "workload", name] + list(args)


def step_ms(text):
    w = text.split()
    try:
        return float(w[w.index("step_ms_median") + 1])
    except (ValueError, IndexError):
        return None


def diff_pct(a, b):
    return 100.0 * (a - b) / b if b else float("inf")


class Main:
    """The training workload's four runs: plain, under profwrap, under torch.profiler, and torch.profiler
    inside profwrap. When the budget runs out, the runs not made say so to the checks that need them."""

    def __init__(self, ctx):
        train = [ctx.py, TRAIN, "--steps", str(ctx.steps)]
        self.tp_json = os.path.join(ctx.tmp, "train-tp.json")
        self.both_json = os.path.join(ctx.tmp, "train-tp-inside.json")
        self.plain = self.pw = self.tp = self.both = None
        self.rep = self.rep_both = self.tp_data = self.both_data = None
        self.pw_dir = self.both_dir = None
        self.not_run = None
        try:
            self.plain = ctx.run(train)
            self.pw, self.pw_dir, self.rep = ctx.profile("train-profwrap", train)
            self.tp = ctx.run(train + ["--torch-profiler", self.tp_json])
            self.tp_data = load_json(self.tp_json)
            self.both, self.both_dir, self.rep_both = ctx.profile("train-tp-inside",
                                                                  train + ["--torch-profiler", self.both_json])
            self.both_data = load_json(self.both_json)
        except CheckFailed as e:
            self.not_run = str(e)

    def runs(self):
        return (("plain", self.plain), ("profwrap", self.pw), ("torch.profiler", self.tp),
                ("torch.profiler in profwrap", self.both))

    def need(self, *what):
        for name in what:
            r, ok = {"profwrap": (self.pw, self.rep is not None), "plain": (self.plain, True),
                     "torch.profiler": (self.tp, self.tp_data is not None),
                     "torch.profiler in profwrap": (self.both, self.rep_both is not None and self.both_data)}[name]
            if r is None:
                raise CheckFailed("the training run %s was %s" % (name, self.not_run or "not run"))
            if r.timed_out:
                raise CheckFailed("the training run %s %s" % (name, r.describe()))
            if r.rc != 0 or not ok:
                raise CheckFailed("the training run %s failed (exit %s; its output's end is above)" % (name, r.rc))

    def tp_count(self, data):
        return (data or {}).get("kernels", {}).get("count")


class CheckFailed(Exception):
    pass


def print_main_figures(m):
    """The figures the script has always printed: step times, kernel time, calls against torch.profiler."""
    for label, r in m.runs():
        if r is None:
            print("%-27s %s" % (label + ":", m.not_run or "not run"))
            continue
        line = (r.out.strip().splitlines() or ["(no output)"])[-1]
        print("%-27s %s" % (label + ":", line if r.rc == 0 else r.describe()))
    if None in (m.plain, m.pw, m.tp):
        return
    plain, ours, theirs = step_ms(m.plain.out), step_ms(m.pw.out), step_ms(m.tp.out)
    if plain and ours and theirs:
        print("median step: plain %.3f ms, profwrap %.3f ms (%+.1f %%), torch.profiler %.3f ms (%+.1f %%)" % (
            plain, ours, diff_pct(ours, plain), theirs, diff_pct(theirs, plain)))
    if m.rep is None or m.tp_data is None:
        return
    pw, tp = m.rep, m.tp_data
    k_us = sum(k.get("total_ns", 0) for k in pw.get("kernels", [])) / 1e3
    k_us += sum(k.get("total_ns", 0) for k in pw.get("gpu_kernels_other", [])) / 1e3
    t_us = tp["kernels"]["total_us"]
    print("GPU kernel time: profwrap %.0f us, torch.profiler %.0f us (%+.2f %%)" % (k_us, t_us, diff_pct(k_us, t_us)))
    for g in pw.get("gpus", []):
        print("GPU %d: busy %.1f %% of %.3f s, %d idle gaps, longest %.3f ms" % (
            g["device"], 100.0 * g["busy_ns"] / max(g["span_ns"], 1), g["span_ns"] / 1e9, g["idle_gaps"],
            g["longest_idle_ns"] / 1e6))
    for f in pw.get("findings", []):
        print("finding %s (%.1f %% of wall): %s" % (f["id"], 100 * f["share"], f["evidence"]))
    gpu = ("cudart", "cublas", "cublaslt", "cudnn", "nccl")
    ours = {c["name"]: c for c in pw.get("calls", []) if c.get("domain") in gpu}
    print("%-36s %12s %12s %14s %14s" % ("call", "profwrap", "torch.prof", "profwrap us", "torch.prof us"))
    for name in sorted(set(ours) | set(tp["calls"])):
        o, t = ours.get(name), tp["calls"].get(name)
        print("%-36s %12s %12s %14s %14s" % (name, o["count"] if o else "-", t["count"] if t else "-",
                                              "%.0f" % (o["total_ns"] / 1e3) if o else "-",
                                              "%.0f" % t["total_us"] if t else "-"))
    print("profwrap: %s events, %s dropped" % (pw.get("events"), pw.get("dropped_events")))


# ---- the checks: each returns (verdict, text) or raises Skip / CheckFailed ----

CHECKS = []


def check(key, title):
    def add(fn):
        CHECKS.append((key, title, fn))
        return fn
    return add


@check("1", "GPU activity recorded (training run)")
def c_recording(ctx):
    ctx.main.need("profwrap")
    return judge_recording(ctx.main.rep)


@check("2", "kernel count equals torch.profiler's")
def c_counts(ctx):
    ctx.main.need("profwrap", "torch.profiler")
    return judge_kernel_counts(ctx.main.rep, ctx.main.tp_count(ctx.main.tp_data))


@check("3", ">= 95 % of kernels linked to their wrapped call")
def c_linked(ctx):
    ctx.main.need("profwrap")
    return judge_linked(ctx.main.rep)


@check("4", "wrapped call starts before its kernel (trace flows)")
def c_order(ctx):
    ctx.main.need("profwrap")
    traces = sorted(glob.glob(os.path.join(ctx.main.pw_dir, "rank0.trace.json")) or
                    glob.glob(os.path.join(ctx.main.pw_dir, "*.trace.json")))
    if not traces:
        return FAIL, "no *.trace.json in %s" % ctx.main.pw_dir
    return judge_trace_order(traces[0], ctx.main.rep)


@check("5", "torch.profiler inside profwrap keeps both counts")
def c_shared(ctx):
    m = ctx.main
    m.need("profwrap", "torch.profiler", "torch.profiler in profwrap")
    return judge_shared(m.rep, m.tp_count(m.tp_data), m.rep_both, m.tp_count(m.both_data))


@check("12", "no dropped records, no refused buffers (training run)")
def c_drops(ctx):
    ctx.main.need("profwrap")
    return judge_drops(ctx.main.rep)


def profile_or_explain(ctx, tag, argv, what, timeout=CHECK_TIMEOUT, done=None):
    """argv under profwrap: (Result, output directory, report). When it fails (exit status not 0, or done(out)
    false), runs it without profwrap to tell whose failure it is: Skip when it fails there too, CheckFailed
    when only under profwrap. A timeout under profwrap fails at once (a rerun would double a hang)."""
    r, out, rep = ctx.profile(tag, argv, timeout=timeout)
    if r.rc == 0 and (done is None or done(r.out)):
        if rep is None:
            raise CheckFailed("no report in %s" % out)
        return r, out, rep
    if r.timed_out:
        raise CheckFailed("%s under profwrap %s" % (what, r.describe()))
    plain = ctx.run(argv, timeout=timeout)
    if plain.rc != 0 or (done is not None and not done(plain.out)):
        raise Skip("%s fails without profwrap too: %s" % (what, plain.describe()))
    raise CheckFailed("%s fails only under profwrap: %s" % (what, r.describe()))


@check("6", "fork child after `import torch` can use CUDA")
def c_fork(ctx):
    r, out, rep = profile_or_explain(ctx, "fork", ctx.workload("fork"), "the fork child's CUDA",
                                     done=lambda text: "child ok" in text)
    return PASS, "the child used CUDA and exited 0; " + judge_fork_activity(rep)


@check("7", "CUDA graph replays: kernels counted, cuda_graphs")
def c_graph(ctx):
    r, out, rep = profile_or_explain(ctx, "graph", ctx.workload("graph"), "the CUDA graph workload")
    m = re.search(r"graph replays (\d+) spins (\d+) kernel_nodes (\S+)", r.out)
    if not m:
        return FAIL, "the workload printed no summary: %s" % r.describe()
    nodes = int(m.group(3)) if m.group(3).isdigit() else None
    tp_json = os.path.join(ctx.tmp, "graph-tp.json")
    t = ctx.run(ctx.workload("graph", "--torch-profiler", tp_json))
    tp = load_json(tp_json) if t.rc == 0 else None
    verdict, text = judge_graph(rep, int(m.group(1)), int(m.group(2)), nodes)
    text += "; torch.profiler (separate run): %s" % (
        "%d kernels, %d spin_kernel; profwrap %d kernels" % (tp["kernels"], tp["spin_kernels"], kernel_total(rep))
        if tp else "failed: " + t.describe())
    return verdict, text


@check("8", "one-rank NCCL: collectives and their kernels")
def c_nccl(ctx):
    r, out, rep = profile_or_explain(ctx, "nccl", ctx.workload("nccl"), "one-rank NCCL")
    m = re.search(r"nccl all_reduce (\d+)", r.out)
    note = " ".join(line for line in r.out.splitlines() if line.startswith("nccl p2p self"))
    verdict, text = judge_nccl(rep, int(m.group(1)) if m else 2 * NCCL_OPS)
    return verdict, (note + "; " if note else "") + text


@check("9", "torch.compile's Triton kernels named and linked")
def c_compile(ctx):
    r, out, rep = profile_or_explain(ctx, "compile", ctx.workload("compile"), "torch.compile",
                                     timeout=COMPILE_TIMEOUT)
    return judge_triton(rep)


@check("10", "SIGTERM after 5 s keeps >= 99 % of kernels")
def c_sigterm(ctx):
    out = ctx.outdir("sigterm")
    timeout = ctx.timeout(CHECK_TIMEOUT)
    argv = [ctx.profwrap, "-q", "-o", out, "--"] + ctx.workload("sigterm")
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ,
                         PYTHONUNBUFFERED="1"), start_new_session=True, universal_newlines=True, errors="replace")
    lines = []
    try:
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        ready = False
        while not ready and time.monotonic() - t0 < timeout / 2:
            if sel.select(1):
                line = p.stdout.readline()
                if not line:
                    break  # it ended
                lines.append(line)
                ready = line.strip() == "ready"
        if not ready:
            kill_group(p)
            p.wait()
            said = [x.strip()[:200] for x in lines if x.strip()][-3:]
            return FAIL, "the workload under profwrap never said ready (exit %s): %s" % (p.returncode, " | ".join(said))
        time.sleep(SIGTERM_AFTER_S)
        p.send_signal(signal.SIGTERM)  # to profwrap, which passes it on, as a batch system's would reach it
        rest, _ = p.communicate(timeout=max(timeout - (time.monotonic() - t0), 10))
        lines.extend(rest.splitlines(True))
    except subprocess.TimeoutExpired:
        kill_group(p)
        return FAIL, "profwrap did not end within %.0f s of SIGTERM" % timeout
    text = "".join(lines)
    m = re.search(r"launched (\d+)", text)
    if p.returncode != 0:
        return FAIL, "exit %s after SIGTERM (expected 0: the handler exits): %s" % (
            p.returncode, " | ".join(text.strip().splitlines()[-6:]))
    rep = report_of(out)
    if rep is None:
        return FAIL, "no report in %s" % out
    return judge_sigterm(rep, int(m.group(1)) if m else None)


@check("11", 'CUDA_VISIBLE_DEVICES="" does not crash')
def c_novisible(ctx):
    argv = [ctx.py, "-c", "import torch; print(torch.cuda.is_available())"]
    env = {"CUDA_VISIBLE_DEVICES": ""}
    plain = ctx.run(argv, env=env)
    r, out, rep = ctx.profile("no-visible", argv, env=env)
    said = [x.out.strip().splitlines()[-1] if x.out.strip() else "" for x in (plain, r)]
    text = "without profwrap: exit %s, printed %r; under profwrap: exit %s, printed %r%s" % (
        plain.rc, said[0], r.rc, said[1], "; report gpu_activity.status %s" % act(rep).get("status") if rep else "")
    ok = plain.rc == 0 and r.rc == 0 and said == ["False", "False"]
    if not ok and r.rc != 0:
        text += " (%s)" % r.describe()
    return (PASS if ok else FAIL), text


@check("13", "NVTX ranges from torch.cuda.nvtx recorded")
def c_nvtx(ctx):
    r, out, rep = ctx.profile("nvtx", ctx.workload("nvtx"))
    if r.rc != 0:
        return FAIL, "the NVTX workload failed under profwrap: %s" % r.describe()
    if rep is None:
        return FAIL, "no report in %s" % out
    verdict, text = judge_nvtx(rep, NVTX_NAME, NVTX_STEPS)
    v2, t2 = judge_nvtx(rep, NVTX_OUTER, 1)
    return (verdict if v2 == PASS else FAIL), text + "; " + t2


@check("nvcc", "nvcc <<<>>> launches counted by name and linked")
def c_nvcc(ctx):
    """tests/workloads/nvcc_launches.cu (built by make where nvcc is) against the runtime PyTorch brought."""
    import importlib.util
    site = os.path.dirname(os.path.dirname(importlib.util.find_spec("torch").origin))
    libs = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcudart.so.1*")))
    texts, ok, ran = [], True, 0
    for name in ("nvcc_launches", "nvcc_launches_ptsz"):
        prog = os.path.join(REPO, "build", "workloads", name)
        if not os.access(prog, os.X_OK):
            texts.append("%s not built (no nvcc where profwrap was built)" % name)
            continue
        env = {"LD_LIBRARY_PATH": ":".join(libs[:1] + [p for p in [os.environ.get("LD_LIBRARY_PATH")] if p])}
        r, out, rep = ctx.profile(name, [prog], env=env)
        ran += 1
        if rep is None:
            ok = False
            texts.append("%s: no report (%s)" % (name, r.describe()))
            continue
        want = {}
        for line in (r.out + r.err).splitlines():
            w = line.split()
            if w[:2] == ["expect", "kernel"]:
                want[w[2]] = int(w[3])
        got = {k["name"]: k["launches"] for k in rep.get("kernels_launched", [])}
        a = act(rep)
        good = bool(want) and all(got.get(n, 0) == c for n, c in want.items()) and \
            a.get("kernels_linked") == sum(want.values())
        ok = ok and good
        texts.append("%s (exit %s): launches %s, expected %s; kernels %s, linked %s" % (
            name, r.rc, {n: got.get(n, 0) for n in want}, want, a.get("kernels"), a.get("kernels_linked")))
    if not ran:
        raise Skip("; ".join(texts))
    return (PASS if ok else FAIL), "; ".join(texts)


ORDER = ["1", "2", "3", "4", "5", "12", "6", "7", "8", "9", "10", "11", "13", "nvcc"]
MAIN_CHECKS = {"1", "2", "3", "4", "5", "12"}


def cmd_run(a):
    ctx = Ctx(os.path.abspath(a.profwrap), os.path.abspath(a.tmp), a.steps, a.budget)
    only = set(a.only.split(",")) if a.only else None
    table = {key: (title, fn) for key, title, fn in CHECKS}
    keys = [k for k in ORDER if only is None or k in only]
    results = []
    main_error = None
    if any(k in MAIN_CHECKS for k in keys):
        t0 = time.monotonic()
        try:
            ctx.main = Main(ctx)
        except Exception as e:
            main_error = "the training runs failed: %s: %s" % (type(e).__name__, e)
        if ctx.main is not None:
            if ctx.main.rep is not None:
                print("profwrap gpu_activity: %s" % activity_line(ctx.main.rep))
            print("training runs (%d steps, %.0f s):" % (ctx.steps, time.monotonic() - t0))
            print_main_figures(ctx.main)
            print()
    for key in keys:
        title, fn = table[key]
        t0 = time.monotonic()
        try:
            if key in MAIN_CHECKS and ctx.main is None:
                raise CheckFailed(main_error)
            verdict, text = fn(ctx)
        except Skip as e:
            verdict, text = SKIP, str(e)
        except CheckFailed as e:
            verdict, text = FAIL, str(e)
        except Exception as e:
            verdict, text = FAIL, "the check itself failed: %s: %s" % (
                type(e).__name__, traceback.format_exc().strip().splitlines()[-1] if str(e) else e)
        results.append((key, title, verdict))
        print("%s %-4s %s (%.1f s)" % (verdict, key, title, time.monotonic() - t0))
        print("          %s" % text)
        sys.stdout.flush()
    print()
    if ctx.main is not None and ctx.main.rep is not None:
        txt = os.path.join(ctx.main.pw_dir, "rank0.txt")
        try:
            with open(txt) as f:
                body = f.read()
            for head in ("What to fix first", "GPU kernels"):
                i = body.find(head)
                if i >= 0:
                    j = body.find("\n\n", i)
                    print(body[i:j if j >= 0 else len(body)])
                    print()
        except OSError:
            pass
    counts = {v: sum(1 for r in results if r[2] == v) for v in (PASS, FAIL, SKIP)}
    print("gpu-check: %d PASS, %d FAIL, %d SKIP%s" % (
        counts[PASS], counts[FAIL], counts[SKIP],
        "; failed: " + ", ".join("%s (%s)" % (k, t) for k, t, v in results if v == FAIL) if counts[FAIL] else ""))
    return 1 if counts[FAIL] else 0


def cmd_judge(a):
    """The report-only checks over one output directory: for testing the reading of reports without a GPU."""
    rep = report_of(a.dir)
    if rep is None:
        print("no rank report in %s" % a.dir)
        return 1
    print("profwrap gpu_activity: %s" % activity_line(rep))
    trace = (sorted(glob.glob(os.path.join(a.dir, "*.trace.json"))) or [os.path.join(a.dir, "rank0.trace.json")])[0]
    tp = load_json(a.torch_profiler) if a.torch_profiler else None
    judged = [("recording", judge_recording(rep)), ("linked", judge_linked(rep)),
              ("trace order", judge_trace_order(trace, rep)), ("drops", judge_drops(rep)),
              ("nvtx", judge_nvtx(rep, a.nvtx_name, a.nvtx_count)), ("nccl", judge_nccl(rep, 1)),
              ("triton", judge_triton(rep)), ("graph", judge_graph(rep, GRAPH_REPLAYS, GRAPH_SPINS, None))]
    if tp:
        judged.append(("kernel counts", judge_kernel_counts(rep, tp.get("kernels", {}).get("count"))))
    for name, (verdict, text) in judged:
        print("%s %-13s %s" % (verdict, name, text))
    print("kernels: %d; fork view: %s" % (kernel_total(rep), judge_fork_activity(rep)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("run")
    r.add_argument("--profwrap", required=True)
    r.add_argument("--tmp", required=True)
    r.add_argument("--steps", type=int, default=50)
    r.add_argument("--only", help="comma-separated check keys (%s)" % ",".join(ORDER))
    r.add_argument("--budget", type=float, default=float(os.environ.get("GPU_CHECK_BUDGET", 450)),
                   help="seconds all checks may take together")
    w = sub.add_parser("workload")
    w.add_argument("name", choices=sorted(WORKLOADS))
    w.add_argument("args", nargs=argparse.REMAINDER)
    j = sub.add_parser("judge")
    j.add_argument("dir")
    j.add_argument("--torch-profiler", metavar="JSON")
    j.add_argument("--nvtx-name", default=NVTX_NAME)
    j.add_argument("--nvtx-count", type=int, default=NVTX_STEPS)
    a = ap.parse_args()
    if a.cmd == "workload":
        WORKLOADS[a.name](a.args)
        return 0
    if a.cmd == "judge":
        return cmd_judge(a)
    if a.cmd == "run":
        return cmd_run(a)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
