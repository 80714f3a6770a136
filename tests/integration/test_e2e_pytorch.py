"""End to end on real PyTorch and PyTorch Lightning (installed by `make e2e`; skipped without them).

1. tests/e2e/train.py, without and with profwrap: an MLP trained for 3 epochs of 8 steps by a DataLoader with two
   workers (forked afresh each epoch) reading 64 files of 1024 bytes, each step an NVTX range "step" holding
   "forward", "backward" and "optimizer", each epoch a range "epoch", the second epoch under emit_nvtx (every
   autograd operation an NVTX range). The script writes what it did to a JSON file; the report must show:
   the ranges with exactly the script's counts and nesting, the aten::linear ranges emit_nvtx made (3 per step
   of that epoch), the six workers as processes of the main one that exited 0, every dataset file read once
   per epoch (read_bytes = 1024 x epochs, the total = what the workers counted), and torch's extension module
   among the libraries with its load time. Its losses must be those of the run without profwrap.
   Then once more with --capture-range=nvtx:epoch --capture-count=1: only the first epoch's ranges and reads,
   its two workers recording inside the window they inherited.
2. tests/e2e/lightning_train.py, without and with profwrap: Lightning's hook actions wrapped both by
   SimpleProfiler and by PyTorchProfiler(emit_nvtx=True). For every action SimpleProfiler timed, profwrap's
   Phases must hold the same number of calls (its NVTX ranges are named "[pl][profile]<action>, op_id = <n>":
   the report takes the op_id out, one row per action; both sides are compared with digits folded),
   and, as each NVTX range lies inside SimpleProfiler's interval of the same call, no more total time (with a
   tolerance for the clocks). The two tables are printed side by side.

3. `import torch` with the CUDA toolkit's stub libcuda.so.1 first on LD_LIBRARY_PATH, as build containers and CI
   images have it: the same output and exit status under profwrap as without (libcupti crashes over a stub
   driver, so it must not be called), and the report says why GPU activity is off.

4. tests/e2e/cudnn_calls.py: cuDNN's real libcudnn.so.9, a shim that finds each function in its sub-libraries
   by dlsym at the first call (as under every PyTorch convolution), called through ctypes with no GPU: the same
   output as without profwrap (a dlsym answered with profwrap's wrapper made the shim call itself until the
   stack overflowed), and its one cudnnBackendExecute recorded with its error.

The interpreter is $PROFWRAP_E2E_PYTHON, else $PROFWRAP_E2E_VENV/bin/python, else
~/.cache/profwrap/e2e-venv/bin/python. $PROFWRAP_E2E_OPTS adds profwrap options (split on blanks).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

E2E = os.path.join(REPO, "tests", "e2e")
DEFAULT_VENV = os.path.join(os.path.expanduser("~"), ".cache", "profwrap", "e2e-venv")
NOT_INSTALLED = "PyTorch not installed: run `make e2e` (installs it into ~/.cache/profwrap/e2e-venv)"
EPOCHS = 3
LIGHTNING_EPOCHS = 3  # 24 batches: each per-batch action one row of 24 calls, whatever its op_ids
RUN_TIMEOUT = 50
NVTX_STEP_NAMES = ("epoch", "step", "forward", "backward", "optimizer")
# Depth of each of train.py's ranges (0 = outermost).
NVTX_DEPTH = {"epoch": 0, "step": 1, "forward": 2, "backward": 2, "optimizer": 2}


def e2e_python():
    py = os.environ.get("PROFWRAP_E2E_PYTHON") or os.path.join(
        os.environ.get("PROFWRAP_E2E_VENV") or DEFAULT_VENV, "bin", "python")
    if not os.access(py, os.X_OK):
        raise Skip("%s (no %s)" % (NOT_INSTALLED, py))
    r = run([py, "-c", "import torch, lightning; print(torch.__version__, lightning.__version__)"], timeout=120)
    if r.rc != 0:
        last = (r.err.strip().splitlines() or ["?"])[-1]
        raise Skip("%s (%s cannot import torch and lightning: %s)" % (NOT_INSTALLED, py, last))
    return py, r.out.split()


def profwrap_opts():
    return os.environ.get("PROFWRAP_E2E_OPTS", "").split()


def ranges(rep):
    check("ranges" in rep, "rank0.json has no \"ranges\" (NVTX ranges); its keys: %r", sorted(rep))
    return rep["ranges"]


def range_rows(rep, name, domain=""):
    return [r for r in ranges(rep) if r["name"] == name and r["domain"] == domain]


def describe_ranges(rep, limit=40):
    rows = ranges(rep)
    lines = ["  %-60s depth %d %-5s count %5d total %.6f s folded %d" % (
        short(r["name"], 60), r["depth"], r["kind"], r["count"], r["total_ns"] / 1e9, r["folded"]) for r in rows[:limit]]
    if len(rows) > limit:
        lines.append("  ... %d more rows" % (len(rows) - limit))
    return "\n".join(lines)


def phases_section(out, lines=30):
    """The first lines of rank0.txt's Phases table."""
    text = open(os.path.join(out, "rank0.txt")).read().splitlines()
    for i, line in enumerate(text):
        if line.startswith("Phases"):
            return "\n".join(text[i:i + lines])
    raise Fail("rank0.txt has no Phases section")


def timed(what, args, out=None, opts=()):
    """Runs args plainly (out None) or under profwrap; returns (Result, report or None)."""
    if out is None:
        r = run(args, timeout=RUN_TIMEOUT)
        if r.rc != 0:
            raise Fail("%s without profwrap failed (the workload itself, not profwrap)\n%s" % (what, r.describe()))
        note("%s without profwrap: %.2f s" % (what, r.seconds))
        return r, None
    r, rep = profile(args, out, opts=list(opts) + profwrap_opts(), timeout=RUN_TIMEOUT)
    note("%s under profwrap: %.2f s (wall in the report %.2f s, %d events, %d dropped)" % (
        what, r.seconds, rep["wall_ns"] / 1e9, rep["events"], rep["dropped_events"]))
    return r, rep


# ---- 1. plain PyTorch ----

def test_train(py):
    script = os.path.join(E2E, "train.py")
    base = [py, script, "--epochs", str(EPOCHS)]
    timed("train.py", base + ["--data", os.path.abspath("data-plain"), "--counters", "plain.json"])
    plain = load_json("plain.json")
    r, rep = timed("train.py", base + ["--data", os.path.abspath("data"), "--counters", "counters.json"], "OUT-train")
    c = load_json("counters.json")
    note("train.py: %d steps, workers %r, emit_nvtx mode: %s; import %.2f s, training %.2f s (without profwrap: "
         "import %.2f s, training %.2f s)" % (c["step"], c["worker_pids"], c["emit_nvtx_mode"], c["import_s"],
                                               c["train_s"], plain["import_s"], plain["train_s"]))
    check_eq(c["losses"], plain["losses"], "train.py's losses under profwrap vs without")
    check_eq(rep["dropped_events"], 0, "dropped_events")

    # The workers: processes of the main process, one per worker and epoch, all exited 0.
    main_pid = c["main_pid"]
    procs = {p["pid"]: p for p in rep["processes"]}
    pctx = "\nprocesses:\n" + describe_processes(rep)
    check(main_pid in procs, "the main process %d is not in processes[]%s", main_pid, pctx)
    check_eq(len(c["worker_pids"]), c["num_workers"] * c["epochs"], "workers the script saw")
    for pid in c["worker_pids"]:
        p = procs.get(pid)
        check(p is not None, "worker %d is not in processes[]%s", pid, pctx)
        check_eq((p["ppid"], p["how"], p["exit_code"]), (main_pid, "exited", 0), "worker %d (ppid, how, exit)" % pid + pctx)
        check("train.py" in p["argv"], "worker %d argv %r", pid, p["argv"])
        check(p["events"] > 0, "worker %d has no events", pid)
    check_eq(procs[main_pid]["how"], "exited", "how the main process ended")

    # The dataset: written once by the main process, read whole once per epoch by the workers.
    fctx = "\nfiles (dataset only):\n" + "\n".join("  %r" % f for f in rep["files"] if "/data/sample-" in f["path"])
    for path in c["files"]:
        f = need_file(rep, path)
        check_eq((f["opens"], f["read_bytes"], f["writes"], f["write_bytes"]),
                 (1 + c["epochs"], c["record_bytes"] * c["epochs"], 1, c["record_bytes"]),
                 "%s (opens, read_bytes, writes, write_bytes)" % path + fctx)
    worker_bytes = sum(sum(e.values()) for e in c["bytes_read"])
    file_bytes = sum(need_file(rep, p)["read_bytes"] for p in c["files"])
    check_eq(file_bytes, c["dataset_bytes"] * c["epochs"], "read_bytes of the dataset files")
    check_eq(file_bytes, worker_bytes, "read_bytes of the dataset files vs the bytes the workers counted")

    # Library loads: torch's extension module, loaded once, with its time; the loads of torch and its CUDA
    # wheels are most of the import.
    libs = rep["libraries"]
    tc = [l for l in libs if re.search(r"/torch/_C\.[^/]*\.so$", l["path"])]
    check(len(tc) == 1, "libraries[] entries for torch/_C*.so: %r (all: %r)", tc, [l["path"] for l in libs])
    check_eq((tc[0]["loads"], tc[0]["failures"]), (1, 0), "(loads, failures) of %s" % tc[0]["path"])
    check(0 < tc[0]["load_ns"] < c["import_s"] * 1e9, "load_ns of %s is %r (import took %s s)", tc[0]["path"],
          tc[0]["load_ns"], c["import_s"])
    site = [l for l in libs if "/site-packages/" in l["path"]]
    top = sorted(site, key=lambda l: -l["load_ns"])[:6]
    note("library loads: %d, %.3f s in all; from site-packages %d, %.3f s (import torch took %.2f s); the longest:\n%s" % (
        len(libs), sum(l["load_ns"] for l in libs) / 1e9, len(site), sum(l["load_ns"] for l in site) / 1e9,
        c["import_s"], "\n".join("  %8.1f ms  %s" % (l["load_ns"] / 1e6, l["path"].split("/site-packages/")[-1])
                                 for l in top)))

    ctx = "\nranges:\n" + describe_ranges(rep)

    # NVTX: every range the script opened, with its count and depth.
    for name in NVTX_STEP_NAMES:
        rows = range_rows(rep, name)
        check(rows, "no ranges[] row named %r%s", name, ctx)
        check_eq(sum(x["count"] for x in rows), c[name], "count of NVTX range %r" % name + ctx)
        check_eq(sorted((x["depth"], x["kind"]) for x in rows), [(NVTX_DEPTH[name], "push")],
                 "(depth, kind) of the rows of %r" % name + ctx)
    nv = rep.get("nvtx", {})
    check_eq((nv.get("unclosed"), nv.get("unmatched_pops")), (0, 0), "nvtx unclosed, unmatched_pops (%r)" % nv)
    # emit_nvtx's ranges: nn.Linear.forward is one aten::linear, 3 Linear layers per step of that epoch. The names
    # carry a unique ", seq = N, op_id = N": the report takes those out, so the action is one row.
    steps_per_epoch = c["step"] // c["epochs"]
    linear = [x for x in ranges(rep) if x["name"] == "aten::linear" or x["name"].startswith("aten::linear,")]
    check_eq(sum(x["count"] for x in linear), 3 * steps_per_epoch, "count of emit_nvtx's aten::linear ranges" + ctx)
    check_eq([(x["name"], x["folded"]) for x in linear], [("aten::linear", 0)],
             "emit_nvtx's aten::linear rows (name, folded)" + ctx)

    note("\nrank0.txt, train.py:\n" + phases_section("OUT-train", 16))


def test_capture(py):
    """--capture-range=nvtx:epoch --capture-count=1: only the first epoch, its DataLoader workers included
    (forked inside the window, they share it); the later epochs' workers record nothing."""
    script = os.path.join(E2E, "train.py")
    args = [py, script, "--epochs", str(EPOCHS), "--data", os.path.abspath("data-capture"), "--counters",
            "capture.json"]
    r, rep = timed("train.py, first epoch only", args, "OUT-capture",
                   ["--capture-range=nvtx:epoch", "--capture-count=1"])
    c = load_json("capture.json")
    cap = rep.get("capture", {})
    check_eq(cap.get("mode"), "windows", "capture.mode (%r)" % cap)
    ctx = "\ncapture: %r\nranges:\n%s" % (cap, describe_ranges(rep))
    steps_per_epoch = c["step"] // c["epochs"]
    for name, n in (("epoch", 1), ("step", steps_per_epoch), ("forward", steps_per_epoch)):
        check_eq(sum(x["count"] for x in range_rows(rep, name)), n, "count of %r in the first epoch's window" % name + ctx)
    check_eq(sum(x["count"] for x in ranges(rep) if x["name"].startswith("aten::")), 0,
             "emit_nvtx's ranges (second epoch, outside the window)" + ctx)
    first = set(int(pid) for pid in c["bytes_read"][0])
    windows = set(w["pid"] for w in cap.get("windows", []))
    check(first <= windows, "the first epoch's workers %r have no capture window: %r", sorted(first), cap)
    later = set(c["worker_pids"]) - first
    check(not (later & windows), "later workers %r have capture windows: %r", sorted(later & windows), cap)
    read = sum(f["read_bytes"] for f in rep["files"] if f["path"] in set(c["files"]))
    check_eq(read, sum(c["bytes_read"][0].values()), "dataset bytes read inside the window (the first epoch's)")
    note("first epoch only: %d of %d steps, %d dataset bytes, windows %r" % (
        steps_per_epoch, c["step"], read, [(w["pid"], w["reason"]) for w in cap["windows"]]))


# ---- 2. Lightning ----

def fold(name):
    """An action's name as profwrap's report may write it: without PyTorchProfiler's "[pl][profile]" prefix,
    digits folded to "#" (the report has no ", op_id = N" suffix: test_lightning checks)."""
    if name.startswith("[pl][profile]"):
        name = name[len("[pl][profile]"):]
    return re.sub(r"\d+", "#", name)


def display(action, width=58):
    action = re.sub(r"\{[^}]*\}", "{...}", action)
    return action if len(action) <= width else "..." + action[-(width - 3):]


def side_by_side(simple, prof):
    """simple: {folded action: (calls, total s)}; prof: {folded action: (calls, total s)}. A text table."""
    head = "| %-58s | %9s | %11s | %9s | %11s | %8s |" % ("Action", "Simple", "Simple", "profwrap", "profwrap",
                                                          "profwrap")
    head2 = "| %-58s | %9s | %11s | %9s | %11s | %8s |" % ("", "calls", "total (s)", "calls", "total (s)", "/ Simple")
    sep = "-" * len(head)
    rows = [sep, head, head2, sep]
    for action, (n, t) in sorted(simple.items(), key=lambda kv: -kv[1][1]):
        pn, pt = prof.get(action, (0, 0.0))
        rows.append("| %-58s | %9d | %11.6f | %9d | %11.6f | %7.1f%% |" % (
            display(action), n, t, pn, pt, 100.0 * pt / t if t else 0.0))
    rows.append(sep)
    return "\n".join(rows)


def test_lightning(py):
    script = os.path.join(E2E, "lightning_train.py")
    base = [py, script, "--epochs", str(LIGHTNING_EPOCHS)]
    timed("lightning_train.py", base + ["--out", os.path.abspath("lightning-plain")])
    r, rep = timed("lightning_train.py", base + ["--out", os.path.abspath("lightning")], "OUT-lightning")
    c = load_json(os.path.join("lightning", "counters.json"))
    durations = load_json(os.path.join("lightning", "simple.json"))
    check(durations, "SimpleProfiler recorded no action")
    note("lightning_train.py: lightning %s, %d steps, emit_nvtx mode: %s; import %.2f s, fit %.2f s" % (
        c["lightning"], c["steps"], c["emit_nvtx_mode"], c["import_s"], c["fit_s"]))
    check_eq(rep["dropped_events"], 0, "dropped_events")

    simple = {}
    for action, ds in durations.items():
        n, t = simple.get(fold(action), (0, 0.0))
        simple[fold(action)] = (n + len(ds), t + sum(ds))
    prof = {}
    for x in ranges(rep):
        if x["domain"] == "" and x["name"].startswith("[pl][profile]"):
            n, t = prof.get(fold(x["name"]), (0, 0.0))
            prof[fold(x["name"])] = (n + x["count"], t + x["total_ns"] / 1e9)
    table = side_by_side(simple, prof)
    note("\nLightning's hook actions: SimpleProfiler (time.perf_counter around each action, in Python) and profwrap "
         "(the NVTX range PyTorchProfiler(emit_nvtx=True) opens inside it), one run:\n" + table)
    with open("side-by-side.txt", "w") as f:
        f.write(table + "\n")

    ctx = "\n" + table + "\nranges:\n" + describe_ranges(rep, 80)
    missing = sorted(a for a in simple if a not in prof)
    check(not missing, "actions SimpleProfiler timed that profwrap has no NVTX range for: %r%s", missing, ctx)
    extra = sorted(a for a in prof if a not in simple)
    check(not extra, "NVTX ranges [pl][profile]... that SimpleProfiler did not time: %r%s", extra, ctx)
    for action, (n, t) in simple.items():
        pn, pt = prof[action]
        check_eq(pn, n, "calls of %r (profwrap vs SimpleProfiler)" % action + ctx)
        # Each NVTX range lies inside SimpleProfiler's interval: 20 us a call and 1 % for the clocks.
        check(pt <= t * 1.01 + 20e-6 * n, "profwrap's total for %r is %.6f s, SimpleProfiler's %.6f s (over %d "
              "calls): the NVTX range should lie inside SimpleProfiler's interval%s", action, pt, t, n, ctx)
    for action in ("run_training_batch", "[LightningModule]LitMLP.optimizer_step",
                   "[Strategy]SingleDeviceStrategy.training_step", "[Strategy]SingleDeviceStrategy.backward"):
        check_eq(simple.get(action, (0,))[0], c["steps"], "SimpleProfiler's calls of %s" % action)
    # PyTorchProfiler names each occurrence "[pl][profile]ACTION, op_id = N": one row per action, unfolded.
    numbered = [x["name"] for x in ranges(rep) if "op_id = " in x["name"] or "seq = " in x["name"]]
    check_eq(numbered, [], "ranges rows that keep PyTorch's occurrence numbers" + ctx)
    for action, n in (("run_training_batch", c["steps"]), ("run_training_epoch", LIGHTNING_EPOCHS)):
        rows = [(x["count"], x["folded"]) for x in ranges(rep) if x["name"] == "[pl][profile]" + action]
        check_eq(rows, [(n, 0)], "the [pl][profile]%s rows (count, folded)" % action + ctx)
    # emit_nvtx's autograd ranges and PyTorchProfiler's module ranges are there too.
    linear = sum(x["count"] for x in ranges(rep)
                 if x["name"] == "aten::linear" or x["name"].startswith("aten::linear,"))
    check_eq(linear, 3 * c["steps"], "count of aten::linear ranges (3 Linear layers a step)")
    model = sum(x["count"] for x in ranges(rep) if x["name"].startswith("[pl][module]train.MLP: model"))
    check_eq(model, c["steps"], "count of [pl][module]train.MLP ranges")
    pids = set(p["pid"] for p in rep["processes"])
    first = [p["pid"] for p in rep["processes"] if p["ppid"] not in pids]
    workers = [p for p in rep["processes"] if p["ppid"] in first and p["how"] == "exited"]
    note("\nrank0.txt, lightning_train.py:\n" + phases_section("OUT-lightning", 30))
    note("lightning_train.py's processes: %d (%d exited children of the first)" % (len(rep["processes"]), len(workers)))
    note("SimpleProfiler's own table: %s" % os.path.abspath(c["simple_txt"]))


def py_actions(rep):
    """{action: (calls, total s)} of the "py" ranges, wherever they nest."""
    got = {}
    for x in ranges(rep):
        if x["domain"] == "py":
            n, t = got.get(x["name"], (0, 0.0))
            got[x["name"]] = (n + x["count"], t + x["total_ns"] / 1e9)
    return got


def test_lightning_functions(py):
    """--python-functions=lightning on lightning_train.py with SimpleProfiler alone (the same run's
    simple.json is the reference), then with no profiler at all (an unmodified script: Lightning's
    PassThroughProfiler), under profwrap with and without the option."""
    script = os.path.join(E2E, "lightning_train.py")
    base = [py, script, "--epochs", str(LIGHTNING_EPOCHS)]
    r, rep = timed("lightning_train.py --profiler simple", base + ["--profiler", "simple", "--out",
                   os.path.abspath("lightning-fn")], "OUT-lightning-fn", ["--python-functions=lightning"])
    durations = load_json(os.path.join("lightning-fn", "simple.json"))
    simple = {a: (len(ds), sum(ds)) for a, ds in durations.items()}
    prof = py_actions(rep)
    table = side_by_side(simple, prof)
    note("\nLightning's actions: SimpleProfiler and profwrap --python-functions=lightning (a py range from the "
         "call of SimpleProfiler.start to that of its stop), one run:\n" + table)
    ctx = "\n" + table
    check_eq(sorted(prof), sorted(simple), "the actions (py ranges vs SimpleProfiler's)" + ctx)
    for action, (n, t) in simple.items():
        check_eq(prof[action][0], n, "calls of %r (profwrap vs SimpleProfiler)" % action + ctx)
    for action, (n, t) in sorted(simple.items(), key=lambda kv: -kv[1][1])[:5]:
        check_range(prof[action][1], t * 0.9, t * 1.1, "profwrap's total for %r (SimpleProfiler's %.6f s)" % (
            action, t) + ctx)
    epoch = [x for x in ranges(rep) if x["domain"] == "py" and x["name"] == "run_training_epoch"]
    check_eq([(x["count"], x["parent"]) for x in epoch], [(LIGHTNING_EPOCHS, None)],
             "the py:run_training_epoch rows (count, parent)" + ctx)

    # An unmodified script: the same actions through PassThroughProfiler, as many calls.
    none = base + ["--profiler", "none"]
    timed("lightning_train.py --profiler none", none + ["--out", os.path.abspath("lightning-none-plain")],
          "OUT-lightning-none-plain")
    plain_fit = load_json(os.path.join("lightning-none-plain", "counters.json"))["fit_s"]
    r, rep = timed("lightning_train.py --profiler none", none + ["--out", os.path.abspath("lightning-none")],
                   "OUT-lightning-none", ["--python-functions=lightning"])
    fit = load_json(os.path.join("lightning-none", "counters.json"))["fit_s"]
    counts = {a: n for a, (n, t) in py_actions(rep).items()}
    check_eq(counts, {a: n for a, (n, t) in simple.items()},
             "calls per action with no profiler (PassThroughProfiler) vs SimpleProfiler's run")
    note("--python-functions=lightning on an unmodified script: %d actions, as SimpleProfiler's; fit %.2f s "
         "(%.2f s under profwrap without the option)" % (len(counts), fit, plain_fit))


def test_pytorch_nvtx(py):
    """--pytorch on an unmodified CPU loop: one row per autograd operator, each counted as torch.profiler
    counts it over the same steps; with shapes, aten::addmm's rows carry its input sizes. The program's output
    is its own (PyTorch warns of a profiler left on: profwrap leaves it at exit)."""
    script = os.path.join(E2E, "autograd_ops.py")
    plain = run([py, script], timeout=RUN_TIMEOUT)
    check_eq(plain.rc, 0, "autograd_ops.py without profwrap\n" + plain.describe())
    ref = run([py, script, "--torch-profiler", os.path.abspath("torch-ops.json")], timeout=RUN_TIMEOUT)
    check_eq(ref.rc, 0, "autograd_ops.py under torch.profiler\n" + ref.describe())
    want = {k: n for k, n in load_json("torch-ops.json").items() if k.startswith("aten::")}
    r, rep = profile([py, script], "OUT-autograd", ["--pytorch=autograd-nvtx"], timeout=RUN_TIMEOUT)
    check_eq((r.out, r.err), (plain.out, plain.err), "autograd_ops.py's output and errors under --pytorch")
    got = {}
    for x in ranges(rep):
        if x["domain"] == "" and x["name"].startswith("aten::"):
            got[x["name"]] = got.get(x["name"], 0) + x["count"]
    check_eq(got, want, "calls per aten operator: profwrap --pytorch=autograd-nvtx vs torch.profiler")
    r, rep = profile([py, script], "OUT-autograd-shapes", ["--pytorch=autograd-shapes-nvtx"], timeout=RUN_TIMEOUT)
    addmm = sorted(x["name"] for x in ranges(rep) if x["name"].startswith("aten::addmm,"))
    check(addmm and all(", sizes = [" in n for n in addmm), "aten::addmm rows with their input sizes: %r", addmm)
    note("--pytorch=autograd-nvtx: %d aten operators, each counted as torch.profiler counts it (%d calls); "
         "with shapes, aten::addmm in %d rows: %s" % (len(want), sum(want.values()), len(addmm), "; ".join(addmm)))


def test_stub_driver(py):
    stub = os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so")
    if not os.path.exists(stub):
        note("no toolkit stub driver at %s: the stub-driver case is not run" % stub)
        return
    os.makedirs("stub", exist_ok=True)
    if not os.path.lexists(os.path.join("stub", "libcuda.so.1")):
        os.symlink(stub, os.path.join("stub", "libcuda.so.1"))
    env = {"LD_LIBRARY_PATH": os.path.abspath("stub")}
    code = "import torch; print(torch.__version__, torch.cuda.is_available())"
    plain = run([py, "-c", code], extra_env=env, timeout=120)
    r, rep = profile([py, "-c", code], "OUT-stub", expect_rc=plain.rc, extra_env=env, timeout=120)
    ctx = "\n" + r.describe()
    check_eq(r.out, plain.out, "import torch's output over a stub driver, under profwrap vs without" + ctx)
    act = rep["gpu_activity"]
    check_eq(act["status"], "driver_unusable", "gpu_activity.status over a stub driver" + ctx)
    check("stub" in (act["not_recorded_why"] or ""), "not_recorded_why %r%s", act["not_recorded_why"], ctx)
    note("import torch over the toolkit's stub driver: exit %d as without profwrap; %s" %
         (r.rc, act["not_recorded_why"]))


def test_cudnn_shim(py):
    script = os.path.join(E2E, "cudnn_calls.py")
    plain = run([py, script], timeout=RUN_TIMEOUT)
    check_eq(plain.rc, 0, "cudnn_calls.py's exit status without profwrap\n" + plain.describe())
    r, rep = profile([py, script], "OUT-cudnn", timeout=RUN_TIMEOUT)
    ctx = "\n" + r.describe()
    check_eq(r.out, plain.out, "cudnn_calls.py's output under profwrap vs without" + ctx)
    c = call(rep, "cudnn", "cudnnBackendExecute")
    check(c is not None and c["count"] == 1 and c["errors"] == 1,
          "cudnnBackendExecute: expected 1 call with 1 error, got %r%s", c, ctx)
    note("cuDNN's libcudnn.so.9 shim through ctypes: %s, as without profwrap; cudnnBackendExecute recorded once"
         % r.out.strip())


def test():
    py, versions = e2e_python()
    note("e2e: %s (torch %s, lightning %s)" % (py, versions[0], versions[1]))
    test_train(py)
    test_capture(py)
    test_lightning(py)
    test_lightning_functions(py)
    test_pytorch_nvtx(py)
    test_stub_driver(py)
    test_cudnn_shim(py)


main(test)
